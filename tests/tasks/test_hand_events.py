"""hand-rotate's randomization: every term changes the model each simulation steps with (read
back from the simulation's own MjModel) or the signal the policy sees, and the friction and
torque-limit draws change what the physics does."""

import mujoco
import numpy as np
import pytest
import torch

N = 16


@pytest.fixture(scope='module')
def env():
    """16 hand-rotate envs after a reset (every reset event has drawn)."""
    from sim2real.mdp.env import RLEnv
    from sim2real.tasks import make_env_cfg
    cfg = make_env_cfg('hand-rotate')
    cfg.num_envs, cfg.num_threads = N, 1
    out = RLEnv(cfg)
    out.reset(seed=3)
    return out


def _host_model(env, i):
    """Simulation i's own MjModel (what mujoco.batch steps it with)."""
    data = mujoco.MjData(env.scene.model)
    return env.scene.backend.copy_to_host(i, data)


def _spread(values, low, high):
    """Values drawn inside [low, high], not all equal."""
    values = torch.as_tensor(values, dtype=torch.float64)
    assert values.min() >= low - 1e-9 and values.max() <= high + 1e-9
    assert values.max() - values.min() > 0.05 * (high - low)


def test_cube_size_mass_inertia_com_and_friction_reach_each_simulation(env):
    """Cube edge x U(0.95, 1.1) with its collision bounds, mass x U(0.8, 1.2) with its inertia
    x mass scale x size scale^2, centre of mass within 5 mm of the centre, friction U(0.3,
    1.5): per simulation, in the model it steps with."""
    info, model = env.scene.info, env.scene.model
    cube, geom = info.object_body_id, info.object_geom_id
    hosts = [_host_model(env, i) for i in range(N)]
    size = np.array([m.geom_size[geom, 0] / model.geom_size[geom, 0] for m in hosts])
    _spread(size, 0.95, 1.1)
    for m, s in zip(hosts, size):
        np.testing.assert_allclose(m.geom_size[geom], model.geom_size[geom] * s, rtol=1e-9)
        np.testing.assert_allclose(m.geom_rbound[geom], model.geom_rbound[geom] * s,
                                   rtol=1e-9)
        np.testing.assert_allclose(m.geom_aabb[geom], model.geom_aabb[geom] * s, rtol=1e-9)
    scale = np.array([m.body_mass[cube] / model.body_mass[cube] for m in hosts])
    _spread(scale, 0.8, 1.2)
    for m, s, a in zip(hosts, scale, size):
        np.testing.assert_allclose(m.body_inertia[cube], model.body_inertia[cube] * s * a ** 2,
                                   rtol=1e-6)
    com = np.array([m.body_ipos[cube] - model.body_ipos[cube] for m in hosts])
    assert np.abs(com).max() <= 0.005 + 1e-12 and np.abs(com).max() > 0.002
    _spread([m.geom_friction[geom, 0] for m in hosts], 0.3, 1.5)


def test_fingertip_friction_gains_joint_dynamics_link_masses_torque_limit(env):
    """Fingertips U(0.5, 1.0) (one draw for the four per env), per-joint frictionloss
    x U(0.5, 2) and armature x U(1, 1.05), per-link mass x U(0.9, 1.1), Kp and Kd x U(0.8,
    1.2) per joint, one torque limit x U(0.75, 1) per hand."""
    info, model, act = env.scene.info, env.scene.model, env.scene.actuator
    hosts = [_host_model(env, i) for i in range(N)]
    tips = info.fingertip_geom_ids
    tip_mu = np.array([m.geom_friction[tips, 0] for m in hosts])
    _spread(tip_mu[:, 0], 0.5, 1.0)
    assert np.all(tip_mu == tip_mu[:, :1])
    dofs = info.qvel_adr
    _spread(np.concatenate([m.dof_frictionloss[dofs] / model.dof_frictionloss[dofs]
                            for m in hosts]), 0.5, 2.0)
    _spread(np.concatenate([m.dof_armature[dofs] / model.dof_armature[dofs]
                            for m in hosts]), 1.0, 1.05)
    links = [b for b in info.hand_body_ids if model.body_dofnum[b] > 0]
    assert len(links) == 16
    _spread(np.concatenate([m.body_mass[links] / model.body_mass[links] for m in hosts]),
            0.9, 1.1)
    _spread(act.kp_scale.flatten(), 0.8, 1.2)
    _spread(act.kd_scale.flatten(), 0.8, 1.2)
    _spread(act.strength[:, 0], 0.75, 1.0)
    assert torch.all(act.strength == act.strength[:, :1])


def test_encoder_offsets_reach_the_observation(env):
    """Per-joint offsets within 0.03 rad: the joint reading is the simulated angle + offset."""
    scene = env.scene
    bias = scene.encoder_bias_rad
    assert bias.abs().max() <= 0.03 and bias.abs().max() > 0.02
    q = scene.backend.qpos[:, torch.as_tensor(scene.info.qpos_adr)].float()
    torch.testing.assert_close(scene.joint_pos_rad, q + bias, rtol=0, atol=1e-6)


