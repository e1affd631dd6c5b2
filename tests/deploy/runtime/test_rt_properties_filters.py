"""Property tests of the pure filters: any input, NaN and Inf included, stays within limits.

4,000 generated cases (with the 6,000 of test_rt_properties.py: 10,000 in total).
"""

import math

from hypothesis import given, HealthCheck, settings
from hypothesis import strategies as st
import numpy as np

from sim2real.deploy.runtime import filters

SETTINGS = dict(deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow])
NUM_TORQUE, NUM_THRUST, NUM_ROTOR = 2000, 1000, 1000
WILD = [math.nan, math.inf, -math.inf, 1e300, -1e300]


def floats(lo, hi):
    """Finite floats in [lo, hi]."""
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


WILD_FLOATS = st.one_of(floats(-1e6, 1e6), st.sampled_from(WILD))


@settings(max_examples=NUM_TORQUE, **SETTINGS)
@given(target=floats(-10, 10), q=floats(-3, 3), qd=floats(-50, 50), kp=floats(0, 200),
       kd=floats(0, 10), tau=floats(0, 100), lo=floats(-3, 0), width=floats(0.01, 6))
def test_feasible_joint_target_is_in_the_box_and_feasible_when_possible(
        target, q, qd, kp, kd, tau, lo, width):
    """q* in [lo, lo + width]; |kp(q*-q) - kd qd| <= tau whenever kp > 0 and the box allows."""
    got = filters.feasible_joint_target(target, q, qd, kp, kd, tau, lo, lo + width)
    assert lo <= got <= lo + width
    t_lo, t_hi = filters.torque_bounds(q, qd, kp, kd, tau)
    if kp > 0 and max(t_lo, lo) <= min(t_hi, lo + width):
        assert abs(kp * (got - q) - kd * qd) <= tau * (1 + 1e-9) + 1e-9


@settings(max_examples=NUM_THRUST, **SETTINGS)
@given(command=st.lists(WILD_FLOATS, min_size=4, max_size=4), thrust_max=floats(0.01, 1.0),
       min_fraction=floats(0, 1), max_rate=floats(0.01, 20))
def test_thrust_rate_clamp_never_leaves_its_limits(command, thrust_max, min_fraction, max_rate):
    """Any input, NaN and Inf included: thrust 0 or in [min, max], |rates| <= max, finite."""
    thrust_min = min_fraction * thrust_max
    got = filters.clamp_thrust_rates(np.array(command), thrust_min, thrust_max, max_rate)
    assert np.isfinite(got).all()
    assert got[0] == 0.0 or thrust_min <= got[0] <= thrust_max
    assert np.all(np.abs(got[1:]) <= max_rate)


@settings(max_examples=NUM_ROTOR, **SETTINGS)
@given(speeds=st.lists(WILD_FLOATS, min_size=4, max_size=4), max_speed=floats(1, 3000),
       kf=floats(1e-9, 1e-6), thrust_max=floats(0.01, 1.0))
def test_rotor_speed_clamp_never_leaves_its_limits(speeds, max_speed, kf, thrust_max):
    """Any input: speeds in [0, max], collective kf sum(w^2) <= thrust_max, finite."""
    got = filters.clamp_rotor_speeds(np.array(speeds), max_speed, kf, thrust_max)
    assert np.isfinite(got).all()
    assert np.all((got >= 0.0) & (got <= max_speed))
    assert kf * np.sum(got ** 2) <= thrust_max
