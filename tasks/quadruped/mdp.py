"""Quadruped term functions: observations, rewards, terminations.

Pure functions of the env; the managers own weights, dt, scaling, noise and shapes. Policy
observations hold only what the robot measures, as the robot measures it: IMU readings in
the (randomly tilted) IMU frame and joint positions with the encoder offset. The deploy
runtime computes the same terms by name (``deploy/runtime/observations.py``) with the same
functions of ``sim2real.terms`` where the math is more than a read-out.
Rewards follow legged_gym (Rudin et al. 2022, arXiv:2109.11978) and Isaac Lab's velocity task.
"""

from __future__ import annotations

import math

import torch

from sim2real import terms

COMMAND = 'base_velocity'


# -- observations -----------------------------------------------------------------------
def ang_vel_b(env, imu: bool = True) -> torch.Tensor:
    """Base angular velocity [rad/s; IMU frame (imu=True) or body frame], (N, 3)."""
    scene = env.scene
    if not imu:
        return scene.ang_vel_b
    return terms.rotate_world_to_body(scene.imu_rotmat_bi, scene.ang_vel_b)


def projected_gravity(env, imu: bool = True) -> torch.Tensor:
    """Unit gravity direction [IMU frame (imu=True) or body frame]; (0, 0, -1) level, (N, 3)."""
    scene = env.scene
    if not imu:
        return scene.projected_gravity_b
    return terms.rotate_world_to_body(scene.imu_rotmat_bi, scene.projected_gravity_b)


def velocity_command(env, command: str = COMMAND) -> torch.Tensor:
    """Commanded [vx m/s, vy m/s, yaw rate rad/s] in the base heading frame, (N, 3)."""
    return env.command(command).command


def joint_pos_rel(env, encoder_bias: bool = True) -> torch.Tensor:
    """Joint positions minus the standing pose [rad], policy joint order, (N, 12).

    With encoder_bias the reading includes each env's encoder offset, as a robot's does.
    """
    scene = env.scene
    q = scene.joint_pos_rad + scene.encoder_bias_rad if encoder_bias else scene.joint_pos_rad
    return terms.joint_pos_rel(q, scene.default_joint_pos_rad)


def joint_vel(env) -> torch.Tensor:
    """Joint velocities [rad/s], policy joint order, (N, 12)."""
    return env.scene.joint_vel_rad_s


def action_history(env) -> torch.Tensor:
    """The policy's latest clipped output, (N, 12) (a one-step action history)."""
    return env.action_term.history.flatten(1)


def lin_vel_b(env) -> torch.Tensor:
    """Privileged: base linear velocity [m/s; body frame], (N, 3)."""
    return env.scene.lin_vel_b


def physical_params(env, group: str = 'policy') -> torch.Tensor:
    """Privileged: the drawn robot, (N, 44): foot friction, payload [10 kg], centre-of-mass
    shift [dm], mean link-mass scale, per-joint Kp, Kd and strength scales, the action delay
    and the observation delay of a group [ticks]."""
    scene, model = env.scene, env.scene.model
    base = scene.info.base_body_id
    links = [b for b in range(1, model.nbody) if b != base]
    backend = scene.backend
    friction = backend.expand('geom_friction')[:, list(scene.info.foot_geom_ids), 0]
    mass = backend.expand('body_mass')
    payload = (mass[:, base] - float(model.body_mass[base])) / 10.0
    com = (backend.expand('body_ipos')[:, base] - torch.as_tensor(model.body_ipos[base])) * 10.0
    link_scale = (mass[:, links] / torch.as_tensor(model.body_mass[links])).mean(dim=1)
    act = scene.actuator
    # the observation manager sizes its terms before it exists: no delay yet then
    manager = getattr(env, 'observations', None)
    obs_delay = (manager.delay_ticks(group) if manager is not None
                 else torch.zeros_like(env.action_term.delay))
    delays = torch.stack([env.action_term.delay, obs_delay], dim=1)
    return torch.cat([friction.mean(dim=1, keepdim=True), payload[:, None], com,
                      link_scale[:, None], act.kp_scale, act.kd_scale, act.strength,
                      delays], dim=1).float()


def height_scan(env, size_m: tuple[float, float] = (1.0, 0.6),
                spacing_m: float = 0.1) -> torch.Tensor:
    """Privileged: base height above the ground at a grid around the base minus the nominal
    standing height [m], (N, points); the grid (x rows, y columns) turns with the heading."""
    scene = env.scene
    nx, ny = (round(s / spacing_m) + 1 for s in size_m)
    x = torch.linspace(-size_m[0] / 2, size_m[0] / 2, nx)
    y = torch.linspace(-size_m[1] / 2, size_m[1] / 2, ny)
    gx, gy = (g.reshape(1, -1) for g in torch.meshgrid(x, y, indexing='ij'))
    heading = heading_rad(env)[:, None]
    cos, sin = heading.cos(), heading.sin()
    px = scene.pos_w[:, :1] + cos * gx - sin * gy
    py = scene.pos_w[:, 1:2] + sin * gx + cos * gy
    ground = scene.ground.height(px, py)
    return scene.pos_w[:, 2:3] - ground - scene.info.nominal_base_height_m


