"""Quadruped deploy runtime with the real Go2-class contract and config/quadruped.yaml.

Contract mismatch refusals (gains, joint names), JointState matched by name in a shuffled
order, the stand-up soft start, damping fallback and the Pinocchio leg odometry.
"""

import numpy as np
import pytest
from sensor_msgs.msg import JointState

from sim2real.deploy.runtime.parts import LegOdometryPart
from sim2real.contract import ContractError
from sim2real.deploy import ros_msgs
from sim2real.deploy.runtime import Runtime, Sample
from tests.deploy.conftest import tiny_policy

ROOT = __import__('pathlib').Path(__file__).resolve().parents[2]
CONFIG = ROOT / 'config' / 'quadruped.yaml'


@pytest.fixture(scope='module')
def go2_contract():
    """The contract of 'quadruped-flat' (play mode) from a real 2-env env."""
    from sim2real.export.onnx_policy import export_onnx  # noqa: F401 (torch side only)
    from sim2real.mdp.contract import contract_from_env
    from sim2real.mdp.env import RLEnv
    from sim2real.tasks import make_env_cfg
    cfg = make_env_cfg('quadruped-flat', play=True)
    cfg.num_envs, cfg.num_threads = 2, 1
    return contract_from_env(RLEnv(cfg))


@pytest.fixture(scope='module')
def go2_policy(tmp_path_factory, go2_contract):
    """A tiny quadruped ONNX policy carrying the real contract."""
    from sim2real.export.onnx_policy import export_onnx
    policy = tiny_policy(go2_contract.observation_size, go2_contract.action.size, seed=3)
    return export_onnx(policy, go2_contract, tmp_path_factory.mktemp('go2') / 'go2.onnx')


def _runtime(policy, **overrides):
    """Runtime from config/quadruped.yaml with the policy and overrides."""
    return Runtime.from_files(policy, CONFIG, overrides=overrides)


def _feed(runtime, t, q, qd=None):
    """Fresh joint states (contract order), a level imu and a cmd_vel at t."""
    qd = np.zeros(12) if qd is None else qd
    runtime.put('joint_state', Sample({'pos_rad': np.asarray(q), 'vel_rad_s': qd}, t, t))
    runtime.put('imu', Sample({'quat_wxyz': np.array([1.0, 0, 0, 0]),
                               'ang_vel_b': np.zeros(3)}, t, t))
    runtime.put('command', Sample({'velocity_command': np.array([0.5, 0.0, 0.0])}, t, t))


def test_config_file_loads_against_the_real_contract(go2_policy, go2_contract):
    """config/quadruped.yaml passes every check: 50 Hz, 12 joints, trained gains."""
    runtime = _runtime(go2_policy)
    assert runtime.rate_hz == 50.0 and runtime.command_kind == 'joint_position'
    assert runtime.profile.names == list(go2_contract.joint_names)
    assert runtime.profile.part(LegOdometryPart).odometry is not None


@pytest.mark.parametrize('key,index,field', [('kp', 4, 'kp_nm_per_rad'),
                                             ('kd', 11, 'kd_nm_s_per_rad')])
def test_a_gain_that_differs_from_the_trained_one_refuses_naming_the_field(
        go2_policy, key, index, field):
    """kp (or kd) of one joint off by 10 %: ContractError naming action.params.<field>[i]."""
    runtime = _runtime(go2_policy)
    gains = list(getattr(runtime.params, key))
    gains[index] *= 1.1
    with pytest.raises(ContractError, match=rf'action\.params\.{field}\[{index}\]'):
        _runtime(go2_policy, **{key: gains})


def test_a_contract_joint_missing_from_the_parameter_file_refuses(go2_policy):
    """joint_names without RR_calf_joint: ContractError naming joint_names[11]."""
    runtime = _runtime(go2_policy)
    names = list(runtime.params.joint_names)
    names[11] = 'RR_knee_joint'
    with pytest.raises(ContractError, match=r'joint_names\[11\].*RR_calf_joint'):
        _runtime(go2_policy, joint_names=names)


def test_joint_state_message_in_a_shuffled_order_is_matched_by_name(go2_policy, go2_contract):
    """A JointState with reversed names reaches the runtime in contract order; one with a
    joint missing is refused naming that joint (the node and the runtime share one mapping)."""
    runtime = _runtime(go2_policy)
    names = list(go2_contract.joint_names)
    q = np.arange(12) * 0.1
    msg = ros_msgs.make_joint_state(names[::-1], q[::-1], -q[::-1], np.zeros(12), 1.5)
    values, stamp_s = ros_msgs.joint_state_to_values(msg)
    runtime.put('joint_state', Sample(values, stamp_s, 0.0))
    np.testing.assert_allclose(runtime.store.value('joint_state', 'pos_rad'), q)
    np.testing.assert_allclose(runtime.store.value('joint_state', 'vel_rad_s'), -q)
    assert runtime.store.latest('joint_state').stamp_s == 1.5
    partial = JointState(name=names[1:], position=list(q[1:]), velocity=list(q[1:]))
    runtime.put('joint_state', Sample(*ros_msgs.joint_state_to_values(partial), 0.01))
    assert runtime.store.take_problems() == [
        'bad:joint_state (joint "FL_hip_joint" missing from the message)']


