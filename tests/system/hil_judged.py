"""What a HIL system test takes from `sim2real hil`: a pass, or a verdict whose only
non-passing scenarios could not be judged because a stalled machine disturbed every
attempt (a host withholding CPU time: exit status 3, INCONCLUSIVE), never a failed one.
Scenarios that could not be judged are named in a warning and left out of the checks on
outcomes; a test whose subject could not be judged is skipped, saying why."""

from __future__ import annotations

import subprocess
import warnings

import pytest

from sim2real.verdict import EXIT_INCONCLUSIVE


def assert_judged(proc: subprocess.CompletedProcess) -> None:
    """A finished `sim2real hil` (or run_hil in a process, which exits 0) passed, or could
    not judge some scenarios but failed none."""
    last = (proc.stderr.strip().splitlines() or [''])[-1]
    if proc.returncode == EXIT_INCONCLUSIVE and ': INCONCLUSIVE: ' in last:
        warnings.warn(last)
        return
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]


def unjudged(result: dict) -> set[str]:
    """The scenarios a HIL result could not judge, named in a warning."""
    names = {s['name'] for s in result['verdict']['scenarios'] if s.get('inconclusive')}
    if names:
        warnings.warn(f'HIL could not judge {sorted(names)}: a stalled machine disturbed '
                      'every attempt')
    return names


def judged_faults(result: dict) -> dict:
    """result['faults'] without those it could not judge."""
    skip = unjudged(result)
    return {name: outcome for name, outcome in result['faults'].items() if name not in skip}


def skip_unless_judged(result: dict, *names: str) -> None:
    """Skip the test when HIL could not judge any of names ('nominal' or faults)."""
    missing = unjudged(result) & set(names)
    if missing:
        pytest.skip(f'HIL could not judge {sorted(missing)}: a stalled machine disturbed '
                    'every attempt')
