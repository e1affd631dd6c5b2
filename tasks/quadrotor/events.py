"""Quadrotor reset and randomization events."""

from __future__ import annotations

import math

import torch

from sim2real.mdp.events import sample_uniform
from sim2real.mdp.ranges import sample_range


def reset_around_target(env, env_ids: torch.Tensor, offset_m: float, min_height_m: float,
                        max_tilt_rad: float, lin_vel_m_s: float, ang_vel_rad_s: float,
                        command: str = 'target') -> None:
    """Start near the reference: tilt ~ U(0, max) about a random axis, any yaw, and spin."""
    n = len(env_ids)
    target = env.command(command).pos_w[env_ids].double()
    pos = target + sample_uniform(env, -offset_m, offset_m, (n, 3))
    pos[:, 2] = pos[:, 2].clamp(min=min_height_m)
    tilt = sample_uniform(env, 0.0, max_tilt_rad, (n,))
    tilt_axis = sample_uniform(env, 0.0, 2 * math.pi, (n,))
    yaw = sample_uniform(env, -math.pi, math.pi, (n,))
    quat = _quat_yaw_then_tilt(yaw, tilt_axis, tilt)
    lin_vel = sample_uniform(env, -lin_vel_m_s, lin_vel_m_s, (n, 3))
    ang_vel = sample_uniform(env, -ang_vel_rad_s, ang_vel_rad_s, (n, 3))
    env.scene.backend.write_root_state(env_ids, pos, quat, lin_vel, ang_vel)


def _quat_yaw_then_tilt(yaw, axis_angle, tilt) -> torch.Tensor:
    """q = q_tilt(axis in the xy plane at axis_angle) * q_yaw, (w, x, y, z), (n, 4)."""
    half = tilt / 2
    qt = torch.stack([half.cos(), half.sin() * axis_angle.cos(),
                      half.sin() * axis_angle.sin(), torch.zeros_like(tilt)], dim=1)
    hy = yaw / 2
    qy = torch.stack([hy.cos(), torch.zeros_like(hy), torch.zeros_like(hy), hy.sin()], dim=1)
    w1, x1, y1, z1 = qt.unbind(1)
    w2, x2, y2, z2 = qy.unbind(1)
    return torch.stack([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
                        w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                        w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
                        w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2], dim=1)


def randomize_rotors(env, env_ids: torch.Tensor, thrust_scale: tuple[float, float],
                     rotor_mismatch: tuple[float, float],
                     time_constant_scale: tuple[float, float]) -> None:
    """Thrust coefficient (common x per-rotor mismatch) and motor time constant scales."""
    n = len(env_ids)
    act = env.scene.actuator
    common = sample_range(env, env_ids, thrust_scale, (n, 1))
    act.thrust_scale[env_ids] = common * sample_range(env, env_ids, rotor_mismatch, (n, 4))
    nominal = env.scene.rotors.time_constant_s
    act.time_constant_s[env_ids] = nominal * sample_range(env, env_ids, time_constant_scale,
                                                          (n, 1))


def external_force(env, env_ids: torch.Tensor, max_force_n: float) -> None:
    """Constant random force on the base until the next draw [N; world frame]."""
    n = len(env_ids)
    force = sample_uniform(env, -1.0, 1.0, (n, 3))
    force *= max_force_n / force.norm(dim=1, keepdim=True).clamp(min=1.0)
    xfrc = env.scene.backend.xfrc_applied
    xfrc[env_ids, 1, 0:3] = force.to(xfrc.dtype)
