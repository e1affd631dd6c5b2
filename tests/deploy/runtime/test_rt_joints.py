"""Joint-robot runtime on a real 3-joint URDF: name matching, safety chain, fallbacks."""

import math

import numpy as np
import pytest

from sim2real.deploy.runtime import Runtime, Sample
from sim2real.deploy.runtime.params import ParamError

# contract order hip, knee, ankle; the parameter file lists ankle, hip, knee
KP, KD, TAU = np.array([20.0, 10.0, 5.0]), np.array([1.0, 0.5, 0.2]), np.array([15.0, 8.0, 2.0])
POS_MIN, POS_MAX = np.array([-1.5, -2.0, -0.8]), np.array([1.5, 0.3, 0.8])
Q = np.array([0.2, -0.5, 0.1])


def joints(t, q=Q, qd=(0.0, 0.0, 0.0), names=None):
    """A joint_state sample at t (contract order unless names given)."""
    values = {'pos_rad': np.array(q), 'vel_rad_s': np.array(qd)}
    if names is not None:
        values['names'] = np.array(names)
    return Sample(values, t, t)


def imu(t, quat=(1.0, 0.0, 0.0, 0.0)):
    """A base imu sample at t."""
    return Sample({'quat_wxyz': np.array(quat), 'ang_vel_b': np.zeros(3)}, t, t)


def feed(runtime, t, **kw):
    """Fresh joint states and imu at t."""
    runtime.put('joint_state', joints(t, **kw))
    runtime.put('imu', imu(t))


@pytest.fixture
def runtime(joint_params_file):
    """A fresh joint runtime (damping fallback)."""
    return Runtime.from_files(None, joint_params_file)


def test_inactive_is_limp_with_gains_in_contract_order(runtime):
    """Disarmed: q* = measured q, kp = kd = 0; 9 values; kind joint_position at 50 Hz."""
    feed(runtime, 0.0)
    result = runtime.step(0.0)
    assert (runtime.command_kind, runtime.rate_hz, result.state) == (
        'joint_position', 50.0, 'inactive')
    np.testing.assert_allclose(result.command, np.concatenate([Q, np.zeros(6)]))


def test_joint_state_is_matched_by_name(runtime):
    """Names (ankle, knee, hip) with q (0.1, -0.5, 0.2): joint_pos_rel = q - q0 = (.1, .3, .1)."""
    runtime.put('joint_state', joints(0.0, q=(0.1, -0.5, 0.2), names=['ankle', 'knee', 'hip']))
    runtime.put('imu', imu(0.0))
    np.testing.assert_allclose(runtime.observation()[0, 9:12], [0.1, 0.3, 0.1], atol=1e-7)
    np.testing.assert_allclose(runtime.observation()[0, 0:3], [0.0, 0.0, -1.0])


def test_soft_start_begins_at_the_measured_pose(runtime):
    """At the enable tick (fraction 0) the targets are the measured q with kp, kd."""
    feed(runtime, 0.0)
    assert runtime.enable(0.0) == (True, '')
    result = runtime.step(0.0)
    assert result.state == 'soft_start'
    np.testing.assert_allclose(result.command, np.concatenate([Q, KP, KD]))


def test_active_targets_are_within_limits_and_torque_feasible(runtime):
    """Over 10 ticks at 50 Hz with qd = (3, -2, 1): q* in limits, |kp(q*-q) - kd qd| <= tau."""
    qd = np.array([3.0, -2.0, 1.0])
    feed(runtime, 0.0, qd=qd)
    runtime.enable(0.0)
    for k in range(10):
        feed(runtime, 0.02 * k, qd=qd)
        result = runtime.step(0.02 * k)
        target = result.command[:3]
        assert np.all((POS_MIN <= target) & (target <= POS_MAX))
        assert np.all(np.abs(KP * (target - Q) - KD * qd) <= TAU + 1e-9)
    assert result.state == 'active'


def test_servo_held_torque_limit_leaves_targets_unclamped(joint_params_file):
    """torque_limit_by 'servo' (the drives clip their torque): fed the same states (q far
    from the policy's targets, qd = (3, -2, 1)), the node sends the targets the 'node' mode
    clamps, which ask more than tau somewhere; both keep every target within the position
    limits; any other value is refused naming the parameter."""
    qd = np.array([3.0, -2.0, 1.0])
    q = np.array([1.2, -1.8, -0.7])
    node = Runtime.from_files(None, joint_params_file)
    servo = Runtime.from_files(None, joint_params_file, overrides={'torque_limit_by': 'servo'})
    infeasible = 0
    for runtime in (node, servo):
        feed(runtime, 0.0, q=q, qd=qd)
        runtime.enable(0.0)
    for k in range(1, 16):   # the 0.1 s soft start, then 10 active ticks
        targets = []
        for runtime in (node, servo):
            feed(runtime, 0.02 * k, q=q, qd=qd)
            result = runtime.step(0.02 * k)
            assert result.state == ('soft_start' if k < 5 else 'active')
            targets.append(result.command[:3])
            assert np.all((POS_MIN <= targets[-1]) & (targets[-1] <= POS_MAX))
        assert np.all(np.abs(KP * (targets[0] - q) - KD * qd) <= TAU + 1e-9)
        infeasible += int(np.any(np.abs(KP * (targets[1] - q) - KD * qd) > TAU + 1e-6))
    assert infeasible >= 5
    with pytest.raises(ParamError, match='torque_limit_by'):
        Runtime.from_files(None, joint_params_file, overrides={'torque_limit_by': 'driver'})


