"""Quadruped randomization events: values stay in range and only the given envs change."""

import math

import torch

from sim2real.mdp.events import randomize_encoder_bias, randomize_pd_gains
from sim2real.tasks.quadruped import events, mdp

NUM_ENVS = 16
IDS = torch.tensor([0, 3, 7, 12])
OTHERS = torch.tensor([i for i in range(NUM_ENVS) if i not in IDS.tolist()])


def _resets_only(cfg):
    """Keep only the base and joint resets: every parameter starts at its nominal value."""
    cfg.events = {k: v for k, v in cfg.events.items() if k in ('reset_base', 'reset_joints')}


def _env(make_env, num_envs=NUM_ENVS):
    """A flat-ground env with nominal parameters."""
    return make_env('quadruped-flat', num_envs=num_envs, edit=_resets_only)


def test_foot_friction_range_feet_only(make_env):
    """Foot friction ~ U(0.4, 1.25), one value for all four feet; other geoms and envs keep 0.8."""
    env = _env(make_env)
    feet = torch.from_numpy(env.scene.info.foot_geom_ids)
    before = env.scene.backend.expand('geom_friction').clone()
    events.randomize_foot_friction(env, IDS, friction_range=(0.4, 1.25))
    after = env.scene.backend.expand('geom_friction')
    mu = after[IDS][:, feet, 0]
    assert ((mu >= 0.4) & (mu <= 1.25)).all()
    assert (mu == mu[:, :1]).all() and len(set(mu[:, 0].tolist())) == len(IDS)
    assert torch.equal(after[OTHERS], before[OTHERS])
    assert (before[:, feet, 0] == 0.8).all()
    others = [g for g in range(after.shape[1]) if g not in feet.tolist()]
    assert torch.equal(after[:, others], before[:, others])


def test_base_mass_adds_minus_1_to_3_kg(make_env):
    """Trunk mass = 6.921 + U(-1, 3) kg for the ids; leg masses and other envs unchanged;
    repeated draws stay relative to the default (no drift)."""
    env = _env(make_env)
    base = env.scene.info.base_body_id
    before = env.scene.backend.expand('body_mass').clone()
    for _ in range(5):
        events.randomize_base_mass(env, IDS, mass_range_kg=(-1.0, 3.0))
    after = env.scene.backend.expand('body_mass')
    delta = after[IDS, base] - 6.921
    assert ((delta >= -1.0) & (delta <= 3.0)).all()
    assert torch.equal(after[OTHERS], before[OTHERS])
    legs = [b for b in range(after.shape[1]) if b != base]
    assert torch.equal(after[:, legs], before[:, legs])


def test_base_com_shift_within_5_cm(make_env):
    """Trunk centre of mass moves by at most 0.05 m per axis, for the ids only."""
    env = _env(make_env)
    base = env.scene.info.base_body_id
    before = env.scene.backend.expand('body_ipos').clone()
    events.randomize_base_com(env, IDS, offset_m=0.05)
    after = env.scene.backend.expand('body_ipos')
    shift = after[IDS, base] - before[IDS, base]
    assert (shift.abs() <= 0.05).all() and (shift.abs() > 0).all()
    assert torch.equal(after[OTHERS], before[OTHERS])


def test_link_masses_scaled_per_link(make_env):
    """Each leg link of the ids is scaled by its own U(0.8, 1.2); the trunk is untouched."""
    env = _env(make_env)
    base = env.scene.info.base_body_id
    before = env.scene.backend.expand('body_mass').clone()
    events.randomize_link_masses(env, IDS, scale_range=(0.8, 1.2))
    after = env.scene.backend.expand('body_mass')
    ratio = after[IDS, 2:] / before[IDS, 2:]
    assert base == 1 and ((ratio >= 0.8) & (ratio <= 1.2)).all()
    assert len(set(ratio[0].tolist())) == ratio.shape[1]
    assert torch.equal(after[:, base], before[:, base])
    assert torch.equal(after[OTHERS], before[OTHERS])


def test_pd_gains_and_motor_strength_scales(make_env):
    """Kp, Kd and strength multipliers ~ U(0.9, 1.1) per joint for the ids, 1 elsewhere."""
    env = _env(make_env)
    act = env.scene.actuator
    randomize_pd_gains(env, IDS, kp_scale=(0.9, 1.1), kd_scale=(0.9, 1.1))
    events.randomize_motor_strength(env, IDS, strength_range=(0.9, 1.1))
    for scale in (act.kp_scale, act.kd_scale, act.strength):
        assert scale.shape == (NUM_ENVS, 12)
        assert ((scale[IDS] >= 0.9) & (scale[IDS] <= 1.1)).all()
        assert (scale[IDS].std(dim=1) > 0).all()
        assert (scale[OTHERS] == 1.0).all()


