"""Quadrotor randomization/reset events and command generators on real envs."""

import math

import torch

from sim2real.tasks.quadrotor.commands import HoverTarget, SmoothTrajectory
from sim2real.tasks.quadrotor.events import (
    external_force, randomize_rotors, reset_around_target)

NUM_ENVS = 32
IDS = torch.tensor([0, 5, 9, 17, 30])
OTHERS = torch.tensor([i for i in range(NUM_ENVS) if i not in IDS.tolist()])


def _no_events(cfg):
    """Drop the task's events so the parameters start at their nominal values."""
    cfg.events = {}


def test_randomize_rotors_ranges_and_ids(make_env):
    """Thrust scale in [0.85*0.95, 1.15*1.05] = [0.8075, 1.2075], tau in [0.05, 0.15] s
    (x U(0.5, 1.5) around the URDF's 0.1 s)."""
    env = make_env(num_envs=NUM_ENVS, edit=_no_events)
    act = env.scene.actuator
    randomize_rotors(env, IDS, thrust_scale=(0.85, 1.15), rotor_mismatch=(0.95, 1.05),
                     time_constant_scale=(0.5, 1.5))
    scale = act.thrust_scale
    assert scale.shape == (NUM_ENVS, 4)
    assert ((scale[IDS] >= 0.8075) & (scale[IDS] <= 1.2075)).all()
    assert (scale[IDS].max(dim=1).values > scale[IDS].min(dim=1).values).all()  # per rotor
    # per-rotor mismatch is at most 1.05 / 0.95 = 1.105 within one env
    assert (scale[IDS].max(dim=1).values / scale[IDS].min(dim=1).values <= 1.106).all()
    assert (scale[OTHERS] == 1.0).all()
    tau = act.time_constant_s
    assert tau.shape == (NUM_ENVS, 1)
    assert ((tau[IDS] >= 0.05) & (tau[IDS] <= 0.15)).all()
    assert (tau[IDS] < 0.1).any() and (tau[IDS] > 0.1).any()
    assert (tau[OTHERS] == 0.1).all()


def test_randomized_thrust_scale_reaches_the_physics(make_env):
    """A thrust scale of 1.2 on all rotors at hover speed accelerates up at 0.2 g = 1.962 m/s^2."""
    env = make_env(num_envs=2, edit=_no_events)
    scene = env.scene
    ids = torch.arange(2)
    pos = torch.tensor([[0.0, 0.0, 1.0]] * 2, dtype=torch.float64)
    quat = torch.tensor([[1.0, 0.0, 0.0, 0.0]] * 2)
    scene.backend.write_root_state(ids, pos, quat, torch.zeros(2, 3), torch.zeros(2, 3))
    scene.actuator.thrust_scale[1] = 1.2
    scene.actuator.mode = 'rotor_speeds'
    scene.actuator.command = torch.full((2, 4), scene.hover_speed_rad_s, dtype=torch.float64)
    scene.simulate(50, scene.apply_rotors)
    accel = scene.backend.root_lin_vel_w[:, 2] / (50 * env.cfg.physics_dt_s)
    # env 0: 4 kf w_h^2 = m g -> 0; env 1: 1.2 m g / m - g = 0.2 * 9.81 = 1.962 m/s^2
    torch.testing.assert_close(accel, torch.tensor([0.0, 1.962], dtype=torch.float64),
                               rtol=0, atol=1e-6)


def test_reset_around_target_bounds(make_env):
    """Starts keep tilt <= max tilt, height >= min height, |q| = 1, offset <= 0.3 m per axis."""
    env = make_env(num_envs=NUM_ENVS, edit=_no_events)
    scene = env.scene
    before = scene.backend.qpos.clone()
    reset_around_target(env, IDS, offset_m=0.3, min_height_m=1.4, max_tilt_rad=0.5,
                        lin_vel_m_s=0.5, ang_vel_rad_s=2.0)
    qpos = scene.backend.qpos
    torch.testing.assert_close(qpos[OTHERS], before[OTHERS], rtol=0, atol=0)
    quat = qpos[IDS, 3:7]
    torch.testing.assert_close(quat.norm(dim=1), torch.ones(len(IDS), dtype=torch.float64))
    # tilt = angle between body z and world z: cos(tilt) = R[2, 2] = 1 - 2 (x^2 + y^2)
    cos_tilt = 1 - 2 * (quat[:, 1] ** 2 + quat[:, 2] ** 2)
    assert (cos_tilt >= math.cos(0.5) - 1e-12).all()
    assert (qpos[IDS, 2] >= 1.4).all()
    target = env.command('target').pos_w[IDS].double()
    assert ((qpos[IDS, :2] - target[:, :2]).abs() <= 0.3 + 1e-6).all()
    qvel = scene.backend.qvel
    assert (qvel[IDS, :3].abs() <= 0.5).all() and (qvel[IDS, 3:].abs() <= 2.0).all()


