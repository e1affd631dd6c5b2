"""Quadruped reset and randomization events: pure functions of (env, env_ids, **range).

Model fields are drawn relative to their DEFAULT values (captured at first use), so repeated
draws never drift; ``set_const`` follows every mass or centre-of-mass change. Ranges and
modes are set, with their sources, in ``cfg.py``.
"""

from __future__ import annotations

import math

import torch

from sim2real.mdp.events import apply_operation, sample_uniform
from sim2real.mdp.ranges import sample_range


def _field(env, name: str) -> tuple[torch.Tensor, torch.Tensor]:
    """(per-env live values, default values) of a model field."""
    values = env.scene.backend.expand(name)
    store = env.scene.__dict__.setdefault('_field_defaults', {})
    if name not in store:
        store[name] = values.clone()
    return values, store[name]


def _link_ids(env) -> torch.Tensor:
    """Every body except the world and the base: hips, thighs, calves, feet."""
    info = env.scene.info
    return torch.tensor([b for b in range(1, env.scene.model.nbody) if b != info.base_body_id])


# -- physical parameters ----------------------------------------------------------------
def randomize_foot_friction(env, env_ids: torch.Tensor,
                            friction_range: tuple[float, float]) -> None:
    """Sliding friction of all four feet of an env ~ U(range) (absolute; feet win contacts)."""
    values, _ = _field(env, 'geom_friction')
    feet = torch.as_tensor(env.scene.info.foot_geom_ids)
    mu = sample_range(env, env_ids, friction_range, (len(env_ids), 1))
    values[env_ids[:, None], feet[None, :], 0] = mu.to(values.dtype)


def randomize_base_mass(env, env_ids: torch.Tensor, mass_range_kg: tuple[float, float]) -> None:
    """Trunk mass = default + U(range) [kg] (a payload or battery spread)."""
    values, default = _field(env, 'body_mass')
    base = env.scene.info.base_body_id
    sample = sample_range(env, env_ids, mass_range_kg, (len(env_ids),))
    values[env_ids, base] = apply_operation(
        default[env_ids, base], sample, 'add').to(values.dtype)
    env.scene.backend.set_const(env_ids)


def randomize_base_com(env, env_ids: torch.Tensor, offset_m: float) -> None:
    """Trunk centre of mass = default + U(-offset, offset) per axis [m; body frame]."""
    values, default = _field(env, 'body_ipos')
    base = env.scene.info.base_body_id
    sample = sample_uniform(env, -offset_m, offset_m, (len(env_ids), 3))
    values[env_ids, base] = apply_operation(
        default[env_ids, base], sample, 'add').to(values.dtype)
    env.scene.backend.set_const(env_ids)


def randomize_link_masses(env, env_ids: torch.Tensor, scale_range: tuple[float, float]) -> None:
    """Each leg link's mass = default x U(range), drawn per link."""
    values, default = _field(env, 'body_mass')
    links = _link_ids(env)
    rows, cols = env_ids[:, None], links[None, :]
    sample = sample_range(env, env_ids, scale_range, (len(env_ids), len(links)))
    values[rows, cols] = apply_operation(
        default[rows, cols], sample, 'scale').to(values.dtype)
    env.scene.backend.set_const(env_ids)


def randomize_motor_strength(env, env_ids: torch.Tensor,
                             strength_range: tuple[float, float]) -> None:
    """Per-joint motor strength (torque constant) multiplier ~ U(range)."""
    act = env.scene.actuator
    act.strength[env_ids] = sample_range(env, env_ids, strength_range,
                                         (len(env_ids), act.num_joints))


