"""QuadrupedSim: the training plant behind a motor driver (ROS-free)."""

import numpy as np
import pytest

from sim2real.assets import urdf_path
from sim2real.deploy.robots.quadruped.bridge_sim import JOINT_ORDER, PUBLISHED_ORDER, QuadrupedSim


@pytest.fixture(scope='module')
def sim():
    """One simulated quadruped at 500 Hz with the trained gains (reset by each test)."""
    return QuadrupedSim(urdf_path('quadruped'), 500.0, 25.0, 0.5, damping_kd=1.0,
                        command_timeout_s=0.1)


def _run(sim, t0_s: float, seconds: float, targets=None) -> float:
    """Step for seconds from t0_s, re-sending targets every 20 ms when given; end time."""
    t = t0_s
    for i in range(round(seconds / sim.dt_s)):
        if targets is not None and i % 10 == 0:
            assert sim.set_targets(targets, t)
        t += sim.dt_s
        sim.step(t)
    return t


def test_standing_pd_holds_the_default_pose_before_any_command(sim):
    """After reset and 2 s without commands: upright, base >= 0.24 m, joints within 0.4 rad."""
    sim.reset()
    _run(sim, 0.0, 2.0)
    default = sim.info.default_joint_pos_rad
    assert sim.data.qpos[2] > 0.24
    assert np.abs(sim.joint_pos_rad - default).max() < 0.4
    quat = sim.imu()['quat_wxyz']
    assert abs(quat[0]) > 0.99
    assert not sim.failsafe and not sim.pop_events()


def test_position_targets_move_the_joints(sim):
    """Hip targets +0.3 rad on every leg: the hips follow to within 0.05 rad in 1 s."""
    sim.reset()
    target = sim.info.default_joint_pos_rad + np.tile([0.3, 0.0, 0.0], 4)
    _run(sim, 0.0, 1.0, target)
    hips = [JOINT_ORDER.index(f'{leg}_hip_joint') for leg in ('FL', 'FR', 'RL', 'RR')]
    np.testing.assert_allclose(sim.joint_pos_rad[hips], target[hips], atol=0.05)


def test_watchdog_damps_after_the_command_timeout(sim):
    """Targets stop: after 0.1 s the driver switches to kp 0, kd damping_kd ('watchdog')."""
    sim.reset()
    t = _run(sim, 0.0, 0.2, sim.info.default_joint_pos_rad)
    last_command_s = t - 10 * sim.dt_s   # _run sends every 10th step
    t = _run(sim, t, 0.12)
    events = sim.pop_events()
    assert [e.event for e in events] == ['watchdog']
    assert events[0].monotonic_s - last_command_s == pytest.approx(0.1, abs=2 * sim.dt_s)
    np.testing.assert_allclose(sim.actuator.kp_nm_per_rad, 0.0)
    np.testing.assert_allclose(sim.actuator.kd_nm_s_per_rad, 1.0)
    assert sim.set_targets(sim.info.default_joint_pos_rad, t)
    np.testing.assert_allclose(sim.actuator.kp_nm_per_rad, 25.0)


def test_non_finite_or_missized_commands_are_refused(sim):
    """NaN targets, 11 targets and negative gains are refused and counted."""
    sim.reset()
    before = sim.rejected_commands
    bad = sim.info.default_joint_pos_rad.copy()
    bad[3] = np.nan
    assert not sim.set_targets(bad, 0.0)
    assert not sim.set_targets(np.zeros(11), 0.0)
    assert not sim.set_gains('kp', -np.ones(12))
    assert sim.rejected_commands == before + 2
    assert sim.set_gains('kd', np.full(12, 2.0))
    np.testing.assert_allclose(sim.actuator.kd_nm_s_per_rad, 2.0)


def test_joint_states_are_published_by_name_in_another_order(sim):
    """JointState arrays follow PUBLISHED_ORDER (alphabetical), not the contract order."""
    sim.reset()
    assert PUBLISHED_ORDER != JOINT_ORDER and sorted(PUBLISHED_ORDER) == sorted(JOINT_ORDER)
    values = sim.joint_states()
    index = [JOINT_ORDER.index(n) for n in PUBLISHED_ORDER]
    np.testing.assert_allclose(values['pos_rad'], sim.joint_pos_rad[index])
    assert values['effort_nm'].shape == (12,)


def test_the_quadruped_bridge_accepts_only_faults_of_its_own_streams():
    """frozen_joint_states / nan_imu are valid; frozen_odom names the valid list."""
    from sim2real.deploy.bridge.faults import FaultError
    from sim2real.deploy.bridge.params import fault_names, parse_robot_faults
    assert parse_robot_faults('quadruped', 'frozen_joint_states, nan_imu') == (
        'frozen_joint_states', 'nan_imu')
    assert 'nan_joint_states' not in fault_names('quadrotor')
    with pytest.raises(FaultError, match='frozen_odom.*valid: drop'):
        parse_robot_faults('quadruped', 'frozen_odom')
