"""HIL verdicts: one readable line per scenario (pass or FAIL and why), from its figures.

The nominal run passes when it flew (or walked) with the node active throughout, within
the scenario's error bound and without a limit violation; a fault run passes when its
outcome is the one its FaultCase expects (``recovered_safe``, sim2real.hil.scenarios). A
robot's HIL profile names the error figure its nominal run is bounded by (NominalBound), and
may add floors on its other figures (sim2real.verdict.Floor, e.g. the hand's rotation at
least 80 % of its eval floor); ``sim2real hil --expect`` adds or replaces floors by metric,
and replaces the robot's error bound when it names the bound's figure.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
from typing import Iterable

from sim2real.hil.host import disturbed, DISTURBED_SHARE, steal_words
from sim2real.hil.scenarios import Scenario
from sim2real.verdict import Floor

INCONCLUSIVE = 'inconclusive: '
"""How a scenario's reasons begin when no attempt could be judged (stall_note)."""
MAX_TICKS = 2
"""Control ticks a latch or watchdog may take once its condition holds."""


@dataclass(frozen=True)
class NominalBound:
    """What the nominal run of a robot is judged on: one error figure of the result."""

    key: str
    """Result key of the error, e.g. 'hover_error_m'."""
    limit: float
    """Largest allowed error."""
    label: str
    """How the line names it, e.g. 'hover error'."""
    unit: str
    """Its unit, e.g. 'm'."""


def stall_note(stalls_ms: list[float], limit_ms: float, failed: bool,
               steal: list[float | None] = ()) -> tuple[str, str]:
    """(reason to fail, note) for the worst simulator stall of each attempt of a scenario
    and the share of CPU time the host withheld in it (steal; runner.unstalled reruns one
    that failed while the simulated robot stalled or the host was disturbed): a reason when
    the last attempt failed so (INCONCLUSIVE), a note when it passed although it stalled,
    or when an earlier attempt was rerun."""
    if not stalls_ms:
        return '', ''
    share = steal[-1] if steal else None
    stalled, stolen = stalls_ms[-1] >= limit_ms, disturbed(share)
    if (stalled or stolen) and failed:
        stall = (f'the simulated robot stalled {stalls_ms[-1]:.0f} ms (>= {limit_ms:.0f} ms, '
                 'half the shortest sensor timeout)' if stalled else
                 f'the simulated robot stalled up to {stalls_ms[-1]:.0f} ms')
        why = (f' and the host withheld {share:.0%} of the CPU time (>= {DISTURBED_SHARE:.0%})'
               if stolen else steal_words(share))
        return f'{INCONCLUSIVE}{stall}{why} in all {len(stalls_ms)} attempts', ''
    notes = []
    if len(stalls_ms) > 1:
        notes.append(f'rerun {len(stalls_ms) - 1}x after the simulated robot stalled '
                     f'{max(stalls_ms[:-1]):.0f} ms')
    if stalled:
        notes.append(f'passed although the simulated robot stalled {stalls_ms[-1]:.0f} ms')
    elif stolen:
        notes.append(f'passed although the host withheld {share:.0%} of the CPU time')
    return '', f' ({"; ".join(notes)})' if notes else ''


def stall_doubt(r: dict) -> str:
    """Why a fault run's pass cannot stand in an attempt the simulated robot stalled in
    ('' when it can). A stall makes a stream stale, so: a tolerated fault 'safe in fallback'
    may owe the fallback to the stall; a latch or watchdog may owe its safe tick to a stall
    inside its judged window (1 s before onset to the safe tick: runner.unstalled)."""
    limit = r.get('stall_limit_ms', math.inf)
    worst = (r.get('simulator_stalls_ms') or [0.0])[-1]
    if worst < limit:
        return ''
    if r['expect'] == 'tolerate':
        return (f'safe in fallback while the simulated robot stalled {worst:.0f} ms (the stall '
                f'can have caused it)') if r.get('fallback') else ''
    inside = r.get('judged_window_stall_ms', worst)
    if inside < limit:
        return ''
    return (f'the simulated robot stalled {inside:.0f} ms between 1 s before onset and the '
            f'safe tick (the stall can have caused it)')


def merge_floors(robot: Iterable[Floor], given: Iterable[Floor]) -> tuple[Floor, ...]:
    """The robot's floors with each given one added, or replacing the robot's on its metric."""
    given = tuple(given)
    mine = {f.metric for f in given}
    return tuple(f for f in robot if f.metric not in mine) + given


