"""Pure safety filters on hand-computed numbers."""

import numpy as np
import pytest

from sim2real.deploy.runtime import filters


def test_nan_guard_rejects_nan_and_inf():
    """Finite arrays pass; one NaN or one Inf anywhere fails."""
    assert filters.all_finite(np.ones(3), [0.0])
    assert not filters.all_finite(np.ones(3), [np.nan])
    assert not filters.all_finite(np.array([1.0, np.inf]))


def test_joint_clamp_and_rate_limit():
    """Clamp (3, -3) to [-1, 2] -> (2, -1); from 0 at 2 rad/s, 0.1 s: (0.5, -1) -> (.2, -.2)."""
    np.testing.assert_allclose(filters.clamp_joint_position(
        np.array([3.0, -3.0]), np.array([-1.0, -1.0]), np.array([2.0, 2.0])), [2.0, -1.0])
    np.testing.assert_allclose(filters.rate_limit(
        np.array([0.5, -1.0]), np.zeros(2), 2.0, 0.1), [0.2, -0.2])


def test_torque_feasibility_bounds_the_pd_torque():
    """kp 10, kd 1, q 0, qd 2, limit 5: q* in [(2-5)/10, (2+5)/10] = [-0.3, 0.7]."""
    got = filters.torque_feasible(np.array([1.0, -1.0, 0.1]), np.zeros(3), np.full(3, 2.0),
                                  np.full(3, 10.0), np.ones(3), np.full(3, 5.0))
    np.testing.assert_allclose(got, [0.7, -0.3, 0.1])
    torque = 10.0 * (got - 0.0) - 1.0 * 2.0
    assert np.all(np.abs(torque) <= 5.0 + 1e-12)


def test_feasible_target_prefers_position_limits():
    """Torque interval [0.9, 1.1] outside the box [-1, 0.5]: the box wins -> 0.5."""
    got = filters.feasible_joint_target(np.array([0.0]), np.array([1.0]), np.array([0.0]),
                                        np.array([10.0]), np.array([0.0]), np.array([1.0]),
                                        np.array([-1.0]), np.array([0.5]))
    assert got[0] == 0.5


def test_soft_start_blend_and_fraction():
    """Halfway (0.1 of 0.2 s) from 0 to 0.3 N gives 0.15 N; no soft start gives 1."""
    fraction = filters.soft_start_fraction(0.1, 0.2)
    assert fraction == pytest.approx(0.5)
    assert filters.soft_start_blend(0.0, 0.3, fraction) == pytest.approx(0.15)
    assert filters.soft_start_fraction(0.0, 0.0) == 1.0


def test_thrust_rate_clamp():
    """(0.7, 8, -9, 1) with [0.1, 0.55] N and 6 rad/s -> (0.55, 6, -6, 1); 0.05 N -> 0.1 N."""
    np.testing.assert_allclose(filters.clamp_thrust_rates(
        np.array([0.7, 8.0, -9.0, 1.0]), 0.1, 0.55, 6.0), [0.55, 6.0, -6.0, 1.0])
    assert filters.clamp_thrust_rates(np.array([0.05, 0, 0, 0]), 0.1, 0.55, 6.0)[0] == 0.1
    np.testing.assert_array_equal(filters.clamp_thrust_rates(
        np.array([np.nan, np.nan, 0, 0]), 0.1, 0.55, 6.0), [0.0, 0.0, 0.0, 0.0])


def test_rotor_speed_clamp_caps_collective_thrust():
    """kf 1e-8, 4 x 2000 rad/s = 0.16 N > 0.1 N: speeds scale by sqrt(0.1/0.16)."""
    got = filters.clamp_rotor_speeds(np.full(4, 2000.0), 2500.0, 1e-8, 0.1)
    np.testing.assert_allclose(got, np.full(4, 2000.0 * np.sqrt(0.1 / 0.16)), rtol=1e-9)
    assert 1e-8 * np.sum(got ** 2) <= 0.1
