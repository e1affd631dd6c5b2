"""Quadrotor runtime: arming, soft start, latches on the very tick, fallback law, final clamp."""

import math

import numpy as np
import pytest
import torch

from sim2real.deploy.runtime import Runtime, Sample
from sim2real.export.onnx_policy import export_onnx

HOVER_N, MASS_KG, MAX_THRUST_N = 0.26487, 0.027, 4 * 0.14883
LEVEL = (1.0, 0.0, 0.0, 0.0)


def odom(t, pos=(0.0, 0.0, 1.5), quat=LEVEL, lin_vel_b=(0.0, 0.0, 0.0),
         ang_vel_b=(0.0, 0.0, 0.0), stamp=None):
    """An odom sample received at t (stamp t unless given)."""
    values = {'pos_w': np.array(pos), 'quat_wxyz': np.array(quat),
              'lin_vel_b': np.array(lin_vel_b), 'ang_vel_b': np.array(ang_vel_b)}
    return Sample(values, t if stamp is None else stamp, t)


def imu(t, ang_vel_b=(0.0, 0.0, 0.0)):
    """An imu sample received and stamped at t."""
    return Sample({'ang_vel_b': np.array(ang_vel_b), 'lin_acc_b': np.array([0, 0, 9.81])}, t, t)


def thrust_n(runtime, a0):
    """The contract's collective thrust [N] of output a0: hover (1 + a0) below 0, up to the
    rotors' full thrust (about 0.5953 N) at +1."""
    params = runtime.contract.action.params
    hover, full = params['hover_thrust_n'], params['max_collective_thrust_n']
    assert hover == pytest.approx(HOVER_N) and full == pytest.approx(MAX_THRUST_N, rel=1e-4)
    return hover * (1 + a0) if a0 <= 0 else hover + a0 * (full - hover)


def feed(runtime, t, **odom_kw):
    """Fresh odom and imu at t."""
    runtime.put('odom', odom(t, **odom_kw))
    runtime.put('imu', imu(t))


@pytest.fixture
def runtime(quad_params_file):
    """A fresh quadrotor runtime with the spec's default parameters."""
    return Runtime.from_files(None, quad_params_file)


def armed(runtime, t=0.0, **odom_kw):
    """runtime fed and enabled at t."""
    feed(runtime, t, **odom_kw)
    assert runtime.enable(t) == (True, '')
    return runtime


def test_inactive_is_motors_off_without_inference(runtime):
    """Disarmed: command (0, 0, 0, 0), state inactive, the policy does not run."""
    feed(runtime, 0.0)
    result = runtime.step(0.0)
    assert (result.state, result.reason, result.inference_s, result.action) == (
        'inactive', '', None, None)
    np.testing.assert_array_equal(result.command, np.zeros(4))


def test_enable_needs_fresh_finite_sensors(runtime):
    """No odom -> stale:odom, saying nothing came since start; odom only -> stale:imu; imu
    too old -> how old against which timeout; a NaN imu pending -> nan:imu."""
    assert runtime.enable(0.0) == (False, 'stale:odom (no odom message yet, 0.0 s after '
                                          'start; DDS discovery can take seconds: wait and '
                                          'retry)')
    runtime.put('odom', odom(3.1))
    assert runtime.enable(3.1) == (False, 'stale:imu (no imu message yet, 3.1 s after start; '
                                          'DDS discovery can take seconds: wait and retry)')
    runtime.put('imu', Sample({'ang_vel_b': np.zeros(3)}, 3.0, 3.0))
    assert runtime.enable(3.1) == (False, 'stale:imu (last imu message 0.1 s ago, '
                                          'imu_timeout_s 0.05 s)')
    runtime.put('imu', Sample({'ang_vel_b': np.array([np.nan, 0, 0])}, 0.0, 0.0))
    assert runtime.enable(0.0) == (False, 'nan:imu')
    assert runtime.state == 'inactive'


def test_soft_start_blends_thrust_then_goes_active(runtime):
    """Halfway through the 0.2 s soft start thrust is 0.5 x the policy's; active at 0.2 s."""
    armed(runtime)
    feed(runtime, 0.1)
    half = runtime.step(0.1)
    a = np.clip(half.action, -1.0, 1.0)
    assert half.state == 'soft_start'
    assert half.command[0] == pytest.approx(0.5 * thrust_n(runtime, a[0]))
    np.testing.assert_allclose(half.command[1:], 6.0 * a[1:])
    feed(runtime, 0.2)
    full = runtime.step(0.2)
    assert full.state == 'active'
    assert full.command[0] == pytest.approx(thrust_n(runtime, np.clip(full.action[0], -1, 1)))
    assert full.inference_s > 0.0


def test_stale_odom_latches_on_the_first_late_tick(runtime):
    """Odom at 0 s, timeout 0.05 s: armed at 0.05 s, fallback stale:odom at 0.0501 s."""
    armed(runtime)
    runtime.put('imu', imu(0.05))
    assert runtime.step(0.05).state == 'soft_start'
    runtime.put('imu', imu(0.0501))
    result = runtime.step(0.0501)
    assert (result.state, result.reason) == ('fallback', 'stale:odom')
    # blind descent: 0.9 x hover thrust, zero rates
    np.testing.assert_allclose(result.command, [0.9 * HOVER_N, 0.0, 0.0, 0.0])