def nominal_verdict(result: dict, bound: NominalBound,
                    floors: Iterable[Floor] = ()) -> tuple[bool, str]:
    """The nominal run: active throughout, no fall, error within bound (unless a floor
    judges the bound's figure: `--expect` replaces it), each floor met, no violation."""
    reasons = []
    states = result.get('nominal_states', [])
    if states != ['active']:
        reasons.append(f'node states {states} (expected only active)')
    if result.get('fell'):
        reasons.append('fell')
    error = result.get(bound.key, math.nan)
    what = f'{bound.label} {error:.3f} {bound.unit}'
    bounded = all(f.metric != bound.key for f in floors)
    if bounded and not error <= bound.limit:
        reasons.append(f'{what} > {bound.limit:g}')
    met = [f'{what} <= {bound.limit:g}'] if bounded else []
    for floor in floors:
        if floor.holds(result):
            met.append(floor.describe(result))
        else:
            reasons.append(f'{floor.describe(result)} not met')
    own = result.get('nominal_limit_violations', 0)
    if own:
        reasons.append(f'{own} limit violations')
    stalled, note = stall_note(result.get('nominal_simulator_stalls_ms', []),
                               result.get('stall_limit_ms', math.inf), bool(reasons),
                               result.get('nominal_host_steal_shares', []))
    if stalled:
        reasons.insert(0, stalled)
    if reasons:
        return False, 'FAIL nominal: ' + '; '.join(reasons)
    return True, (f'pass nominal: {", ".join(met)}, active throughout, no limit '
                  f'violation{note}')


def fault_verdict(name: str, r: dict, sc: Scenario) -> tuple[bool, str]:
    """One fault run: what it should cause, and whether it did."""
    expect = r['expect']
    reasons = []
    # a robot that fell back to damping and sank to the floor is safe
    if r.get('crashed') or (r.get('fell') and expect == 'tolerate' and not r.get('fallback')):
        reasons.append('crashed' if r.get('crashed') else 'fell')
    if r['limit_violations']:
        reasons.append(f'{r["limit_violations"]} limit violations')
    if r.get('motors_off_in_air'):
        reasons.append('motors off in the air')
    if expect == 'tolerate':
        err = r.get('max_error_m')
        if err is not None and not err <= sc.tolerate_error_m and not r.get('fallback'):
            reasons.append(f'{err:.2f} m off target > {sc.tolerate_error_m:g} m '
                           f'(tilt up to {r.get("max_tilt_rad", math.nan):.2f} rad)')
        how = 'flown through' if not r.get('fallback') else 'safe in fallback'
        if not r.get('fallback') and r.get('max_error_m') is not None:
            how += f', within {r["max_error_m"]:.2f} m of the target'
    else:
        ticks, most = r['ticks_to_safe'], r.get('max_ticks', MAX_TICKS)
        who = 'fallback' if expect == 'latch' else 'bridge watchdog'
        if ticks < 0:
            reasons.append(f'no {who}')
        elif ticks > most:
            reasons.append(f'{who} after {ticks} ticks > {most}')
        wanted, got = r.get('expected_reasons') or [], r.get('fallback_reason', '')
        if wanted and ticks >= 0 and got not in wanted:
            reasons.append(f'fallback for {got or "?"}, not {" or ".join(wanted)}')
        tilt = r.get('max_tilt_rad')
        if tilt is not None and not tilt < sc.node.get('max_tilt_rad', math.inf):
            reasons.append(f'tilted {tilt:.2f} rad')
        how = f'{who} after {ticks} tick{"" if ticks == 1 else "s"}'
    if r.get('fallback_before_onset'):
        reasons.append(f'in fallback before the fault began ({r.get("fallback_reason", "")})')
    if not r['recovered_safe'] and not reasons:
        reasons.append('not safe (see the JSON: damping not commanded or not level)')
    if not reasons and (why := stall_doubt(r)):
        reasons.append(why)
    stalled, note = stall_note(r.get('simulator_stalls_ms', []),
                               r.get('stall_limit_ms', math.inf), bool(reasons),
                               r.get('host_steal_shares', []))
    if stalled:
        reasons.insert(0, stalled)
    if reasons:
        return False, f'FAIL {name} ({expect}): ' + '; '.join(reasons)
    return True, f'pass {name} ({expect}): {how}{note}'


def hil_verdict(result: dict, sc: Scenario, bound: NominalBound,
                floors: Iterable[Floor] = ()) -> dict:
    """Every scenario's line ('lines'), each scenario's name, pass, line and whether it
    could not be judged ('scenarios'), and the overall verdict: 'passed', or
    'inconclusive' when every scenario that did not pass could not be judged."""
    scenarios = [('nominal', *nominal_verdict(result, bound, floors))]
    scenarios += [(name, *fault_verdict(name, r, sc))
                  for name, r in result.get('faults', {}).items()]
    rows = [{'name': name, 'passed': ok, 'line': line,
             'inconclusive': not ok and line.partition(': ')[2].startswith(INCONCLUSIVE)}
            for name, ok, line in scenarios]
    failed = [row for row in rows if not row['passed']]
    return {'passed': not failed,
            'inconclusive': bool(failed) and all(row['inconclusive'] for row in failed),
            'lines': [line for _, _, line in scenarios],
            'scenarios': rows}