def test_delays_are_drawn_per_env(env):
    """Action and observation delays of 0 or 1 tick, both values present across 16 envs."""
    assert set(env.action_term.delay.tolist()) == {0, 1}
    assert set(env.observations.delay_ticks('policy').tolist()) == {0, 1}


def test_cube_pushes_apply_decaying_forces(make_env):
    """HORA's object forces: after 20 steps some cubes carry a force; every force stays below
    a few times 1 N/kg x the cube mass; without further kicks it decays by 0.9 per 0.08 s."""
    env = make_env('hand-rotate', num_envs=N)
    env.reset(seed=1)
    cube = env.scene.info.object_body_id
    for _ in range(20):
        env.step(torch.zeros(N, 16))
    force = env.scene.backend.xfrc_applied[:, cube, :3].clone()
    assert (force.norm(dim=1) > 0).sum() >= N // 2
    assert force.norm(dim=1).max() < 6 * 1.0 * 0.108 * 1.2 * 3 ** 0.5
    env.cfg.events['push_cube'].params['prob'] = 0.0
    env.step(torch.zeros(N, 16))
    decayed = env.scene.backend.xfrc_applied[:, cube, :3]
    torch.testing.assert_close(decayed, force * 0.9 ** (0.05 / 0.08), rtol=1e-9, atol=1e-12)


def _slide_m(friction: float) -> float:
    """How far a cube resting on the open palm slides in 0.5 s under a sideways force of
    0.5 x its weight, at a cube friction (the palm's 0.2 is lower, so the cube's acts)."""
    from sim2real.assets import urdf_path
    from sim2real.sim.in_hand import in_hand_model
    model, info = in_hand_model(urdf_path('hand'), 0.005)
    model.geom_friction[info.object_geom_id, 0] = friction
    data = mujoco.MjData(model)
    data.qpos[info.qpos_adr] = 0.0   # the hand open: fingers straight, thumb upright
    mujoco.mj_forward(model, data)
    start = data.qpos[info.object_qpos_adr:info.object_qpos_adr + 3].copy()
    weight = info.object_mass_kg * 9.81
    for _ in range(100):
        data.ctrl[:] = np.clip(3.0 * (0.0 - data.qpos[info.qpos_adr]), -0.29, 0.29)
        data.xfrc_applied[info.object_body_id, 0] = -0.5 * weight   # towards the wrist
        mujoco.mj_step(model, data)
    return float(np.linalg.norm(data.qpos[info.object_qpos_adr:info.object_qpos_adr + 2]
                                - start[:2]))


def test_cube_friction_decides_whether_the_cube_slides():
    """Pushed sideways with half its weight on the open palm: at friction 0.3 (< 0.5) the cube
    slides more than 2 cm in 0.5 s; at 1.2 it creeps less than 5 mm (MuJoCo's soft
    contacts let a stuck cube creep)."""
    assert _slide_m(0.3) > 0.02
    assert _slide_m(1.2) < 0.005


def test_a_lower_torque_limit_caps_the_motor_torque(make_env):
    """A target 1 rad away: the PD torque saturates at 0.29 N m x the drawn strength."""
    env = make_env('hand-rotate', num_envs=2, play=True)
    env.reset(seed=0)
    act = env.scene.actuator
    act.strength[0], act.strength[1] = 1.0, 0.75
    act.target_rad = act.target_rad + 1.0
    env.scene.apply_actuators(0.005)
    torch.testing.assert_close(act.torque_nm.abs().max(dim=1).values,
                               torch.tensor([0.29, 0.29 * 0.75], dtype=act.torque_nm.dtype))


def test_a_drawn_cube_size_is_the_size_that_collides(make_env):
    """The cube rests on the palm at its drawn half edge: after 0.5 s of holding the grasp its
    centre is 0.0335-0.0385 m above the palm top (0.25 m), matching each env's size within
    1 mm (the broad phase and the contacts use the drawn size)."""
    env = make_env('hand-rotate', num_envs=8, play=True)
    env.reset(seed=6)
    for _ in range(10):
        env.step(torch.zeros(8, 16))
    scene = env.scene
    half = 0.035 * scene.cube_size_scale
    assert half.max() - half.min() > 0.002
    torch.testing.assert_close(scene.cube_pos_w[:, 2] - 0.25, half, rtol=0, atol=1e-3)


def _fixed_lags(action_lag: int, sensor_age: int):
    """cfg edit: every env draws this action lag and joint reading age [physics steps], and
    no whole tick of action delay."""
    def edit(cfg):
        cfg.action.params['lag_substeps'] = (action_lag, action_lag)
        cfg.action.params['delay_ticks'] = (0, 0)
        cfg.events['joint_sensor_age'].params['age_substeps'] = (sensor_age, sensor_age)
    return edit


