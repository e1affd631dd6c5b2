"""HIL verdict lines from scenario figures: pass, or FAIL with the reason."""

from sim2real.hil.scenarios import Scenario
from sim2real.hil.verdicts import (
    fault_verdict, hil_verdict, hover_bound, nominal_verdict, walk_bound)

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
    verdict = hil_verdict(dict(good, faults={'drop': _fault(), 'delay': _fault(
        recovered_safe=False, crashed=True)}), SC, hover_bound(SC))
    assert not verdict['passed'] and len(verdict['lines']) == 3
    assert verdict['lines'][2].startswith('FAIL delay (tolerate): crashed')
