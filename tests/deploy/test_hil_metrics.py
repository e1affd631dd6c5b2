"""HIL judgement functions on hand-made time series."""

import math

import numpy as np
import pytest

from sim2real.hil import metrics


def test_hover_error_is_the_mean_distance_inside_the_window():
    """Distances 0.1, 0.2 inside [1, 2] and 5.0 outside give a mean of 0.15 m."""
    times = [0.5, 1.0, 2.0]
    pos = [[0, 0, 5.0], [0.1, 0, 0], [0, 0.2, 0]]
    assert math.isclose(metrics.hover_error_m(times, pos, np.zeros(3), 1.0, 2.0), 0.15)
    assert math.isclose(metrics.max_error_m(times, pos, np.zeros(3), 1.0, 2.0), 0.2)


def test_command_violations_count_thrust_rate_and_nan():
    """One over-thrust, one over-rate, one NaN among four commands: 3 violations."""
    thrust = [0.3, 0.6, 0.3, math.nan]
    rates = [[0, 0, 0], [0, 0, 0], [0, 7.0, 0], [0, 0, 0]]
    assert metrics.command_violations(thrust, rates, thrust_max_n=0.55, max_rate_rad_s=6) == 3


def test_geofence_violations_count_points_outside_the_box():
    """Of (0,0,1), (3,0,1), (0,0,-1), only the first lies in [-2,2]x[-2,2]x[0,3]."""
    pos = [[0, 0, 1], [3, 0, 1], [0, 0, -1]]
    assert metrics.geofence_violations(pos, [-2, -2, 0], [2, 2, 3]) == 2


def test_ticks_to_safe_counts_ticks_from_the_condition():
    """Ticks at 10 ms; condition at 25 ms; fallback published at 40 ms is the 2nd tick."""
    times = [0.0, 0.01, 0.02, 0.03, 0.04, 0.05]
    states = ['active'] * 4 + ['fallback:stale:odom'] * 2
    assert metrics.ticks_to_safe(times, states, 0.025) == 2
    assert metrics.ticks_to_safe(times, states, 0.035) == 1
    assert metrics.ticks_to_safe(times, ['active'] * 6, 0.025) is None


def test_ticks_to_safe_is_zero_when_already_in_fallback():
    """A fallback in place before the condition counts 0 ticks."""
    assert metrics.ticks_to_safe([0.0, 0.01], ['fallback:nan:imu'] * 2, 0.005) == 0


def test_ticks_between_rounds_up_to_whole_ticks():
    """Watchdog 4 ms after its condition at 10 ms ticks is within 1 tick; before it, 0."""
    assert metrics.ticks_between(1.0, 1.004, 0.01) == 1
    assert metrics.ticks_between(1.0, 0.99, 0.01) == 0
    assert metrics.ticks_between(1.0, None, 0.01) is None


def test_tilt_of_a_90_degree_roll_is_pi_over_2():
    """A quaternion rolled 90 deg about x is tilted pi/2; identity is level."""
    q = [[1, 0, 0, 0], [math.cos(math.pi / 4), math.sin(math.pi / 4), 0, 0]]
    np.testing.assert_allclose(metrics.tilt_rad(q), [0.0, math.pi / 2], atol=1e-12)


def test_joint_limits_are_judged_in_the_contract_order():
    """The node lists elbow (+-1 rad) before shoulder (+-2.5 rad), commands come in contract
    order (shoulder, elbow): a 2 rad shoulder target is fine, a 2 rad elbow target and a NaN
    are violations; without the contract's order the 2 rad shoulder would be one."""
    from sim2real.hil.joint_runs import limits_in_contract_order, target_violations
    node = {'joint_names': ['elbow', 'shoulder'], 'pos_min_rad': [-1.0, -2.5],
            'pos_max_rad': [1.0, 2.5]}
    low, high = limits_in_contract_order(node, ('shoulder', 'elbow'))
    assert low.tolist() == [-2.5, -1.0] and high.tolist() == [2.5, 1.0]
    commands = [[2.0, 0.5], [0.0, 2.0], [float('nan'), 0.0], [-2.4, -0.9]]
    assert target_violations(commands, low, high) == 2
    as_listed = limits_in_contract_order(node, ())
    assert target_violations(commands, *as_listed) == 3


def test_fallback_facts_name_the_first_fallback_and_whether_it_preceded_the_fault():
    """States at 10 ms ticks, onset at 0.025 s: a fallback at 0.03 s is after onset; one at
    0.02 s before it; the first fallback's reason is kept without its 'fallback:' prefix."""
    times = [0.0, 0.01, 0.02, 0.03, 0.04]
    after = ['active', 'active', 'active', 'fallback:nan:imu', 'fallback:stale:odom']
    assert metrics.fallback_facts(times, after, 0.025) == {
        'fallback_reason': 'nan:imu', 'fallback_before_onset': False}
    before = ['active', 'active', 'fallback:stale:odom', 'fallback:stale:odom', 'x']
    assert metrics.fallback_facts(times, before, 0.025) == {
        'fallback_reason': 'stale:odom', 'fallback_before_onset': True}
    assert metrics.fallback_facts(times, ['active'] * 5, 0.025) == {
        'fallback_reason': '', 'fallback_before_onset': False}


def test_rate_outside_stalls_takes_the_stalled_time_off_the_span():
    """201 ticks at 48 Hz span 4.1667 s; 0.1667 s of stalls leave 4.0 s: 50 Hz. No stall:
    the achieved rate; stalls filling the span: NaN; under two ticks: 0."""
    span_s = 200 / 48.0
    assert metrics.rate_outside_stalls_hz(201, 48.0, span_s - 4.0) == pytest.approx(50.0)
    assert metrics.rate_outside_stalls_hz(201, 48.0, 0.0) == pytest.approx(48.0)
    assert math.isnan(metrics.rate_outside_stalls_hz(201, 48.0, span_s))
    assert metrics.rate_outside_stalls_hz(1, 48.0, 0.0) == 0.0


def test_stall_spans_are_clipped_to_a_window():
    """Stalls of 30 ms ending at 1.00 s and 100 ms ending at 2.05 s: 90 ms of them inside
    [0.99, 2.03] (10 + 80 ms), the worst overlapping [1.5, 1.96] is the 100 ms one, and
    nothing overlaps [1.2, 1.9]."""
    spans = [(0.97, 1.0), (1.95, 2.05)]
    assert metrics.stalled_s(spans, 0.99, 2.03) == pytest.approx(0.09)
    assert metrics.worst_stall_ms(spans, 1.5, 1.96) == pytest.approx(100.0)
    assert metrics.worst_stall_ms(spans) == pytest.approx(100.0)
    assert metrics.worst_stall_ms(spans, 1.2, 1.9) == 0.0
