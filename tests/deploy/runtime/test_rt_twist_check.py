"""The odometry twist against the motion of its position (twist_check.py): hand numbers,
and the shipped hover policy's runtime fed a vehicle that moves at a yaw of 90 degrees."""

import math

import numpy as np
import pytest

from sim2real.deploy.robots.quadrotor.ros_io import twist_world_to_body
from sim2real.deploy.robots.quadrotor.twist_check import TwistCheck, twist_residual_m
from sim2real.deploy.runtime.sensors import rotmat_from_quat
from sim2real.deploy.runtime import Runtime, Sample
from tests.deploy.runtime.test_rt_adversarial import ROOT

YAW_90 = np.array([math.cos(math.pi / 4), 0.0, 0.0, math.sin(math.pi / 4)])
"""Body x along world y."""


def test_residual_hand_numbers():
    """Moving 1 m/s along x for 0.2 s: a twist of (1, 0, 0) explains it (0 m); a twist of 0
    leaves 0.2 m; (0, 1, 0) leaves |(0.2, -0.2)| = 0.283 m; a 1 m jump adds 1 m."""
    t = np.linspace(0.0, 0.2, 21)
    pos = np.stack([t, np.zeros_like(t), np.ones_like(t)], axis=1)
    ones = np.tile([1.0, 0.0, 0.0], (21, 1))
    assert twist_residual_m(t, pos, ones) == pytest.approx(0.0, abs=1e-12)
    assert twist_residual_m(t, pos, np.zeros((21, 3))) == pytest.approx(0.2)
    assert twist_residual_m(t, pos, np.roll(ones, 1, axis=1)) == pytest.approx(math.hypot(.2, .2))
    pos[-1, 2] += 1.0
    assert twist_residual_m(t, pos, ones) == pytest.approx(1.0)


def test_the_running_window_matches_the_window_summed_afresh():
    """3000 samples at 500 Hz of a tumbling, accelerating vehicle with position noise and
    uneven stamps: after each, the check's residuals in both readings equal
    twist_residual_m over exactly the samples of its 0.2 s window (to 1e-12 m), across the
    periodic re-summing and a restart of the stamps."""
    rng = np.random.default_rng(3)
    check = TwistCheck(0.2, 0.03)
    stamps = np.cumsum(rng.uniform(0.001, 0.003, 3000))
    stamps[2000:] -= stamps[2000] - 0.5   # the source restarts its clock
    window = []
    for i, t in enumerate(stamps):
        quat = rng.normal(size=4)
        quat /= np.linalg.norm(quat)
        vel_b = rng.normal(size=3)
        pos_w = rng.normal(size=3) * 0.01 + np.array([t, 0.5 * t * t, 1.0])
        check.observe(Sample({'pos_w': pos_w, 'quat_wxyz': quat, 'lin_vel_b': vel_b}, t, t))
        rotmat = rotmat_from_quat(quat)
        window = [w for w in window if t > w[0] and t - w[0] <= 0.2] + [
            (t, pos_w, rotmat @ vel_b, rotmat.T @ (rotmat @ vel_b))]
        if i in (0, 1999) or window[-1][0] - window[0][0] < 0.1:
            continue
        stamp_s, pos, vel, other = (np.array(c) for c in zip(*window))
        assert check.residual_m == pytest.approx(twist_residual_m(stamp_s, pos, vel),
                                                 abs=1e-12)
        assert check.other_residual_m == pytest.approx(
            twist_residual_m(stamp_s, pos, other), abs=1e-12)


NAV_MSGS = {'odom_twist_frame': 'body', 'odom_angular_velocity': True}
"""A driver that follows nav_msgs: the twist in the body frame, its angular part body rates."""


@pytest.fixture
def quad():
    """The shipped hover policy behind config/quadrotor.yaml (twist window 0.2 s, 3 cm),
    reading its odometry as nav_msgs specifies."""
    return Runtime.from_files(ROOT / 'policies/quadrotor_hover.onnx',
                              ROOT / 'config/quadrotor.yaml', overrides=dict(NAV_MSGS))


