"""SI thrust / body rates <-> crazyswarm2 cmd_vel_legacy fields, with hand numbers."""

import math

import numpy as np
import pytest

from sim2real.deploy.cmd_vel_legacy import from_cmd_vel_legacy, PWM_MAX, to_cmd_vel_legacy

MAX_N = 0.6   # a round max collective thrust: 0.3 N is half scale, 30000


def test_field_map_hand_numbers():
    """0.3 N of 0.6 N -> 30000; roll 1 rad/s -> y 57.2958; pitch -0.5 -> x -28.6479; yaw < 0."""
    lx, ly, lz, az = to_cmd_vel_legacy(0.3, [1.0, -0.5, 0.25], MAX_N)
    assert lz == pytest.approx(30000.0)
    assert ly == pytest.approx(57.29577951)     # roll = linear.y (deg/s)
    assert lx == pytest.approx(-28.64788976)    # crazyswarm2 pitch = -linear.x; firmware -gyro.y
    assert az == pytest.approx(-14.32394488)    # firmware attitudeRate.yaw = -yawrate


def test_inverse_hand_numbers():
    """linear.z 15000 of 60000 -> 0.15 N; (x, y, z_ang) = (90, 180, -45) deg/s -> rad/s."""
    thrust_n, rates = from_cmd_vel_legacy(90.0, 180.0, 15000.0, -45.0, MAX_N)
    assert thrust_n == pytest.approx(0.15)
    np.testing.assert_allclose(rates, [math.pi, math.pi / 2, math.pi / 4])


def test_thrust_is_clipped_to_pwm_range():
    """Thrust above max -> 60000, negative -> 0; linear.z beyond 60000 -> max thrust (0.6 N)."""
    assert to_cmd_vel_legacy(1.0, np.zeros(3), MAX_N)[2] == PWM_MAX
    assert to_cmd_vel_legacy(-0.1, np.zeros(3), MAX_N)[2] == 0.0
    assert from_cmd_vel_legacy(0, 0, 70000.0, 0, MAX_N)[0] == pytest.approx(0.6)
    assert from_cmd_vel_legacy(0, 0, -5.0, 0, MAX_N)[0] == 0.0


def test_round_trip():
    """from(to(T, w)) == (T, w) to 1e-12 for 100 random thrusts in [0, max] and rates."""
    rng = np.random.default_rng(0)
    for _ in range(100):
        thrust_n, rates = rng.uniform(0, MAX_N), rng.uniform(-6, 6, 3)
        back_n, back_rates = from_cmd_vel_legacy(*to_cmd_vel_legacy(thrust_n, rates, MAX_N),
                                                 MAX_N)
        assert back_n == pytest.approx(thrust_n, abs=1e-12)
        np.testing.assert_allclose(back_rates, rates, atol=1e-12)


def test_nan_passes_through_for_the_caller_to_reject():
    """A NaN linear.z gives a NaN thrust (not a silently clipped 0 N)."""
    assert math.isnan(from_cmd_vel_legacy(0, 0, math.nan, 0, MAX_N)[0])