def test_repeated_stamp_is_not_new_data(runtime):
    """Odom re-sent at 0.04 s with the 0 s stamp does not refresh the watchdog: stale at 0.06."""
    armed(runtime)
    runtime.put('odom', odom(0.04, stamp=0.0))
    runtime.put('imu', imu(0.06))
    assert runtime.step(0.06).reason == 'stale:odom'


def test_nan_sample_latches_the_same_tick_and_levels(runtime):
    """A NaN imu sample -> nan:imu that tick; level, vz 0: thrust 0.027(9.81 - 2 x 0.4) N."""
    armed(runtime)
    feed(runtime, 0.01)
    runtime.put('imu', Sample({'ang_vel_b': np.array([0, np.inf, 0])}, 0.02, 0.01))
    result = runtime.step(0.01)
    assert (result.state, result.reason) == ('fallback', 'nan:imu')
    np.testing.assert_allclose(result.command, [MASS_KG * (9.81 - 0.8), 0.0, 0.0, 0.0])


def test_tilt_latches_and_fallback_rates_level_the_body(runtime):
    """Roll 1.1 rad > 1.0: roll rate 4 x (-sin 1.1) = -3.565 rad/s, thrust 0.027 x 9.01 / 0.5
    = 0.487 N clamped to thrust_max_n 0.43 N."""
    armed(runtime)
    half = 1.1 / 2
    feed(runtime, 0.01, quat=(math.cos(half), math.sin(half), 0.0, 0.0))
    result = runtime.step(0.01)
    assert (result.state, result.reason) == ('fallback', 'tilt')
    np.testing.assert_allclose(
        result.command, [0.43, -4.0 * math.sin(1.1), 0.0, 0.0], atol=1e-12)


def test_geofence_latches_and_descends(runtime):
    """x = 2.5 m outside [-2, 2]: geofence; climbing at 0.1 m/s -> 0.027(9.81 + 2(-0.5)) N."""
    armed(runtime)
    feed(runtime, 0.01, pos=(2.5, 0.0, 1.5), lin_vel_b=(0.0, 0.0, 0.1))
    result = runtime.step(0.01)
    assert (result.state, result.reason) == ('fallback', 'geofence')
    assert result.command[0] == pytest.approx(MASS_KG * (9.81 - 1.0))


def test_fallback_below_ground_height_is_motors_off(runtime):
    """Estop at z = 0.03 m (< 0.05 m ground height): the third fallback tick with fresh odom
    below ground switches the motors off (thrust 0, rates 0), reason estop; a single low
    sample in the air does not (see test_rt_adversarial)."""
    armed(runtime, pos=(0.0, 0.0, 0.03))
    runtime.estop(0.005)
    for k, t in enumerate((0.01, 0.02, 0.03)):
        feed(runtime, t, pos=(0.0, 0.0, 0.03))
        result = runtime.step(t)
        assert (result.state, result.reason) == ('fallback', 'estop')
        assert (result.command[0] > 0.0) == (k < 2)
    np.testing.assert_array_equal(result.command, np.zeros(4))


def test_blind_descent_cuts_motors_after_max_descent(runtime):
    """Stale from 0.0625 s: 0.9 hover thrust up to 8.0625 s (8 s), off after, even when fresh."""
    armed(runtime)
    assert runtime.step(0.0625).reason == 'stale:odom'
    assert runtime.step(8.0625).command[0] == pytest.approx(0.9 * HOVER_N)
    assert runtime.step(8.07).command[0] == 0.0
    feed(runtime, 8.08)
    np.testing.assert_array_equal(runtime.step(8.08).command, np.zeros(4))


def test_fallback_is_latched_until_enable(runtime):
    """Fresh odom after stale:odom keeps the fallback; enable() re-arms into soft_start."""
    armed(runtime)
    runtime.step(0.1)
    feed(runtime, 0.2)
    assert (runtime.step(0.2).state, runtime.step(0.2).reason) == ('fallback', 'stale:odom')
    assert runtime.enable(0.2) == (True, '')
    assert runtime.step(0.21).state == 'soft_start'


def test_estop_latches_and_disable_returns_to_inactive(runtime):
    """estop() -> fallback 'estop' at the next tick; disable() -> inactive, motors off."""
    armed(runtime)
    runtime.estop(0.0)
    feed(runtime, 0.01)
    assert runtime.step(0.01).reason == 'estop'
    runtime.disable(0.02)
    result = runtime.step(0.02)
    assert (result.state, result.reason) == ('inactive', '')
    np.testing.assert_array_equal(result.command, np.zeros(4))


