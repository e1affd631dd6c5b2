"""Joint PD actuator: hand-computed torques, DC-motor torque-speed envelope, numpy == torch."""

import numpy as np
import pytest
import torch

from sim2real.sim.joint_actuator import JointActuator, JointActuatorCfg, torque_speed_limits

# stall 30 N m, no-load 20 rad/s, effort limit 25 N m
ENVELOPE = {'stall_torque_nm': 30.0, 'no_load_speed_rad_s': 20.0, 'effort_limit_nm': 25.0}


def make(xp=np, dtype=np.float64, num_envs=2, num_joints=3, **overrides):
    """An actuator with kp 20, kd 0.5 and the ENVELOPE unless overridden."""
    params = {'kp_nm_per_rad': 20.0, 'kd_nm_s_per_rad': 0.5, **ENVELOPE, **overrides}
    return JointActuator(JointActuatorCfg(**params), num_envs, num_joints, xp, dtype)


def limits(qd):
    """(lo, hi) of ENVELOPE at speed qd [rad/s], as floats."""
    lo, hi = torque_speed_limits(np.asarray(qd, dtype=np.float64), 30.0, 20.0, 25.0)
    return float(lo), float(hi)


def test_pd_torque_by_hand():
    """kp 20, kd 0.5, target 0.1, q 0, qd 2: tau = 20 * 0.1 - 0.5 * 2 = 1.0 N m."""
    act = make()
    act.target_rad[:] = 0.1
    tau = act.torque(np.zeros((2, 3)), np.full((2, 3), 2.0))
    np.testing.assert_allclose(tau, 1.0, rtol=0, atol=1e-12)


def test_envelope_at_zero_speed():
    """At rest the motor gives min(stall, effort) = 25 N m both ways."""
    assert limits(0.0) == (-25.0, 25.0)


def test_envelope_at_half_no_load_speed_forward():
    """qd = +10: driving 30 * (1 - 0.5) = 15 N m; braking 30 * 1.5 = 45 -> effort 25 N m."""
    assert limits(10.0) == (-25.0, 15.0)


def test_envelope_at_half_no_load_speed_backward():
    """qd = -10: driving (negative) torque -15 N m; braking (positive) torque 25 N m."""
    assert limits(-10.0) == (-15.0, 25.0)


def test_envelope_at_and_beyond_no_load_speed():
    """qd = +-20 rad/s (no-load) and 30: no driving torque left, braking at the effort limit."""
    assert limits(20.0) == (-25.0, 0.0)
    assert limits(-20.0) == (0.0, 25.0)
    assert limits(30.0) == (-25.0, 0.0)


def test_envelope_clips_pd_torque():
    """A 100 N m request at qd 10 gets 15 N m; a -100 N m (braking) request gets -25 N m."""
    act = make(num_envs=2, num_joints=1, kd_nm_s_per_rad=0.0, kp_nm_per_rad=1000.0)
    act.target_rad[0] = 0.1      # 1000 * 0.1 = +100 N m, with the motion
    act.target_rad[1] = -0.1     # -100 N m, against the motion
    tau = act.torque(np.zeros((2, 1)), np.full((2, 1), 10.0))
    np.testing.assert_allclose(tau[:, 0], [15.0, -25.0])


def test_effort_limit_without_envelope():
    """With no torque-speed line the torque is only clipped to +-effort, at any speed."""
    act = make(num_envs=1, num_joints=2, kp_nm_per_rad=1000.0, stall_torque_nm=None,
               no_load_speed_rad_s=None, effort_limit_nm=(25.0, 10.0))
    act.target_rad[:] = 0.1
    tau = act.torque(np.zeros((1, 2)), np.full((1, 2), 50.0))
    np.testing.assert_allclose(tau, [[25.0, 10.0]])


def test_strength_scales_torque_and_envelope():
    """Strength 0.9: 1.0 N m becomes 0.9 N m, the 15 N m envelope at qd 10 becomes 13.5 N m."""
    act = make(num_envs=2, num_joints=1)
    act.strength[1] = 0.9
    act.target_rad[:] = 0.1
    tau = act.torque(np.zeros((2, 1)), np.full((2, 1), 2.0))
    np.testing.assert_allclose(tau[:, 0], [1.0, 0.9])
    act.target_rad[:] = 10.0
    tau = act.torque(np.zeros((2, 1)), np.full((2, 1), 10.0))
    np.testing.assert_allclose(tau[:, 0], [15.0, 13.5])


def test_gain_scales_per_env():
    """kp_scale 1.5 and kd_scale 0.5 on env 1: 30 * 0.1 - 0.25 * 2 = 2.5 N m; env 0 stays 1.0."""
    act = make(num_envs=2, num_joints=1)
    act.kp_scale[1] = 1.5
    act.kd_scale[1] = 0.5
    act.target_rad[:] = 0.1
    tau = act.torque(np.zeros((2, 1)), np.full((2, 1), 2.0))
    np.testing.assert_allclose(tau[:, 0], [1.0, 2.5])


def test_per_joint_gains_and_wrong_length():
    """Per-joint kp (10, 20, 40) at error 0.1 gives (1, 2, 4) N m; 2 values for 3 joints raise."""
    act = make(num_envs=1, num_joints=3, kp_nm_per_rad=(10.0, 20.0, 40.0), kd_nm_s_per_rad=0.0)
    act.target_rad[:] = 0.1
    np.testing.assert_allclose(act.torque(np.zeros((1, 3)), np.zeros((1, 3))), [[1.0, 2.0, 4.0]])
    with pytest.raises(ValueError, match='expected 1 or 3 values'):
        make(num_joints=3, kp_nm_per_rad=(1.0, 2.0))
    with pytest.raises(ValueError, match='or neither'):
        make(no_load_speed_rad_s=None)


def test_reset_sets_targets_of_given_envs_only():
    """reset([1], 0.3) moves env 1's targets to 0.3 rad and leaves env 0 at 0.1."""
    act = make(num_envs=2, num_joints=3)
    act.target_rad[:] = 0.1
    act.reset(np.array([1]), 0.3)
    np.testing.assert_allclose(act.target_rad, [[0.1] * 3, [0.3] * 3])


def test_numpy_and_torch_agree():
    """Random states and randomized gains give identical float64 torques in numpy and torch."""
    rng = np.random.default_rng(0)
    q, qd, target = (rng.uniform(-30, 30, (64, 12)) for _ in range(3))
    scales = [rng.uniform(0.8, 1.2, (64, 12)) for _ in range(3)]
    results = []
    for xp, asarray in ((np, np.asarray), (torch, torch.from_numpy)):
        act = make(xp=xp, dtype=xp.float64, num_envs=64, num_joints=12)
        act.target_rad[:] = asarray(target)
        act.kp_scale[:], act.kd_scale[:], act.strength[:] = (asarray(s) for s in scales)
        results.append(np.asarray(act.torque(asarray(q), asarray(qd))))
    np.testing.assert_array_equal(results[0], results[1])
    assert np.abs(results[0]).max() <= 25.0 * 1.2


def test_torch_shapes_and_dtype():
    """torch float32 actuator: (N, J) float32 torques and (1, J) nominal gains."""
    act = make(xp=torch, dtype=torch.float32, num_envs=5, num_joints=12)
    tau = act.torque(torch.zeros(5, 12), torch.zeros(5, 12))
    assert tau.shape == (5, 12) and tau.dtype == torch.float32
    assert act.kp_nm_per_rad.shape == (1, 12)
    assert act.kp_scale.shape == act.strength.shape == act.target_rad.shape == (5, 12)
