"""`sim2real hil ROBOT --scenario identify`: one identification run instead of the nominal
and fault scenarios.

The robot launches as in every scenario; the operator's commands of its excitation
(``deploy/robots/<robot>/excitation.py``) are sent on schedule while the node (and, with
--record, the flight recorder and the bridge's ground truth) logs what happens. The run
passes when the robot stayed in the policy's hands throughout: no fallback, no fall or crash,
no limit violation; a log with a fallback in it is no identification data.
"""

from __future__ import annotations

import time
from typing import Callable

import numpy as np

from sim2real.deploy.runtime.excitation import Excitation
from sim2real.hil.verdicts import INCONCLUSIVE


def play(excitation: Excitation, send: Callable[[np.ndarray], None]) -> tuple[float, float]:
    """Send each of the excitation's commands at its time from now, then wait out its
    duration; the steady start and end [s]. After a stall only the newest command that is
    due goes out (the older ones are skipped, never sent in a burst to catch up)."""
    t0_s = time.monotonic()
    times_s = excitation.times_s
    index = 0
    while index < len(times_s):
        late_s = time.monotonic() - (t0_s + times_s[index])
        if late_s < 0:
            time.sleep(-late_s)
        due = int(np.searchsorted(times_s, time.monotonic() - t0_s, side='right')) - 1
        index = max(index, due)
        send(excitation.values[index])
        index += 1
    time.sleep(max(0.0, t0_s + excitation.duration_s - time.monotonic()))
    return t0_s, time.monotonic()


def verdict(run: dict, disturbed: bool = False) -> dict:
    """The run's verdict in the shape of the scenarios' (sim2real.hil.verdicts): passed, and
    one scenario 'identify' whose line names what failed: a fallback, a fall or crash,
    limit violations; inconclusive when it failed and the machine stalled the simulated
    robot or withheld CPU time in every attempt (disturbed)."""
    failed = []
    fallbacks = [s for s in run['states_seen'] if not s.startswith('active')]
    if fallbacks:
        failed.append(f'the node left the policy: {", ".join(fallbacks)}')
    if run['fell']:
        failed.append('the robot fell or crashed')
    if run['limit_violations']:
        failed.append(f'{run["limit_violations"]} limit violations')
    inconclusive = bool(failed) and disturbed
    text = '; '.join(failed) if failed else 'no fallback, no fall, no limit violation'
    if inconclusive:
        text = f'{INCONCLUSIVE}a stalled machine disturbed every attempt ({text})'
    line = f'identify (stay in control): {text}'
    return {'passed': not failed, 'inconclusive': inconclusive,
            'scenarios': [{'name': 'identify', 'passed': not failed, 'line': line,
                           'inconclusive': inconclusive}]}