def moving(t, world_twist=False, vel_w=(0.5, 0.0, 0.0), since=0.0):
    """Odometry at t of a vehicle at yaw 90 deg moving at vel_w [m/s; world] from (0, 0, 1.5)
    since `since` [s], its twist in the body frame as nav_msgs says (or in the world frame,
    as some drivers publish it)."""
    vel_w = np.asarray(vel_w)
    rotmat = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    return Sample({'pos_w': np.array([0.0, 0.0, 1.5]) + vel_w * max(t - since, 0.0),
                   'quat_wxyz': YAW_90, 'lin_vel_b': vel_w if world_twist else rotmat.T @ vel_w,
                   'ang_vel_b': np.zeros(3)}, t, t)


STILL = (0.0, 0.0, 0.0)


def feed(runtime, t, sample):
    """One odometry and IMU sample at t."""
    runtime.put('odom', sample)
    runtime.put('imu', Sample({'ang_vel_b': np.zeros(3)}, t, t))


def test_a_body_frame_twist_that_fits_flies(quad):
    """0.5 m/s along world x at yaw 90 degrees, the twist in the body frame (0, -0.5, 0):
    enabled, and 0.5 s of ticks stay armed; the residual is ~0."""
    for t in np.arange(0.0, 0.3, 0.01):
        feed(quad, float(t), moving(float(t)))
        quad.step(float(t))
    assert quad.enable(0.3) == (True, '')
    for t in np.arange(0.31, 0.8, 0.01):
        feed(quad, float(t), moving(float(t)))
        assert quad.step(float(t)).state in ('soft_start', 'active')
    assert quad.profile.twist.residual_m < 1e-9


def test_a_world_frame_twist_refuses_the_enable_naming_the_frame(quad):
    """Carried at 0.5 m/s at yaw 90 degrees by a driver that publishes the world-frame
    velocity (0.5, 0, 0) as the twist: the enable is refused, saying a world-frame velocity
    fits and naming the parameter; with odom_twist_frame world, the converted sample fits."""
    for t in np.arange(0.0, 0.3, 0.01):
        feed(quad, float(t), moving(float(t), world_twist=True))
        quad.step(float(t))
    ok, why = quad.enable(0.3)
    assert not ok and why.startswith('odom_twist (') and 'world-frame' in why
    assert 'odom_twist_frame' in why
    converted = Runtime.from_files(ROOT / 'policies/quadrotor_hover.onnx',
                                   ROOT / 'config/quadrotor.yaml')   # world, as crazyswarm2
    for t in np.arange(0.0, 0.3, 0.01):
        sample = moving(float(t), world_twist=True)
        feed(converted, float(t), Sample(twist_world_to_body(sample.values), t, t))
        converted.step(float(t))
    assert converted.enable(0.3) == (True, '')


def test_a_world_frame_twist_in_flight_latches_on_the_tick_it_shows(quad):
    """Hovering still, then moving at 0.5 m/s along world x at yaw 90 degrees with the twist
    in the world frame: the residual grows by |(0.5, 0, 0) - (0, 0.5, 0)| = 0.707 m/s x 10 ms
    per tick and passes 3 cm in the fifth tick of motion; the latch 'odom_twist' comes on
    that tick."""
    for t in np.arange(0.0, 0.3, 0.01):
        feed(quad, float(t), moving(float(t), vel_w=STILL))
        quad.step(float(t))
    assert quad.enable(0.3) == (True, '')
    for t in np.arange(0.31, 0.505, 0.01):
        feed(quad, float(t), moving(float(t), vel_w=STILL))
        quad.step(float(t))
    ticks = []
    for k in range(1, 8):
        t = 0.5 + 0.01 * k
        feed(quad, t, moving(t, world_twist=True, since=0.5))
        result = quad.step(t)
        ticks.append((result.state, result.reason, quad.profile.twist.residual_m))
        if result.state == 'fallback':
            break
    assert ticks[-1][:2] == ('fallback', 'odom_twist')
    assert len(ticks) == 5 and ticks[-2][2] <= 0.03 < ticks[-1][2], ticks


