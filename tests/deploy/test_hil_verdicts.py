"""HIL verdict lines from scenario figures: pass, or FAIL with the reason."""

import pytest

from sim2real.deploy.robots.quadrotor.hil import bound as hover_bound
from sim2real.deploy.robots.quadruped.hil import bound as walk_bound
from sim2real.hil.scenarios import Scenario
from sim2real.hil.verdicts import fault_verdict, hil_verdict, merge_floors, nominal_verdict
from sim2real.verdict import parse_floor

NODE = {'rate_hz': 100.0, 'max_tilt_rad': 0.8, 'hover_target_m': [0.0, 0.0, 1.0]}
SC = Scenario(node=NODE, bridge={})


def _fault(**kw):
    """A fault result that passes unless kw says otherwise."""
    base = {'recovered_safe': True, 'ticks_to_safe': 0, 'limit_violations': 0,
            'expect': 'tolerate', 'fallback': False, 'max_tilt_rad': 0.1, 'max_error_m': 0.05,
            'crashed': False}
    base.update(kw)
    return base


def test_tolerated_fault_passes_within_bound_and_fails_off_target():
    """0.05 m off: pass; 0.42 m off with 0.40 rad tilt and no fallback: FAIL saying so."""
    ok, line = fault_verdict('drop', _fault(), SC)
    assert ok and line == 'pass drop (tolerate): flown through, within 0.05 m of the target'
    ok, line = fault_verdict('delay', _fault(recovered_safe=False, max_error_m=0.42,
                                             max_tilt_rad=0.4), SC)
    assert not ok
    assert line == 'FAIL delay (tolerate): 0.42 m off target > 0.3 m (tilt up to 0.40 rad)'


def test_latch_fault_needs_its_fallback_within_two_ticks():
    """1 tick: pass; 5 ticks: FAIL; never: FAIL 'no fallback'; violations are named."""
    base = {'expect': 'latch', 'fallback': True}
    assert fault_verdict('nan_odom', _fault(ticks_to_safe=1, **base), SC)[0]
    ok, line = fault_verdict('nan_odom', _fault(recovered_safe=False, ticks_to_safe=5,
                                                **base), SC)
    assert not ok and 'fallback after 5 ticks > 2' in line
    ok, line = fault_verdict('frozen_imu', _fault(recovered_safe=False, ticks_to_safe=-1,
                                                  limit_violations=3, **base), SC)
    assert not ok and 'no fallback' in line and '3 limit violations' in line


def test_nominal_needs_active_flight_within_the_error_bound():
    """Active, 0.04 m: pass; a fallback or 0.2 m: FAIL; the overall verdict follows."""
    good = {'nominal_states': ['active'], 'hover_error_m': 0.04, 'nominal_limit_violations': 0}
    assert nominal_verdict(good, hover_bound(SC))[0]
    ok, line = nominal_verdict(dict(good, nominal_states=['active', 'fallback:tilt']),
                               hover_bound(SC))
    assert not ok and 'fallback:tilt' in line
    ok, line = nominal_verdict(dict(good, hover_error_m=0.2), hover_bound(SC))
    assert not ok and 'hover error 0.200 m > 0.1' in line
    walk = {'nominal_states': ['active'], 'fell': False, 'lin_vel_error_mps': 0.05}
    assert nominal_verdict(walk, walk_bound(SC))[0]
    assert not nominal_verdict(dict(walk, fell=True), walk_bound(SC))[0]
    # a stated quality (--expect on the bound's own figure) judges it instead of the bound
    loose = dict(walk, lin_vel_error_mps=0.19)
    ok, line = nominal_verdict(loose, walk_bound(SC))
    assert not ok and 'velocity error 0.190 m/s > 0.15' in line
    ok, line = nominal_verdict(loose, walk_bound(SC), [parse_floor('lin_vel_error_mps<=0.2')])
    assert ok and line.startswith('pass nominal: lin_vel_error_mps 0.19 <= 0.2, active')
    ok, line = nominal_verdict(loose, walk_bound(SC), [parse_floor('lin_vel_error_mps<=0.18')])
    assert not ok and 'lin_vel_error_mps 0.19 <= 0.18 not met' in line
    assert not nominal_verdict(dict(loose, fell=True), walk_bound(SC),
                               [parse_floor('lin_vel_error_mps<=0.2')])[0]
    verdict = hil_verdict(dict(good, faults={'drop': _fault(), 'delay': _fault(
        recovered_safe=False, crashed=True)}), SC, hover_bound(SC))
    assert not verdict['passed'] and len(verdict['lines']) == 3
    assert verdict['lines'][2].startswith('FAIL delay (tolerate): crashed')