def heading_rad(env) -> torch.Tensor:
    """Yaw of the base x axis in the world xy plane [rad], (N,)."""
    rot = env.scene.rotmat_wb
    return torch.atan2(rot[:, 1, 0], rot[:, 0, 0])


def lin_vel_heading(env) -> torch.Tensor:
    """Base velocity in the heading (gravity-aligned yaw) frame, xy [m/s], (N, 2)."""
    v = env.scene.lin_vel_w
    heading = heading_rad(env)
    cos, sin = heading.cos(), heading.sin()
    return torch.stack([cos * v[:, 0] + sin * v[:, 1], -sin * v[:, 0] + cos * v[:, 1]], dim=1)


# -- rewards ---------------------------------------------------------------------------
def track_lin_vel_xy_exp(env, std_m_s: float, command: str = COMMAND) -> torch.Tensor:
    """exp(-|cmd_xy - v_xy|^2 / std^2), v in the body frame, (N,)."""
    err = env.command(command).command[:, :2] - env.scene.lin_vel_b[:, :2]
    return torch.exp(-err.square().sum(dim=1) / std_m_s ** 2)


def track_ang_vel_z_exp(env, std_rad_s: float, command: str = COMMAND) -> torch.Tensor:
    """exp(-(cmd_yaw_rate - w_z)^2 / std^2), w_z in the body frame, (N,)."""
    err = env.command(command).command[:, 2] - env.scene.ang_vel_b[:, 2]
    return torch.exp(-err.square() / std_rad_s ** 2)


def lin_vel_z_l2(env) -> torch.Tensor:
    """Squared vertical base velocity [m^2/s^2; body frame], (N,)."""
    return env.scene.lin_vel_b[:, 2].square()


def ang_vel_xy_l2(env) -> torch.Tensor:
    """Squared roll and pitch rates [rad^2/s^2; body frame], (N,)."""
    return env.scene.ang_vel_b[:, :2].square().sum(dim=1)


def joint_torques_l2(env) -> torch.Tensor:
    """Sum of squared motor torques of the last physics step [N^2 m^2], (N,)."""
    return env.scene.actuator.torque_nm.square().sum(dim=1).float()


def joint_acc_l2(env) -> torch.Tensor:
    """Sum of squared joint accelerations over the policy step [rad^2/s^4], (N,)."""
    scene = env.scene
    acc = (scene.joint_vel_rad_s - scene.joint_vel_prev_rad_s) / env.step_dt_s
    return acc.square().sum(dim=1)


def action_rate_l2(env) -> torch.Tensor:
    """Squared change of the clipped policy output between ticks, (N,)."""
    term = env.action_term
    return (term.last_action - term.prev_action).square().sum(dim=1)


def feet_air_time(env, threshold_s: float, min_command_m_s: float = 0.1,
                  command: str = COMMAND) -> torch.Tensor:
    """Sum over feet touching down of (air time - threshold) [s], only while commanded to
    move faster than min_command_m_s (legged_gym's feet_air_time), (N,)."""
    scene = env.scene
    reward = ((scene.feet_last_air_time_s - threshold_s) * scene.feet_first_contact).sum(dim=1)
    moving = torch.linalg.vector_norm(env.command(command).command[:, :2], dim=1)
    return reward * (moving > min_command_m_s)


def undesired_contacts(env) -> torch.Tensor:
    """Number of base, thigh and calf bodies touching the ground, (N,)."""
    return env.scene.body_contact.sum(dim=1).float()


def flat_orientation_l2(env) -> torch.Tensor:
    """Squared xy of the projected gravity: 0 level, sin^2(tilt), (N,)."""
    return env.scene.projected_gravity_b[:, :2].square().sum(dim=1)


def base_height_l2(env, target_m: float) -> torch.Tensor:
    """Squared deviation of the base height above the local ground from target [m^2], (N,)."""
    return (env.scene.base_height_m() - target_m).square()


def joint_pos_limits(env, soft_ratio: float = 0.9) -> torch.Tensor:
    """Sum of joint excursions beyond the soft limits (soft_ratio of each range) [rad], (N,)."""
    scene = env.scene
    low, high = scene.joint_pos_limits_rad.unbind(dim=1)
    mid, half = (low + high) / 2, (high - low) / 2 * soft_ratio
    q = scene.joint_pos_rad
    return ((mid - half - q).clamp(min=0.0) + (q - mid - half).clamp(min=0.0)).sum(dim=1)


# -- terminations ----------------------------------------------------------------------
def time_out(env) -> torch.Tensor:
    """The episode reached its length, (N,) bool."""
    return env.episode_length >= env.max_episode_length


def base_contact(env) -> torch.Tensor:
    """The base (trunk) touches the ground, (N,) bool (a copy: resets clear the state)."""
    return env.scene.body_contact[:, 0].clone()


def bad_orientation(env, limit_rad: float) -> torch.Tensor:
    """The base z axis is tilted more than limit_rad from vertical, (N,) bool."""
    cos_tilt = -env.scene.projected_gravity_b[:, 2]
    return cos_tilt < math.cos(limit_rad)


def base_too_low(env, min_height_m: float) -> torch.Tensor:
    """The base is less than min_height_m above the ground below it, (N,) bool."""
    return env.scene.base_height_m() < min_height_m