def test_imu_without_orientation_gives_a_nan_quaternion():
    """orientation_covariance[0] = -1 (no orientation): quat NaN, refused by the NaN guard."""
    msg = ros_msgs.make_imu({'ang_vel_b': np.zeros(3), 'lin_acc_b': np.zeros(3)}, 0.0)
    assert np.all(np.isnan(ros_msgs.imu_orientation_to_values(msg)[0]['quat_wxyz']))
    msg = ros_msgs.make_imu_with_orientation(
        {'quat_wxyz': np.array([1.0, 0, 0, 0]), 'ang_vel_b': np.zeros(3),
         'lin_acc_b': np.zeros(3)}, 0.0)
    np.testing.assert_allclose(ros_msgs.imu_orientation_to_values(msg)[0]['quat_wxyz'],
                               [1, 0, 0, 0])


def test_stand_up_moves_from_the_measured_pose_to_the_default_pose_then_the_policy(
        go2_policy, go2_contract):
    """Stand-up: halfway target = mean of crouch and default, kd 2.0, zero action history;
    after soft_start_s the policy's targets with the trained kd 0.5."""
    runtime = _runtime(go2_policy)
    default = np.asarray(go2_contract.default_joint_pos_rad)
    crouch = default + np.tile([0.0, 0.4, -0.6], 4)
    _feed(runtime, 0.0, crouch)
    assert runtime.enable(0.0) == (True, '')
    _feed(runtime, 1.0, crouch)
    half = runtime.step(1.0)
    assert half.state == 'soft_start'
    np.testing.assert_allclose(half.command[:12], (crouch + default) / 2, atol=1e-9)
    np.testing.assert_allclose(half.command[24:], 2.0)
    assert not runtime.integrator.history.any()
    _feed(runtime, 2.02, default)
    active = runtime.step(2.02)
    assert active.state == 'active'
    np.testing.assert_allclose(active.command[24:], 0.5)
    assert runtime.integrator.history.any()


def test_a_stale_velocity_command_latches_damping(go2_policy):
    """cmd_vel older than command_timeout_s (0.5 s): fallback stale:command, kp 0, kd 1.0,
    targets at the measured pose."""
    runtime = _runtime(go2_policy)
    q = np.asarray(runtime.contract.default_joint_pos_rad)
    _feed(runtime, 0.0, q)
    runtime.enable(0.0)
    for t in (0.1, 0.2, 0.3, 0.4, 0.5, 0.6):
        runtime.put('joint_state', Sample({'pos_rad': q, 'vel_rad_s': np.zeros(12)}, t, t))
        runtime.put('imu', Sample({'quat_wxyz': np.array([1.0, 0, 0, 0]),
                                   'ang_vel_b': np.zeros(3)}, t, t))
        result = runtime.step(t)
    assert (result.state, result.reason) == ('fallback', 'stale:command')
    np.testing.assert_allclose(result.command[:12], q)
    np.testing.assert_allclose(result.command[12:24], 0.0)
    np.testing.assert_allclose(result.command[24:], 1.0)


def test_leg_odometry_reads_the_stance_feet_and_latches_beyond_its_limit(go2_policy):
    """Standing still: estimate ~0; feet sweeping back at 3 m/s worth of hip-pitch speed
    drives the filtered speed past 2.5 m/s and latches 'leg_odometry'."""
    runtime = _runtime(go2_policy)
    q = np.asarray(runtime.contract.default_joint_pos_rad)
    _feed(runtime, 0.0, q)
    runtime.step(0.0)
    odometry = runtime.profile.part(LegOdometryPart).odometry
    assert np.linalg.norm(odometry.lin_vel_b) < 1e-9
    runtime.enable(0.0)
    qd = np.tile([0.0, 12.0, 0.0], 4)   # thighs swing at 12 rad/s: feet move ~3.5 m/s
    reasons = []
    for i in range(1, 12):
        t = 0.02 * i
        _feed(runtime, t, q, qd)
        reasons.append(runtime.step(t).reason)
    assert odometry.speed_xy_m_s > 2.5
    assert 'leg_odometry' in reasons