def test_a_stalled_simulator_is_inconclusive_not_a_policy_failure():
    """Seed 2's stall (67.7 ms against a 25 ms limit) in all 3 failed attempts: FAIL naming
    the stall; stalled once then clean: pass, saying it was rerun; a pass in a stalled
    attempt stands and says so; no stall: the usual line."""
    from sim2real.hil.verdicts import stall_note
    stalled = {'nominal_states': ['fallback:stale:odom'], 'hover_error_m': 1.499,
               'nominal_limit_violations': 0, 'nominal_simulator_stalls_ms': [67.7, 60.0, 30.1],
               'stall_limit_ms': 25.0}
    ok, line = nominal_verdict(stalled, hover_bound(SC))
    assert not ok and line.startswith('FAIL nominal: inconclusive: the simulated robot '
                                      'stalled 30 ms (>= 25 ms, half the shortest sensor '
                                      'timeout) in all 3 attempts; node states')
    ok, line = fault_verdict('drop', _fault(simulator_stalls_ms=[67.7, 3.0],
                                            stall_limit_ms=25.0), SC)
    assert ok and line.endswith('of the target (rerun 1x after the simulated robot stalled '
                                '68 ms)')
    ok, line = fault_verdict('drop', _fault(simulator_stalls_ms=[67.7, 41.0],
                                            stall_limit_ms=25.0), SC)
    assert ok and line.endswith('(rerun 1x after the simulated robot stalled 68 ms; passed '
                                'although the simulated robot stalled 41 ms)')
    assert stall_note([0.0], 25.0, False) == ('', '') and stall_note([], 25.0, True) == ('', '')
    assert stall_note([30.0], 25.0, True)[0].startswith('inconclusive')
    assert stall_note([10.0], 25.0, True) == ('', '')   # a failure without a stall is plain
    # the host's share of CPU time withheld in the last attempt, where there is any to speak of
    assert stall_note([30.0, 40.0], 25.0, True, [0.31, 0.04])[0].endswith(
        'timeout) (the host withheld 4% of the CPU time) in all 2 attempts')
    assert stall_note([30.0], 25.0, True, [0.004])[0].endswith('timeout) in all 1 attempts')
    assert stall_note([30.0], 25.0, True, [None])[0].endswith('timeout) in all 1 attempts')
    # 10 % or more withheld: inconclusive however short each stall was (host.DISTURBED_SHARE)
    assert stall_note([46.9, 24.5], 25.0, True, [0.283, 0.237])[0] == (
        'inconclusive: the simulated robot stalled up to 24 ms and the host withheld 24% of '
        'the CPU time (>= 10%) in all 2 attempts')
    assert stall_note([24.5], 25.0, True, [0.09]) == ('', '')
    assert stall_note([24.5], 25.0, False, [0.2]) == (
        '', ' (passed although the host withheld 20% of the CPU time)')


def test_a_verdict_whose_only_failures_could_not_be_judged_is_inconclusive():
    """Nominal passes, one fault fails outright, one stalled in every attempt: FAIL naming
    the first and, apart, the unjudged one (exit 1). Without the outright failure:
    INCONCLUSIVE (exit 3), the others counted as passing; all pass: pass."""
    from sim2real.cli.views import hil_verdict_text
    good = {'nominal_states': ['active'], 'hover_error_m': 0.04, 'nominal_limit_violations': 0}
    unjudged = _fault(expect='latch', fallback=True, ticks_to_safe=-1, recovered_safe=False,
                      simulator_stalls_ms=[80.0, 60.0], stall_limit_ms=25.0)
    crashed = _fault(recovered_safe=False, crashed=True)
    verdict = hil_verdict(dict(good, faults={'nan_imu': unjudged, 'delay': crashed,
                                             'drop': _fault()}), SC, hover_bound(SC))
    assert [s['inconclusive'] for s in verdict['scenarios']] == [False, True, False, False]
    assert not verdict['passed'] and not verdict['inconclusive']
    assert hil_verdict_text(verdict) == (
        'FAIL: 1 of 4 scenarios fail: delay; 1 could not be judged (a stalled machine '
        'disturbed every attempt): nan_imu')
    verdict = hil_verdict(dict(good, faults={'nan_imu': unjudged, 'drop': _fault()}), SC,
                          hover_bound(SC))
    assert not verdict['passed'] and verdict['inconclusive']
    assert hil_verdict_text(verdict) == (
        'INCONCLUSIVE: 1 of 3 scenarios could not be judged (a stalled machine disturbed '
        'every attempt): nan_imu; the other 2 pass')
    verdict = hil_verdict(dict(good, faults={'drop': _fault()}), SC, hover_bound(SC))
    assert verdict['passed'] and not verdict['inconclusive']
    assert hil_verdict_text(verdict) == 'pass: all 2 scenarios pass'