def test_lags_within_a_tick_are_drawn_per_env(env):
    """Action lags of 0-4 and joint reading ages of 0-5 physics steps, spread over 16 envs,
    and the contract records the action lag in seconds (0-20 ms at 200 Hz)."""
    _spread(env.action_term.lag_substeps_drawn, 0, 4)
    _spread(env.scene.joint_sensor_age_substeps, 0, 5)
    assert env.action_term.spec().params['lag_s_trained'] == [0.0, 0.02]


@pytest.mark.parametrize('lag', [0, 3])
def test_targets_reach_the_motors_after_the_drawn_lag(make_env, lag):
    """The PD tracks the previous tick's targets for the env's lag, then the new ones, for
    the rest of the tick's 10 physics steps."""
    env = make_env('hand-rotate', num_envs=2, play=True, edit=_fixed_lags(lag, 0),
                   action='joint_position_rate_capped')
    env.reset(seed=0)
    seen = []
    apply = env.scene.apply_actuators

    def record(dt_s):
        seen.append(env.scene.actuator.target_rad.clone())
        apply(dt_s)

    env.scene.apply_actuators = record
    before = env.scene.actuator.target_rad.clone()
    env.step(torch.ones(2, 16))
    after = env.action_term.target_rad.double()
    assert (after - before).abs().max() > 0.1
    for k, target in enumerate(seen):
        torch.testing.assert_close(target, before if k < lag else after, rtol=0, atol=1e-9)
    assert len(seen) == 10


def test_joint_readings_are_as_old_as_the_drawn_age(make_env):
    """With a reading age of 4 physics steps, the observed joint angles are those 20 ms
    before the tick's end (offset included), not the angles at the end, while the hand moves."""
    env = make_env('hand-rotate', num_envs=2, play=True, edit=_fixed_lags(0, 4),
                   action='joint_position_rate_capped')
    env.reset(seed=0)
    angles = []
    apply = env.scene.apply_actuators
    adr = torch.as_tensor(env.scene.info.qpos_adr)

    def record(dt_s):
        angles.append(env.scene.backend.qpos[:, adr].float().clone())
        apply(dt_s)

    env.scene.apply_actuators = record
    env.step(torch.ones(2, 16))
    now = env.scene.backend.qpos[:, adr].float()
    bias = env.scene.encoder_bias_rad
    torch.testing.assert_close(env.scene.joint_pos_rad, angles[10 - 4] + bias, rtol=0,
                               atol=1e-6)
    assert (now - angles[10 - 4]).abs().max() > 0.01


def test_a_delayed_absolute_target_holds_the_grasp_pose_first(make_env):
    """With 1 tick of action delay, the rate-capped interface's motors hold the grasp pose
    through an episode's first tick (its delay line holds targets, not outputs: 0 rad there
    would open the hand), then take the policy's targets."""
    def edit(cfg):
        _fixed_lags(0, 0)(cfg)
        cfg.action.params['delay_ticks'] = (1, 1)
    env = make_env('hand-rotate', num_envs=2, play=True, edit=edit,
                   action='joint_position_rate_capped')
    env.reset(seed=0)
    grasp = env.scene.default_joint_pos_rad.double().expand(2, -1)
    assert grasp.abs().max() > 1.0
    env.step(torch.ones(2, 16))
    torch.testing.assert_close(env.scene.actuator.target_rad, grasp, rtol=0, atol=1e-6)
    env.step(torch.ones(2, 16))
    assert (env.scene.actuator.target_rad - grasp).abs().max() > 0.1


def test_a_diverged_simulation_reads_its_recovered_joints(make_env):
    """A simulation left with NaN joint angles at a tick's end, and NaN among the angles its
    aged readings come from (MuJoCo Warp keeps a NaN state; MuJoCo's CPU step resets it by
    itself): refresh recovers it and reads the recovered joints, finite; the other env keeps
    its aged reading."""
    env = make_env('hand-rotate', num_envs=2, play=True, edit=_fixed_lags(0, 3),
                   action='joint_position_rate_capped')
    env.reset(seed=0)
    env.step(torch.ones(2, 16))
    scene, adr = env.scene, torch.as_tensor(env.scene.info.qpos_adr)
    aged = scene.joint_pos_rad.clone()
    scene._recent_joint_pos_rad[:, 0] = float('nan')
    scene.backend.qpos[0, adr] = float('nan')
    scene.refresh()
    assert not scene.finite[0] and scene.finite[1]
    recovered = scene.backend.qpos[0, adr].float() + scene.encoder_bias_rad[0]
    torch.testing.assert_close(scene.joint_pos_rad[0], recovered, rtol=0, atol=1e-6)
    torch.testing.assert_close(scene.joint_pos_rad[1], aged[1], rtol=0, atol=1e-6)