def test_joint_velocity_latches_into_damping(runtime):
    """qd = 16 rad/s > 15 on the ankle: joint_velocity; q* = q, kp 0, kd 0.7."""
    feed(runtime, 0.0)
    runtime.enable(0.0)
    feed(runtime, 0.02, qd=(0.0, 0.0, 16.0))
    result = runtime.step(0.02)
    assert (result.state, result.reason) == ('fallback', 'joint_velocity')
    np.testing.assert_allclose(result.command, np.concatenate([Q, np.zeros(3), np.full(3, 0.7)]))


def test_hold_fallback_keeps_the_pose_at_the_latch(joint_params_file):
    """fallback hold, joint states stale at 0.1 s: q* = q at the latch with kp, kd."""
    runtime = Runtime.from_files(None, joint_params_file, overrides={'fallback': 'hold'})
    feed(runtime, 0.0)
    runtime.enable(0.0)
    runtime.put('imu', imu(0.1))
    result = runtime.step(0.1)
    assert (result.state, result.reason) == ('fallback', 'stale:joint_state')
    np.testing.assert_allclose(result.command, np.concatenate([Q, KP, KD]))


def test_hold_fallback_relaxes_to_the_safe_pose_after_hold_s(joint_params_file):
    """hold_s 0.2, relax pose (ankle 0, hip 0, knee -0.2): q* = Q at the latch (t 0.1) and
    until 0.3 s, then it moves at the rate limit (hip 3, knee 3, ankle 4 rad/s at 50 Hz) to
    the relax pose and stays there."""
    runtime = Runtime.from_files(None, joint_params_file, overrides={
        'fallback': 'hold', 'hold_s': 0.2, 'relax_pose_rad': [0.0, 0.0, -0.2]})
    feed(runtime, 0.0)
    runtime.enable(0.0)
    runtime.put('imu', imu(0.1))
    relax = np.array([0.0, -0.2, 0.0])   # contract order hip, knee, ankle
    targets = []
    for k in range(20):
        t = 0.1 + 0.02 * k
        runtime.put('imu', imu(t))
        result = runtime.step(t)
        assert result.state == 'fallback'
        targets.append(result.command[:3])
    targets = np.array(targets)
    np.testing.assert_allclose(targets[:10], np.tile(Q, (10, 1)))   # held for 0.2 s
    steps = np.abs(np.diff(targets, axis=0))
    assert np.all(steps <= np.array([3.0, 3.0, 4.0]) * 0.02 + 1e-12)
    np.testing.assert_allclose(targets[-1], relax)


def test_the_relax_moves_at_its_own_slew_cap(joint_params_file):
    """relax_max_rate_rad_s 0.5 per joint (file order ankle, hip, knee), the active cap
    unchanged: the relax moves every target at most 0.5 rad/s x 0.02 s per tick, so the
    knee's 0.3 rad takes 30 ticks, not the active cap's 5."""
    runtime = Runtime.from_files(None, joint_params_file, overrides={
        'fallback': 'hold', 'hold_s': 0.0, 'relax_pose_rad': [0.0, 0.0, -0.2],
        'relax_max_rate_rad_s': [0.5, 0.5, 0.5]})
    feed(runtime, 0.0)
    runtime.enable(0.0)
    targets = []
    for k in range(40):
        t = 0.1 + 0.02 * k
        runtime.put('imu', imu(t))
        targets.append(runtime.step(t).command[:3])
    steps = np.abs(np.diff(np.array(targets), axis=0))
    assert np.all(steps <= 0.5 * 0.02 + 1e-12)
    knee = np.array(targets)[:, 1]   # -0.5 -> -0.2
    assert knee[28] < -0.2 - 1e-9 and abs(knee[31] + 0.2) < 1e-9


@pytest.mark.parametrize('values, words', [
    ({'relax_pose_rad': [0.0, 0.0]}, 'relax_pose_rad'),
    ({'relax_pose_rad': [0.0, 2.0, 0.0]}, 'relax_pose_rad'),
    ({'hold_s': -1.0}, 'hold_s'),
    ({'fallback': 'damping', 'relax_pose_rad': [0.0, 0.0, 0.0]}, 'only the hold fallback'),
    ({'relax_max_rate_rad_s': [1.0, 1.0]}, 'relax_max_rate_rad_s'),
    ({'relax_max_rate_rad_s': [1.0, 0.0, 1.0]}, 'relax_max_rate_rad_s'),
])
def test_bad_hold_and_relax_parameters_are_refused(joint_params_file, values, words):
    """A relax pose of the wrong length or outside pos_min..pos_max, a negative hold_s, a
    relax pose with the damping fallback, a relax cap of the wrong length or not > 0."""
    from sim2real.deploy.runtime.params import ParamError
    with pytest.raises(ParamError, match=words):
        Runtime.from_files(None, joint_params_file, overrides={'fallback': 'hold', **values})


def test_base_tilt_latches(runtime):
    """A base rolled 0.9 rad (> 0.8) latches 'tilt' on that tick."""
    feed(runtime, 0.0)
    runtime.enable(0.0)
    runtime.put('joint_state', joints(0.02))
    runtime.put('imu', imu(0.02, quat=(math.cos(0.45), math.sin(0.45), 0.0, 0.0)))
    assert runtime.step(0.02).reason == 'tilt'