def test_a_rerun_waits_for_a_quiet_spell_of_the_simulated_robot():
    """Stall events (90 ms, limit 25) until 0.3 s after the call: await_quiet returns once
    the last 0.2 s hold none, after about 0.5 s; a robot that keeps stalling is waited for
    only wait_s (0.4 s)."""
    import time

    from sim2real.hil.runner import await_quiet
    t0 = time.monotonic()

    def stalls_until(end_s):
        """stalls_since over a stall ending every 50 ms until end_s after t0."""
        def since(t_s):
            now = time.monotonic()
            ends = [t0 + 0.05 * k for k in range(int(20 * min(now - t0, end_s)) + 1)]
            return [(end - 0.09, end) for end in ends if end >= t_s]
        return since
    waited = await_quiet(stalls_until(0.3), 25.0, quiet_s=0.2, wait_s=5.0)
    assert 0.45 <= waited <= 1.0, waited
    t0 = time.monotonic()
    waited = await_quiet(stalls_until(60.0), 25.0, quiet_s=0.2, wait_s=0.4)
    assert 0.4 <= waited <= 0.6, waited


def test_quiet_waits_stop_when_the_run_has_spent_its_budget():
    """A 0.5 s budget of 0.4 s waits on a robot that keeps stalling: 0.4 s, then 0.1 s,
    then none; unstalled with those waits still makes every attempt (STALL_ATTEMPTS)."""
    import time

    from sim2real.hil.runner import QuietWaits, STALL_ATTEMPTS, unstalled
    stalling = lambda _t0: [(time.monotonic() - 0.1, time.monotonic())]  # noqa: E731
    waits = QuietWaits(budget_s=0.5, each_s=0.4)
    assert [round(waits.wait(stalling, 25.0), 1) for _ in range(3)] == [0.4, 0.1, 0.0]
    runs = []
    out = unstalled(lambda: runs.append(1) or {}, stalling, 25.0, lambda r: False,
                    QuietWaits(budget_s=0.3, each_s=0.2))
    assert len(runs) == STALL_ATTEMPTS and len(out['simulator_stalls_ms']) == STALL_ATTEMPTS


def test_a_stalled_pass_stands_only_where_the_stall_cannot_have_made_it():
    """An attempt that stalled 60 ms (limit 25): a latch whose judged window (1 s before onset
    to the fallback) saw only 10 ms of it passes, noting the stall; one whose window saw the
    60 ms FAILs as inconclusive; a tolerated fault flown through passes; one 'safe in
    fallback' FAILs (the stall can make a stream stale); the same figures without the stall
    pass."""
    stalled = dict(simulator_stalls_ms=[60.0], stall_limit_ms=25.0)
    latch = dict(expect='latch', fallback=True, ticks_to_safe=1, **stalled)
    ok, line = fault_verdict('frozen_imu', _fault(judged_window_stall_ms=10.0, **latch), SC)
    assert ok and line.endswith('(passed although the simulated robot stalled 60 ms)')
    ok, line = fault_verdict('frozen_imu', _fault(judged_window_stall_ms=60.0, **latch), SC)
    assert not ok and line.startswith('FAIL frozen_imu (latch): inconclusive: the simulated '
                                      'robot stalled 60 ms')
    assert 'stalled 60 ms between 1 s before onset and the safe tick' in line
    ok, line = fault_verdict('command_loss', _fault(
        expect='watchdog', judged_window_stall_ms=60.0, **stalled), SC)
    assert not ok and 'between 1 s before onset and the safe tick' in line
    assert fault_verdict('drop', _fault(**stalled), SC)[0]
    ok, line = fault_verdict('drop', _fault(fallback=True, **stalled), SC)
    assert not ok and 'safe in fallback while the simulated robot stalled 60 ms' in line
    assert fault_verdict('drop', _fault(fallback=True), SC)[0]
    assert fault_verdict('frozen_imu', _fault(judged_window_stall_ms=60.0, **dict(
        latch, simulator_stalls_ms=[0.0])), SC)[0]