def test_a_position_jump_latches(quad):
    """One sample 1.5 m below the others (a glitch no twist explains) latches 'odom_twist'
    when it arrives; the descent still has its vertical speed (level-and-descend, not blind)."""
    for t in np.arange(0.0, 0.3, 0.01):
        feed(quad, float(t), moving(float(t), vel_w=STILL))
        quad.step(float(t))
    assert quad.enable(0.3) == (True, '')
    glitch = moving(0.31, vel_w=STILL)
    glitch.values['pos_w'][2] = 0.0
    feed(quad, 0.31, glitch)
    result = quad.step(0.31)
    assert (result.state, result.reason) == ('fallback', 'odom_twist')
    assert result.command[0] == pytest.approx(0.027 * (9.81 + 2.0 * -0.4), rel=1e-6)


def rotating(t, odom_rates):
    """Hovering still at 1.5 m, yawing at 2 rad/s by the gyro; the odometry carries
    odom_rates as its angular twist."""
    yaw = 2.0 * t
    quat = np.array([math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)])
    return Sample({'pos_w': np.array([0.0, 0.0, 1.5]), 'quat_wxyz': quat,
                   'lin_vel_b': np.zeros(3), 'ang_vel_b': np.asarray(odom_rates)}, t, t)


@pytest.mark.parametrize('odom_rates, latched', [((0.0, 0.0, 2.0), False),
                                                 ((0.0, 0.0, 0.0), True),
                                                 ((0.0, 0.0, math.degrees(2.0)), True)])
def test_odometry_body_rates_must_be_the_gyros(quad, odom_rates, latched):
    """Yawing at 2 rad/s: odometry body rates equal to the gyro's fly; left at zero (as
    crazyswarm2's C++ server leaves them) or in deg/s (its Python server) differ by more
    than 1 rad/s and latch 'odom_gyro' (the enable is refused naming the parameter)."""
    for t in np.arange(0.0, 0.3, 0.01):
        quad.put('odom', rotating(float(t), odom_rates))
        quad.put('imu', Sample({'ang_vel_b': np.array([0.0, 0.0, 2.0])}, float(t), float(t)))
        quad.step(float(t))
    ok, why = quad.enable(0.3)
    assert ok != latched
    if latched:
        assert why.startswith('odom_gyro (') and 'odom_angular_velocity' in why


def test_without_odometry_rates_the_gyro_alone_is_read(quad_params_file):
    """odom_angular_velocity false: the odometry's zero angular twist is neither compared
    nor observed, even when it is the fresher sample; with imu_timeout_s 0 (no gyro at all)
    the parameters are refused."""
    runtime = Runtime.from_files(ROOT / 'policies/quadrotor_hover.onnx',
                                 ROOT / 'config/quadrotor.yaml',
                                 overrides={'odom_angular_velocity': False,
                                            'odom_twist_frame': 'body'})
    for t in np.arange(0.0, 0.3, 0.01):
        runtime.put('imu', Sample({'ang_vel_b': np.array([0.0, 0.0, 2.0])}, float(t), float(t)))
        runtime.put('odom', rotating(float(t) + 0.001, (0.0, 0.0, 0.0)))
        runtime.step(float(t) + 0.002)
    assert runtime.enable(0.302) == (True, '')
    inputs = runtime.profile.observation_inputs(runtime.store, 0.302)
    np.testing.assert_array_equal(inputs['ang_vel_b'], [0.0, 0.0, 2.0])
    from sim2real.deploy.runtime import ParamError
    with pytest.raises(ParamError, match='odom_angular_velocity'):
        Runtime.from_files(ROOT / 'policies/quadrotor_hover.onnx', ROOT / 'config/quadrotor.yaml',
                           overrides={'odom_angular_velocity': False, 'imu_timeout_s': 0.0})
