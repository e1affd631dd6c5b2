"""Hand task terms: pure functions of the env (observations, rewards, terminations).

Observations follow HORA and LEAP's in-hand rotation (hand.md section 4.1): the joint
positions and the integrator's previous targets, both mapped to [-1, 1] over the joint
ranges, over three control ticks (the history lives in the observation manager).
"""

from __future__ import annotations

import torch

from sim2real import terms


def _limits(env) -> tuple[torch.Tensor, torch.Tensor]:
    """(lower, upper) joint ranges [rad], (16,) each."""
    limits = env.scene.joint_pos_limits_rad
    return limits[:, 0], limits[:, 1]


# -- observations ----------------------------------------------------------------------------
def joint_pos_unit(env) -> torch.Tensor:
    """Measured joint positions mapped to [-1, 1] over their ranges, (N, 16)."""
    return terms.joint_pos_unit(env.scene.joint_pos_rad, *_limits(env))


def joint_target_unit(env) -> torch.Tensor:
    """The integrator's latest targets q* mapped to [-1, 1] over the joint ranges, (N, 16)."""
    return terms.joint_pos_unit(env.action_term.target_rad.float(), *_limits(env))


def joint_vel(env) -> torch.Tensor:
    """Joint velocities [rad/s], (N, 16) (critic)."""
    return env.scene.joint_vel_rad_s


def cube_pos_rel(env) -> torch.Tensor:
    """Cube position relative to its rest position on the palm [m; world], (N, 3) (critic)."""
    return env.scene.cube_pos_rel_m()


def cube_quat(env) -> torch.Tensor:
    """Cube orientation (w, x, y, z) with w >= 0, (N, 4) (critic)."""
    quat = env.scene.cube_quat_w
    return torch.where(quat[:, :1] < 0, -quat, quat)


def cube_lin_vel(env) -> torch.Tensor:
    """Cube linear velocity [m/s; world], (N, 3) (critic)."""
    return env.scene.cube_lin_vel_w


def cube_ang_vel(env) -> torch.Tensor:
    """Cube angular velocity [rad/s; cube frame], (N, 3) (critic)."""
    return env.scene.cube_ang_vel_b


def cube_rotation_rate(env) -> torch.Tensor:
    """The cube's rotation rate about the palm normal over the last step [rad/s], (N, 1)."""
    return (env.scene.cube_rotation_step_rad / env.step_dt_s)[:, None]


# -- rewards ---------------------------------------------------------------------------------
def rotation_rate_clipped(env, max_rad_s: float) -> torch.Tensor:
    """Finite-difference rotation rate about the palm normal, clipped to +-max [rad/s], (N,):
    with weight 1 the episode's sum of this term x dt is the radians turned (capped)."""
    rate = env.scene.cube_rotation_step_rad / env.step_dt_s
    return rate.clamp(-max_rad_s, max_rad_s)


def cube_lin_vel_l1(env) -> torch.Tensor:
    """L1 norm of the cube's linear velocity [m/s], (N,)."""
    return env.scene.cube_lin_vel_w.abs().sum(dim=1)


def pose_deviation_l2(env) -> torch.Tensor:
    """Squared distance of the joints from the grasp pose [rad^2], (N,)."""
    return ((env.scene.joint_pos_rad - env.scene.default_joint_pos_rad) ** 2).sum(dim=1)


def joint_torques_l2(env) -> torch.Tensor:
    """Squared joint torques [N^2 m^2], (N,)."""
    return (env.scene.actuator.torque_nm.float() ** 2).sum(dim=1)


def work_l2(env) -> torch.Tensor:
    """Squared mechanical power of the joints, (sum tau qd)^2 [W^2], (N,)."""
    power = (env.scene.actuator.torque_nm.float() * env.scene.joint_vel_rad_s).sum(dim=1)
    return power ** 2


# -- terminations ----------------------------------------------------------------------------
def cube_dropped(env, max_distance_m: float) -> torch.Tensor:
    """The cube left the palm: farther than max_distance_m from its rest position, (N,)."""
    return torch.linalg.vector_norm(env.scene.cube_pos_rel_m(), dim=1) > max_distance_m


def fingertip_guard(env, min_distance_m: float, workspace_min_m: tuple[float, float, float],
                    workspace_max_m: tuple[float, float, float]) -> torch.Tensor:
    """The deploy's fingertip guard trips: two fingertip pads closer than min_distance_m or
    a fingertip outside the workspace box [m; the URDF root frame], (N,)."""
    tips = env.scene.fingertip_pos_m
    low, high = torch.tensor(workspace_min_m), torch.tensor(workspace_max_m)
    return (terms.closest_pair_distance(tips) < min_distance_m) | terms.outside_box(
        tips, low, high)


def time_out(env) -> torch.Tensor:
    """Episode length reached, (N,)."""
    return env.episode_length >= env.max_episode_length