def test_a_fallback_before_the_fault_fails_the_fault_run():
    """The node in fallback before onset never met the fault: FAIL naming its reason."""
    ok, line = fault_verdict('nan_odom', _fault(
        expect='latch', fallback=True, ticks_to_safe=0, fallback_before_onset=True,
        fallback_reason='stale:imu'), SC)
    assert not ok and line == ('FAIL nan_odom (latch): in fallback before the fault began '
                               '(stale:imu)')


def test_unstalled_reruns_only_failed_attempts_that_stalled():
    """Attempts (worst stall ms, passes; each also stalled 12 ms, 2 ms of it inside the
    rate window): a failed one without a stall is final; a stalled pass is final; stalled
    failures are rerun up to STALL_ATTEMPTS, each attempt's worst stall recorded."""
    from sim2real.hil.runner import STALL_ATTEMPTS, unstalled

    def attempts(plan):
        """unstalled over a plan of (stall_ms, passed) attempts; (result, attempts run)."""
        it = iter(plan)
        now = {}

        def run():
            now['stall'], now['passed'] = next(it)
            return {'passed': now['passed'], 'rate_window_s': (10.0, 20.0)}
        spans = lambda _t0: [(9.99, 10.002), (15.0, 15.0 + 1e-3 * now['stall'])]  # noqa: E731
        out = unstalled(run, spans, 25.0, lambda r: r['passed'])
        return out, len(out['simulator_stalls_ms'])

    out, n = attempts([(5.0, False), (0.0, True)])
    assert n == 1 and not out['passed']
    out, n = attempts([(90.0, True), (0.0, False)])
    assert n == 1 and out['passed'] and out['simulator_stalls_ms'] == [90.0]
    assert out['simulator_stalled_ms'] == 92.0   # inside the rate window: 2 + 90 ms
    out, n = attempts([(90.0, False), (40.0, False), (3.0, False), (0.0, True)])
    assert n == 3 and out['simulator_stalls_ms'] == [90.0, 40.0, 12.0] and not out['passed']
    out, n = attempts([(90.0, False)] * (STALL_ATTEMPTS + 1))
    assert n == STALL_ATTEMPTS and out['stall_limit_ms'] == 25.0
    assert len(out['host_steal_shares']) == STALL_ATTEMPTS
    # a fault run's judged window: the worst stall overlapping it, 0 when none does
    stall = [(15.0, 15.09)]
    for window, inside_ms in (((14.0, 15.01), 90.0), ((15.2, 16.0), 0.0)):
        out = unstalled(lambda w=window: {'judged_window_s': w}, lambda _t0: stall, 25.0,
                        lambda r: True)
        assert out['judged_window_stall_ms'] == inside_ms
        assert out['simulator_stalled_ms'] == 0.0   # no rate window: no credit


def test_the_stall_limit_is_half_the_shortest_sensor_timeout():
    """config/quadrotor.yaml's node: odom and imu 0.05 s, setpoint 0 (off): 25 ms."""
    from pathlib import Path

    from sim2real.hil.runner import load_sections, stall_limit_ms
    node, _ = load_sections(Path(__file__).resolve().parents[2] / 'config' / 'quadrotor.yaml')
    assert node['odom_timeout_s'] == 0.05 and node['setpoint_timeout_s'] == 0.0
    assert stall_limit_ms(node) == 25.0
    assert stall_limit_ms({'rate_hz': 50.0}) == float('inf')