# -- sensors ---------------------------------------------------------------------------
def randomize_imu_mount(env, env_ids: torch.Tensor, max_tilt_rad: float) -> None:
    """IMU mounting rotation: angle ~ U(0, max) about a uniformly random axis."""
    n = len(env_ids)
    axis = torch.randn(n, 3, generator=env.rng, dtype=torch.float64)
    axis = axis / torch.linalg.vector_norm(axis, dim=1, keepdim=True).clamp(min=1e-9)
    angle = sample_uniform(env, 0.0, max_tilt_rad, (n,))
    env.scene.imu_rotmat_bi[env_ids] = _axis_angle_rotmat(axis, angle).float()


def _axis_angle_rotmat(axis: torch.Tensor, angle: torch.Tensor) -> torch.Tensor:
    """Rodrigues: R = I + sin(t) K + (1 - cos(t)) K^2 for unit axes (n, 3), angles (n,)."""
    x, y, z = axis.unbind(1)
    zero = torch.zeros_like(x)
    k = torch.stack([zero, -z, y, z, zero, -x, -y, x, zero], dim=1).reshape(-1, 3, 3)
    s, c = angle.sin()[:, None, None], angle.cos()[:, None, None]
    eye = torch.eye(3, dtype=axis.dtype).expand_as(k)
    return eye + s * k + (1 - c) * (k @ k)


# -- resets and disturbances -------------------------------------------------------------
def reset_base(env, env_ids: torch.Tensor, offset_m: float, lin_vel_m_s: float,
               ang_vel_rad_s: float, clearance_m: float = 0.02) -> None:
    """Base at its spawn origin + U(-offset, offset) in xy, any heading, level, standing
    height + clearance above the highest ground under it; velocities ~ U(-v, v)."""
    scene, n = env.scene, len(env_ids)
    pos = scene.ground.origins(env_ids).double()
    pos[:, :2] += sample_uniform(env, -offset_m, offset_m, (n, 2))
    # highest ground under the footprint (+-0.3 m along x and y covers the feet)
    dx = torch.tensor([-0.3, 0.0, 0.3]).repeat_interleave(3)
    dy = torch.tensor([-0.3, 0.0, 0.3]).repeat(3)
    ground = scene.ground.height(pos[:, :1].float() + dx, pos[:, 1:2].float() + dy)
    pos[:, 2] = ground.max(dim=1).values + scene.info.nominal_base_height_m + clearance_m
    yaw = sample_uniform(env, -math.pi, math.pi, (n,))
    quat = torch.stack([(yaw / 2).cos(), torch.zeros(n, dtype=yaw.dtype),
                        torch.zeros(n, dtype=yaw.dtype), (yaw / 2).sin()], dim=1)
    lin_vel = sample_uniform(env, -lin_vel_m_s, lin_vel_m_s, (n, 3))
    ang_vel = sample_uniform(env, -ang_vel_rad_s, ang_vel_rad_s, (n, 3))
    scene.backend.write_root_state(env_ids, pos, quat, lin_vel, ang_vel)


def reset_joints_by_scale(env, env_ids: torch.Tensor, scale_range: tuple[float, float]) -> None:
    """Joint positions = standing pose x U(range) per joint, within the joint ranges; at rest."""
    scene = env.scene
    default = scene.default_joint_pos_rad.double()
    q = default * sample_uniform(env, *scale_range, (len(env_ids), len(default)))
    limits = scene.joint_pos_limits_rad.double()
    q = q.clamp(limits[:, 0], limits[:, 1])
    adr = torch.as_tensor(scene.info.qpos_adr)
    scene.backend.qpos[env_ids[:, None], adr[None, :]] = q.to(scene.backend.qpos.dtype)
    scene.backend.qvel[env_ids[:, None], torch.as_tensor(scene.info.qvel_adr)[None, :]] = 0.0


def push_base(env, env_ids: torch.Tensor, lin_vel_m_s: float) -> None:
    """Add U(-v, v) [m/s] to the base velocity along world x and y (a shove)."""
    kick = sample_uniform(env, -lin_vel_m_s, lin_vel_m_s, (len(env_ids), 2))
    qvel = env.scene.backend.qvel
    qvel[env_ids, 0:2] += kick.to(qvel.dtype)
