"""SI thrust / body rates <-> crazyswarm2 cmd_vel_legacy fields, with hand numbers, and the
firmware's thrust maps against their sources (Bitcraze's 2015 table, platform_defaults_cf2.h)."""

import math

import numpy as np
import pytest

from sim2real.deploy.robots.quadrotor.cmd_vel_legacy import (
    COMMAND_MAX, from_cmd_vel_legacy, GRAM_FORCE_N, thrust_map, THRUST_MAPS, to_cmd_vel_legacy)

COMPENSATED = THRUST_MAPS['battery_compensated']
TABLE = THRUST_MAPS['pwm_2015']
HOVER_N = 0.027 * 9.81   # the contract's m g of the 27 g Crazyflie 2.1


def test_field_map_hand_numbers():
    """0.24 N compensated -> 0.24 / 0.48 x 65535 = 32767.5; roll 1 rad/s -> y 57.2958;
    pitch -0.5 -> x -28.6479; yaw < 0."""
    lx, ly, lz, az = to_cmd_vel_legacy(0.24, [1.0, -0.5, 0.25], COMPENSATED)
    assert lz == pytest.approx(32767.5)
    assert ly == pytest.approx(57.29577951)     # roll = linear.y (deg/s)
    assert lx == pytest.approx(-28.64788976)    # crazyswarm2 pitch = -linear.x; firmware -gyro.y
    assert az == pytest.approx(-14.32394488)    # firmware attitudeRate.yaw = -yawrate


def test_inverse_hand_numbers():
    """linear.z 16383.75 (a quarter of 65535) -> 4 x 0.12 / 4 = 0.12 N; (x, y, z_ang) =
    (90, 180, -45) deg/s -> rad/s."""
    thrust_n, rates = from_cmd_vel_legacy(90.0, 180.0, 16383.75, -45.0, COMPENSATED)
    assert thrust_n == pytest.approx(0.12)
    np.testing.assert_allclose(rates, [math.pi, math.pi / 2, math.pi / 4])


@pytest.mark.parametrize('pct, grams', [(50.0, 24.4), (56.25, 28.6), (87.5, 51.9),
                                        (37.5, 17.3), (6.25, 1.6)])
def test_the_2015_map_is_bitcrazes_table(pct, grams):
    """Rows of the 2015 measurement: duty cycle pct of 65535 -> the whole vehicle's grams
    (its last row, 93.75 %, lies past crazyswarm2's 60000)."""
    assert TABLE.to_thrust_n(pct / 100 * 65535) == pytest.approx(grams * GRAM_FORCE_N)


def test_the_compensated_map_is_the_firmwares_per_motor_thrust():
    """Battery-compensated firmware: each motor T / 65535 x 0.12 N, nothing below 0.0128 N
    (T = 7000), 0 below the RPYT dead band of 1000; crazyswarm2's 60000 -> 0.4395 N."""
    assert COMPENSATED.to_thrust_n(65535 / 2) == pytest.approx(4 * 0.06)
    assert COMPENSATED.to_thrust_n(6999.0) == 0.0
    assert COMPENSATED.to_thrust_n(7000.0) == pytest.approx(4 * 0.012817578393224994)
    assert COMPENSATED.max_thrust_n == pytest.approx(4 * 0.12 * 60000 / 65535)
    assert TABLE.to_thrust_n(999.0) == 0.0


@pytest.mark.parametrize('name, command', [('battery_compensated', 36163.0),
                                           ('pwm_2015', 35312.1)])
def test_hover_thrust_maps_to_the_command_and_back(name, command):
    """m g = 0.2649 N -> T = 36163 (0.2649 / 0.48 x 65535) or 35312 (between the 2015 table's
    50 % = 24.4 g and 56.25 % = 28.6 g: 27 g at 53.9 %), and back to m g; the old linear map
    sent 26695 (40.7 %), which by the 2015 table lifts 19.2 g and compensated 19.9 g."""
    legacy = thrust_map(name)
    assert legacy.to_command(HOVER_N) == pytest.approx(command, abs=0.5)
    assert legacy.to_thrust_n(legacy.to_command(HOVER_N)) == pytest.approx(HOVER_N, rel=1e-12)
    assert legacy.to_thrust_n(26695.0) / GRAM_FORCE_N == pytest.approx(
        {'battery_compensated': 19.94, 'pwm_2015': 19.21}[name], abs=0.01)


def test_thrust_is_clipped_to_the_command_range():
    """Thrust above the map's max -> 60000, negative -> 0; linear.z beyond 60000 -> the max."""
    assert to_cmd_vel_legacy(1.0, np.zeros(3), COMPENSATED)[2] == COMMAND_MAX
    assert to_cmd_vel_legacy(-0.1, np.zeros(3), COMPENSATED)[2] == 0.0
    assert from_cmd_vel_legacy(0, 0, 70000.0, 0, TABLE)[0] == pytest.approx(TABLE.max_thrust_n)
    assert from_cmd_vel_legacy(0, 0, -5.0, 0, TABLE)[0] == 0.0


@pytest.mark.parametrize('name', sorted(THRUST_MAPS))
def test_round_trip(name):
    """from(to(T, w)) == (T, w) to 1e-9 for 100 random thrusts above the cut-off and rates."""
    legacy, rng = thrust_map(name), np.random.default_rng(0)
    low = legacy.to_thrust_n(legacy.cutoff_command) + 1e-6
    for _ in range(100):
        thrust_n, rates = rng.uniform(low, legacy.max_thrust_n), rng.uniform(-6, 6, 3)
        back_n, back_rates = from_cmd_vel_legacy(*to_cmd_vel_legacy(thrust_n, rates, legacy),
                                                 legacy)
        assert back_n == pytest.approx(thrust_n, abs=1e-9)
        np.testing.assert_allclose(back_rates, rates, atol=1e-12)


def test_nan_passes_through_for_the_caller_to_reject():
    """A NaN linear.z gives a NaN thrust (not a silently clipped 0 N); an unknown map name
    is refused naming the valid ones."""
    assert math.isnan(from_cmd_vel_legacy(0, 0, math.nan, 0, TABLE)[0])
    with pytest.raises(ValueError, match='battery_compensated'):
        thrust_map('linear')