def test_the_delay_fault_takes_its_own_delay_off_the_stall_limit():
    """config/quadruped.yaml's bridge: delay 0.01 s + jitter 0.005 s: a 'delay' run's stall
    limit is 25 - 15 = 10 ms (a 21 ms stall plus the fault's 15 ms ages the data as a 36 ms
    stall would); other faults keep the full limit."""
    from pathlib import Path

    from sim2real.hil.runner import fault_delay_ms, load_sections
    from sim2real.hil.scenarios import FaultCase
    _, bridge = load_sections(Path(__file__).resolve().parents[2] / 'config' / 'quadruped.yaml')
    assert fault_delay_ms(FaultCase('delay', 'tolerate'), bridge) == pytest.approx(15.0)
    assert fault_delay_ms(FaultCase('drop', 'tolerate'), bridge) == 0.0
    assert fault_delay_ms(FaultCase('delay', 'tolerate'), {}) == 0.0


def test_nominal_floors_are_judged_and_given_floors_replace_the_robots():
    """The hand's rotation floor (80 % of its eval floor 4.0: 3.2 rad per 10 s): 5.0 passes
    naming it, 2.0 fails naming it; --expect's floor on the same metric replaces it."""
    from sim2real.deploy.robots.hand.hil import HIL
    from sim2real.tasks import get_task
    floors = HIL.floors(SC)
    eval_floor = next(f for f in get_task('hand-rotate').acceptance['eval']
                      if f.metric == 'rotation_rad_per_10s')
    assert [(f.metric, f.op, f.value) for f in floors] == [
        ('rotation_rad_per_10s', '>=', 0.8 * eval_floor.value)]
    turned = {'nominal_states': ['active'], 'cube_distance_max_m': 0.01,
              'rotation_rad_per_10s': 5.0}
    ok, line = nominal_verdict(turned, HIL.bound(SC), floors)
    assert ok and 'rotation_rad_per_10s 5 >= 3.2' in line
    ok, line = nominal_verdict(dict(turned, rotation_rad_per_10s=2.0), HIL.bound(SC), floors)
    assert not ok and 'rotation_rad_per_10s 2 >= 3.2 not met' in line
    tighter = merge_floors(floors, [parse_floor('rotation_rad_per_10s>=6.4')])
    assert [f.value for f in tighter] == [6.4]
    assert not nominal_verdict(turned, HIL.bound(SC), tighter)[0]
    both = merge_floors(floors, [parse_floor('cube_distance_max_m<=0.005')])
    assert len(both) == 2 and not nominal_verdict(turned, HIL.bound(SC), both)[0]


def test_a_latch_with_several_answers_accepts_each_and_names_them_when_another_comes():
    """A fault answered by either of two latches (the quadruped's push: the runaway or the
    tilt): each passes; a third reason fails naming both wanted ones."""
    from sim2real.hil.scenarios import FaultCase
    case = FaultCase('push', 'latch', 'effect', reasons=('leg_odometry', 'tilt'))
    assert case.accepts('tilt') and case.accepts('leg_odometry')
    assert not case.accepts('stale:imu') and FaultCase('x', 'latch').accepts('stale:imu')
    run = dict(expect='latch', fallback=True, ticks_to_safe=5, max_ticks=30,
               expected_reasons=list(case.reasons))
    assert fault_verdict('push', _fault(**run, fallback_reason='tilt'), SC)[0]
    ok, line = fault_verdict('push', _fault(**dict(run, recovered_safe=False),
                                            fallback_reason='stale:imu'), SC)
    assert not ok and 'fallback for stale:imu, not leg_odometry or tilt' in line


def test_a_failed_attempt_the_host_withheld_a_tenth_of_the_time_from_is_rerun(monkeypatch):
    """No stall over 5 ms, but 20 % of the CPU time withheld (host.DISTURBED_SHARE 10 %): the
    failed attempt is rerun; the next, with 3 % withheld, is final; the shares are kept."""
    from sim2real.hil import host
    from sim2real.hil.runner import unstalled
    shares = iter([0.2, 0.03])
    monkeypatch.setattr(host, 'steal_share', lambda since, now: next(shares))
    out = unstalled(lambda: {'passed': False}, lambda _t0: [(1.0, 1.005)], 25.0,
                    lambda r: r['passed'])
    assert out['simulator_stalls_ms'] == [5.0, 5.0]
    assert out['host_steal_shares'] == [0.2, 0.03]