def test_nan_policy_output_latches(deploy_dir, quad_contract, quad_params_file):
    """A graph with a NaN bias gives nan:action on the first armed tick, motors level."""
    policy = torch.nn.Linear(quad_contract.observation_size, 4)
    with torch.no_grad():
        policy.bias[2] = float('nan')
    path = export_onnx(policy, quad_contract, deploy_dir / 'nan.onnx')
    runtime = armed(Runtime.from_files(path, quad_params_file))
    result = runtime.step(0.0)
    assert (result.state, result.reason) == ('fallback', 'nan:action')
    assert np.isnan(result.action[2]) and np.isfinite(result.command).all()


def test_setpoint_stream_required_when_timeout_positive(quad_params_file):
    """setpoint_timeout_s 0.1: enable refused without one; obs[0:3] = setpoint - pos."""
    runtime = Runtime.from_files(None, quad_params_file, overrides={'setpoint_timeout_s': 0.1})
    feed(runtime, 0.0)
    assert runtime.enable(0.0)[1].startswith('stale:setpoint (no setpoint message yet')
    runtime.put('setpoint', Sample({'pos_w': np.array([0.5, -0.25, 2.0])}, 0.0, 0.0))
    assert runtime.enable(0.0) == (True, '')
    np.testing.assert_allclose(runtime.observation()[0, :3], [0.5, -0.25, 0.5])


def test_ang_vel_comes_from_the_fresher_stream(runtime):
    """Gyro (4, 5, 6) received after odom (1, 2, 3) is used, scaled 0.25; then odom's again
    (the current tick's rates at 21:24, after 3 ticks of velocity)."""
    runtime.put('odom', odom(0.0, ang_vel_b=(1.0, 2.0, 3.0)))
    runtime.put('imu', imu(0.001, ang_vel_b=(4.0, 5.0, 6.0)))
    np.testing.assert_allclose(runtime.observation(0.001)[0, 21:24], [1.0, 1.25, 1.5])
    runtime.put('odom', odom(0.002, ang_vel_b=(1.0, 2.0, 3.0)))
    np.testing.assert_allclose(runtime.observation(0.002)[0, 21:24], [0.25, 0.5, 0.75])


def test_rotor_speeds_soft_start_scales_collective_thrust(
        quad_policy, quad_contract, quad_params_file, contract_variant):
    """rotor_speeds at a quarter of the soft start: speeds x sqrt(0.25), thrust <= 0.55 N."""
    def to_rotor_speeds(raw):
        raw['action'].update(kind='rotor_speeds', params={
            'min_speed_rad_s': 0.0, 'max_speed_rad_s': 2272.6281256068564})
    path = contract_variant(quad_policy, quad_contract, to_rotor_speeds)
    runtime = armed(Runtime.from_files(path, quad_params_file,
                                       overrides={'command_interface': 'rotor_speeds'}))
    feed(runtime, 0.05)
    result = runtime.step(0.05)
    a = np.clip(result.action, -1.0, 1.0)
    np.testing.assert_allclose(result.command, 0.5 * (a + 1) / 2 * 2272.6281256068564)
    kf = quad_contract.robot_params['rotors']['thrust_coefficient']
    assert kf * np.sum(result.command ** 2) <= 0.55


def test_observation_history_advances_on_ticks_and_restarts_at_enable(quad_params_file):
    """ang_vel_b's 4 ticks of history (roll rates at 21:33:3): the ticks' gyro readings newest
    first (a peek between ticks adds nothing); after a latch, enable restarts it with the
    current one."""
    runtime = Runtime.from_files(None, quad_params_file)

    def gyro(t, roll_rate):
        runtime.put('odom', odom(t, ang_vel_b=(roll_rate, 0.0, 0.0)))
        runtime.put('imu', imu(t, ang_vel_b=(roll_rate, 0.0, 0.0)))
    gyro(0.0, 4.0)
    assert runtime.enable(0.0) == (True, '')
    for k, t in enumerate((0.0, 0.01, 0.02)):
        gyro(t, 4.0 * (k + 1))
        assert runtime.step(t).state == 'soft_start'
    gyro(0.03, 16.0)
    peek = runtime.observation(0.03)[0, 21:33:3]
    np.testing.assert_allclose(peek, [4.0, 3.0, 2.0, 1.0])         # x 0.25, newest first
    np.testing.assert_allclose(runtime.observation(0.03)[0, 21:33:3], peek)
    runtime.estop(0.03)
    runtime.step(0.03)
    gyro(0.04, -8.0)
    assert runtime.enable(0.04) == (True, '')
    runtime.step(0.04)
    np.testing.assert_allclose(runtime.observation(0.04)[0, 21:33:3], [-2.0] * 4)


@pytest.mark.parametrize('values, expected', [
    ([0.5, -2.0, 1.0], 2.0), ([], 0.0), ([float('nan'), 3.0], float('nan')),
    ([3.0, float('nan')], float('nan')), ([-float('inf'), 1.0], float('inf'))])
def test_max_abs_is_np_max_of_abs_including_nan_in_any_place(values, expected):
    """The latch checks' scalar max |x|: as np.max(np.abs(x)), a NaN anywhere gives NaN
    (Python's max would keep or drop it by its place), and 0 for nothing."""
    from sim2real.deploy.robots.quadrotor.profile import max_abs
    assert max_abs(values) == pytest.approx(expected, nan_ok=True)