def test_reset_around_target_full_tilt_range(make_env):
    """With a 90 deg limit, 64 draws span tilts up to nearly 90 deg and none beyond it."""
    env = make_env(num_envs=64, edit=_no_events)
    ids = torch.arange(64)
    reset_around_target(env, ids, offset_m=1.0, min_height_m=0.5, max_tilt_rad=math.pi / 2,
                        lin_vel_m_s=1.0, ang_vel_rad_s=4.0)
    quat = env.scene.backend.qpos[:, 3:7]
    tilt = torch.arccos((1 - 2 * (quat[:, 1] ** 2 + quat[:, 2] ** 2)).clamp(-1, 1))
    assert tilt.max() <= math.pi / 2 + 1e-9
    assert tilt.max() > math.radians(70)
    assert (env.scene.backend.qpos[:, 2] >= 0.5).all()


def test_external_force_norm_and_ids(make_env):
    """Forces on the base have norm <= 0.01 N, only for ids, and are zeroed by a scene reset."""
    env = make_env(num_envs=NUM_ENVS, edit=_no_events)
    backend = env.scene.backend
    external_force(env, IDS, max_force_n=0.01)
    force = backend.xfrc_applied[:, 1, 0:3]
    assert (force[IDS].norm(dim=1) <= 0.01 + 1e-12).all()
    assert (force[IDS].norm(dim=1) > 0).all()
    assert (force[OTHERS] == 0).all()
    assert (backend.xfrc_applied[:, 1, 3:] == 0).all() and (backend.xfrc_applied[:, 0] == 0).all()
    env.scene.reset(IDS[:2])
    assert (backend.xfrc_applied[IDS[:2]] == 0).all()
    assert (backend.xfrc_applied[IDS[2:], 1, 0:3].norm(dim=1) > 0).all()


def test_hover_target_box_and_fixed(make_env):
    """Hover targets lie in [-1, 1] x [-1, 1] x [2.5, 3.5] m and do not move with update()."""
    env = make_env(num_envs=NUM_ENVS)
    target = env.command('target')
    assert type(target) is HoverTarget
    pos = target.pos_w.clone()
    assert (pos[:, :2].abs() <= 1).all()
    assert (pos[:, 2] >= 2.5).all() and (pos[:, 2] <= 3.5).all()
    target.update(0.01)
    torch.testing.assert_close(target.pos_w, pos, rtol=0, atol=0)
    assert (target.vel_w == 0).all()


def test_start_heights_hover_room_and_track_floor(make_env):
    """Hover starts >= 2.5 m up (room to right a 90 deg tilt); track keeps its own 1.5 m floor:
    its starts lie within 0.3 m of a reference <= 1.8 + 0.4 m up, and not all at the hover's
    2.5 m floor."""
    hover = make_env(num_envs=NUM_ENVS)
    assert (hover.scene.pos_w[:, 2] >= 2.5).all()
    track = make_env('quadrotor-track', num_envs=NUM_ENVS)
    z = track.scene.pos_w[:, 2]
    assert (z >= 1.5).all() and (z <= 1.8 + 0.4 + 0.3).all()
    assert (z < 2.0).any()


def test_smooth_trajectory_starts_at_t0_after_reset(make_env):
    """After a reset the reference is its t = 0 value c + sum A sin(phi), even mid-episode."""
    env = make_env('quadrotor-track', num_envs=8)
    traj = env.command('target')
    assert type(traj) is SmoothTrajectory
    for _ in range(20):
        env.step(torch.zeros(8, 4))
    env.reset(seed=2)
    pos0 = traj.centre_w + (traj._amp * traj._phase.sin()).sum(-1)
    vel0 = (traj._amp * traj._omega * traj._phase.cos()).sum(-1)
    torch.testing.assert_close(traj.pos_w, pos0)
    torch.testing.assert_close(traj.vel_w, vel0)


def test_smooth_trajectory_velocity_is_position_derivative(make_env):
    """vel_w matches the central difference of pos_w over one policy step (dt^2 bound)."""
    env = make_env('quadrotor-track', num_envs=8)
    traj = env.command('target')
    dt = env.step_dt_s
    positions, velocities = [], []
    for _ in range(3):
        positions.append(traj.pos_w.clone())
        velocities.append(traj.vel_w.clone())
        env.episode_length += 1
        traj.update(dt)
    central = (positions[2] - positions[0]) / (2 * dt)
    # central difference error dt^2/6 |p'''|, |p'''| <= sum A w^3 <= 0.4 (2 pi 0.3)^3 = 2.7
    bound = dt ** 2 / 6 * 2.7 + 1e-5   # 1.8e-4 m/s at dt = 0.02 s, plus float32 rounding
    torch.testing.assert_close(central, velocities[1], rtol=0, atol=bound)
