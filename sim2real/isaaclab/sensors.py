"""Sensor randomization of our tasks that Isaac Lab 3.0 has no term for: joint-encoder
offsets and the IMU's mounting tilt (the functions run in an Isaac Lab venv).

Event terms (mode 'reset') draw per env into a ``SensorState`` the env holds; the
observation terms read the robot as Isaac Lab's own terms do, then add each env's encoder
offsets or rotate into its tilted IMU frame, as ours do (``encoder_bias`` and ``imu`` of the
quadruped's terms). Envs no event has drawn for read true values.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from sim2real.terms import quat_from_rotvec, quat_to_rotmat, rotate_world_to_body

STATE_ATTR = '_sim2real_sensors'
"""Attribute of the Isaac Lab env that holds its SensorState."""


@dataclass
class SensorState:
    """Per-env sensor errors drawn at resets."""

    encoder_bias_rad: torch.Tensor
    """Offset each joint encoder adds [rad], (N, J) in the articulation's order."""
    imu_rotmat_bi: torch.Tensor
    """The IMU frame in the base frame, (N, 3, 3) (identity: mounted level)."""


def state_of(env) -> SensorState:
    """env's SensorState, made with true sensors on first use."""
    state = getattr(env, STATE_ATTR, None)
    if state is None:
        n, joints = env.num_envs, env.scene['robot'].num_joints
        state = SensorState(torch.zeros(n, joints, device=env.device),
                            torch.eye(3, device=env.device).repeat(n, 1, 1))
        setattr(env, STATE_ATTR, state)
    return state


def randomize_encoder_bias(env, env_ids, bias_rad: float) -> None:
    """Per-joint encoder offset ~ U(-bias, bias) [rad] for env_ids (None: every env)."""
    state = state_of(env)
    ids = slice(None) if env_ids is None else env_ids
    rows = state.encoder_bias_rad[ids]
    state.encoder_bias_rad[ids] = bias_rad * (2.0 * torch.rand_like(rows) - 1.0)


def randomize_imu_mount(env, env_ids, max_tilt_rad: float) -> None:
    """IMU mounting rotation for env_ids: angle ~ U(0, max) about a uniformly random axis."""
    state = state_of(env)
    ids = slice(None) if env_ids is None else env_ids
    count = state.imu_rotmat_bi[ids].shape[0]
    axis = torch.randn(count, 3, device=env.device)
    axis = axis / torch.linalg.vector_norm(axis, dim=1, keepdim=True).clamp(min=1e-9)
    angle = max_tilt_rad * torch.rand(count, 1, device=env.device)
    state.imu_rotmat_bi[ids] = quat_to_rotmat(quat_from_rotvec(axis * angle))


def _robot(env):
    """The env's articulation (our tasks' scenes name it 'robot')."""
    return env.scene['robot']


def as_tensor(value) -> torch.Tensor:
    """A torch tensor of an Isaac Lab data field (3.0 wraps them in ProxyArray)."""
    return value.torch if hasattr(value, 'torch') else value


def joint_pos_rel_measured(env) -> torch.Tensor:
    """Joint positions minus the default pose as the encoders read them (with each env's
    offset) [rad], (N, J) in the articulation's order."""
    data = _robot(env).data
    return (as_tensor(data.joint_pos) - as_tensor(data.default_joint_pos)
            + state_of(env).encoder_bias_rad)


def imu_ang_vel(env) -> torch.Tensor:
    """Base angular velocity in each env's (tilted) IMU frame [rad/s], (N, 3)."""
    return rotate_world_to_body(state_of(env).imu_rotmat_bi,
                                as_tensor(_robot(env).data.root_ang_vel_b))


def imu_projected_gravity(env) -> torch.Tensor:
    """Unit gravity direction in each env's (tilted) IMU frame, (N, 3); (0, 0, -1) level."""
    return rotate_world_to_body(state_of(env).imu_rotmat_bi,
                                as_tensor(_robot(env).data.projected_gravity_b))