def test_strength_above_one_reaches_the_physics(make_env):
    """A 1.1 motor at a far target applies 1.1 x effort: MuJoCo's limits do not clip it."""
    env = _env(make_env, num_envs=2)
    scene = env.scene
    force = scene.backend.batch.bind('actuator_force')
    scene.actuator.strength[1] = 1.1
    scene.actuator.target_rad[:] = scene.actuator.target_rad + 3.0   # saturate every motor
    scene.simulate(1, env.action_term.apply)
    effort = torch.from_numpy(scene.info.effort_limit_nm)
    applied = torch.from_numpy(force.copy())[:, scene.info.actuator_ids]
    # the torque-speed line lowers the bound once joints move; after one step they barely do
    torch.testing.assert_close(applied[0], effort, rtol=1e-3, atol=0)
    torch.testing.assert_close(applied[1], 1.1 * effort, rtol=1e-3, atol=0)


def test_encoder_bias_shifts_only_the_policy_reading(make_env):
    """Bias ~ U(-0.02, 0.02) rad per joint; joint_pos_rel differs from the true one by it."""
    env = _env(make_env)
    randomize_encoder_bias(env, IDS, bias_rad=0.02)
    bias = env.scene.encoder_bias_rad
    assert (bias[IDS].abs() <= 0.02).all() and (bias[IDS] != 0).all()
    assert (bias[OTHERS] == 0).all()
    measured = mdp.joint_pos_rel(env) - mdp.joint_pos_rel(env, encoder_bias=False)
    torch.testing.assert_close(measured, bias, rtol=0, atol=1e-6)


def test_imu_mount_tilt_at_most_2_deg(make_env):
    """Mount rotations are proper rotations of <= 2 deg; IMU gravity stays a unit vector
    within 2 deg of the body-frame one; other envs keep the identity."""
    env = _env(make_env)
    events.randomize_imu_mount(env, IDS, max_tilt_rad=math.radians(2.0))
    rot = env.scene.imu_rotmat_bi
    eye = torch.eye(3).expand(len(IDS), 3, 3)
    torch.testing.assert_close(rot[IDS] @ rot[IDS].transpose(1, 2), eye, rtol=0, atol=1e-6)
    torch.testing.assert_close(torch.linalg.det(rot[IDS]), torch.ones(len(IDS)))
    angle = torch.arccos(((rot[IDS].diagonal(dim1=1, dim2=2).sum(1) - 1) / 2).clamp(-1, 1))
    assert (angle <= math.radians(2.0) + 1e-4).all() and (angle > 0).all()
    assert torch.equal(rot[OTHERS], torch.eye(3).expand(len(OTHERS), 3, 3))
    imu, body = mdp.projected_gravity(env), mdp.projected_gravity(env, imu=False)
    cos = (imu * body).sum(dim=1)
    assert (cos >= math.cos(math.radians(2.0)) - 1e-6).all()
    torch.testing.assert_close(mdp.ang_vel_b(env)[OTHERS], env.scene.ang_vel_b[OTHERS])


def test_push_changes_xy_velocity_of_ids_only(make_env):
    """A push adds at most 0.5 m/s to the world x and y base velocity; z and others unchanged."""
    env = _env(make_env)
    qvel = env.scene.backend.qvel
    before = qvel.clone()
    events.push_base(env, IDS, lin_vel_m_s=0.5)
    kick = qvel[IDS, 0:2] - before[IDS, 0:2]
    assert (kick.abs() <= 0.5).all() and (kick.abs() > 0).all()
    assert torch.equal(qvel[IDS, 2:], before[IDS, 2:])
    assert torch.equal(qvel[OTHERS], before[OTHERS])


def test_reset_joints_within_scale_and_limits(make_env):
    """Reset joints lie within [0.5, 1.5] x the standing pose and the joint ranges, at rest."""
    env = _env(make_env)
    events.reset_joints_by_scale(env, IDS, scale_range=(0.5, 1.5))
    env.scene.refresh()
    q = env.scene.joint_pos_rad[IDS].double()
    default = env.scene.default_joint_pos_rad.double()
    low, high = torch.minimum(0.5 * default, 1.5 * default), torch.maximum(0.5 * default,
                                                                           1.5 * default)
    assert ((q >= low - 1e-6) & (q <= high + 1e-6)).all()
    limits = env.scene.joint_pos_limits_rad
    assert ((q >= limits[:, 0]) & (q <= limits[:, 1])).all()
    assert (env.scene.joint_vel_rad_s[IDS] == 0).all()


def test_action_delay_of_two_ticks(make_env):
    """With a 2-tick delay the joint targets follow the output pushed two ticks earlier."""
    def delay_two(cfg):
        _resets_only(cfg)
        cfg.action.params['delay_ticks'] = (2, 2)
    env = make_env('quadruped-flat', num_envs=2, edit=delay_two)
    term = env.action_term
    default = env.scene.default_joint_pos_rad.double()
    outputs = [torch.full((2, 12), v) for v in (0.4, -0.8, 1.2)]
    targets = []
    for a in outputs:
        term.process(a)
        targets.append(env.scene.actuator.target_rad.clone())
    torch.testing.assert_close(targets[0], default.expand(2, 12))   # zeros in flight
    torch.testing.assert_close(targets[1], default.expand(2, 12))
    torch.testing.assert_close(targets[2], (default + 0.25 * 0.4).expand(2, 12))
    assert torch.equal(term.last_action, outputs[2])
