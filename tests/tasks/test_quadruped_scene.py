"""Quadruped scene: joint order, contacts, terrain wiring, spawning, curriculum, contract."""

import xml.etree.ElementTree as ET

import numpy as np
import pytest
import torch

from sim2real.assets import urdf_path
from sim2real.mdp.contract import contract_from_env
from sim2real.sim.terrain import TerrainCfg
from sim2real.tasks.quadruped.cfg import NOMINAL_BASE_HEIGHT_M

# 3 levels x 4 columns of 4 m tiles: a small terrain that still has every type
SMALL_TERRAIN = TerrainCfg(tile_size_m=(4.0, 4.0), num_levels=3, num_cols=4, border_m=2.0,
                           proportions={'slope_up': 0.25, 'rough': 0.25, 'stairs_up': 0.25,
                                        'stairs_down': 0.25})


def _small_terrain(cfg):
    cfg.scene.params['terrain'] = SMALL_TERRAIN


def _urdf_joints():
    """Revolute joints of urdf/quadruped.urdf in file order."""
    root = ET.parse(urdf_path('quadruped')).getroot()
    return [j.get('name') for j in root.findall('joint') if j.get('type') == 'revolute']


def test_joint_state_follows_policy_order(make_env):
    """joint_pos_rad[:, i] reads the qpos of joint_names[i], whatever MuJoCo's layout."""
    env = make_env('quadruped-flat', num_envs=2)
    scene = env.scene
    for i, name in enumerate(scene.joint_names):
        scene.backend.qpos[:, scene.model.joint(name).qposadr[0]] = 0.01 * (i + 1)
    scene.refresh()
    torch.testing.assert_close(scene.joint_pos_rad[0], 0.01 * torch.arange(1, 13).float())
    assert list(scene.joint_names) == _urdf_joints()


def test_mujoco_torque_limits_raised_to_max_strength(make_env):
    """ctrlrange and joint force range are 1.1 x the URDF effort (23.7, 23.7, 45.43 N m)."""
    model = make_env('quadruped-flat', num_envs=1).scene.model
    effort = np.tile([23.7, 23.7, 45.43], 4)
    np.testing.assert_allclose(model.actuator_ctrlrange[:, 1], 1.1 * effort)
    np.testing.assert_allclose(model.jnt_actfrcrange[1:, 1], 1.1 * effort)


def test_contacts_standing_and_lying(make_env):
    """A standing robot has four foot contacts and no body contact; one dropped on its back
    touches with the base, which terminates its episode and costs it 200 x 0.02 s = 4 on top
    of its clipped, non-negative reward (the standing robot's stays >= 0). The robots start
    still at the default pose: after 0.5 s a foot is still in the air in 14 of 64 envs
    started as in training at seed 0, in 2 of 64 started still."""
    def still_start(cfg):
        cfg.events['reset_joints'].params['scale_range'] = (1.0, 1.0)
        cfg.events['reset_base'].params.update(lin_vel_m_s=0.0, ang_vel_rad_s=0.0)
    env = make_env('quadruped-flat', num_envs=2, play=True, edit=still_start)
    zero = torch.zeros(2, 12)
    for _ in range(25):
        env.step(zero)
    assert env.scene.foot_contact.all() and not env.scene.body_contact.any()
    scene, ids = env.scene, torch.tensor([1])
    upside_down = torch.tensor([[0.0, 1.0, 0.0, 0.0]])
    # trunk box half height 0.057 m: at 0.05 m its top presses into the floor
    scene.backend.write_root_state(ids, torch.tensor([[0.0, 0.0, 0.05]]), upside_down,
                                   torch.zeros(1, 3), torch.zeros(1, 3))
    _, rewards, terminated, _, extras = env.step(zero)
    assert terminated.tolist() == [False, True]
    assert extras['log']['termination/base_contact'] == 1.0
    assert rewards[0] >= 0.0
    assert -4.0 <= rewards[1] < -3.9


def test_hfield_heights_match_the_terrain_lookup(make_env):
    """Rays cast down onto MuJoCo's heightfield hit the heights Terrain.height_at returns."""
    env = make_env('quadruped-rough', num_envs=1, play=True, edit=_small_terrain)
    scene = env.scene
    terrain = scene.ground.terrain
    rng = np.random.default_rng(0)
    (x0, y0), (sx, sy) = terrain.corner_w, terrain.size_m
    xy = rng.uniform([x0 + 0.5, y0 + 0.5], [x0 + sx - 0.5, y0 + sy - 0.5], (200, 2))
    far = np.linalg.norm(xy - scene.pos_w[0, :2].numpy(), axis=1) > 1.0   # not the robot
    xy = xy[far]
    pnt = np.column_stack([xy, np.full(len(xy), 10.0)])
    dist, geom = scene.backend.batch.ray(pnt, np.array([0.0, 0.0, -1.0]))
    assert (geom[0] == scene.model.geom('floor').id).all()
    hit_z = 10.0 - dist[0]
    expected = terrain.height_at(xy[:, 0], xy[:, 1])
    # MuJoCo triangulates each cell; bilinear and planar interpolation differ inside a cell
    # by at most the cell's height spread, so compare at the sample points' scale
    assert np.median(np.abs(hit_z - expected)) < 0.01
    assert np.abs(hit_z - expected).max() < 0.12


def test_rough_env_spawns_on_the_terrain_surface(make_env):
    """After a reset every robot's base is 0.3222 + 0.02 m above the highest ground under it,
    within its tile; after 0.5 s of holding the pose each stands on at least two feet (steps
    and slopes can leave a foot in the air) and none has fallen."""
    env = make_env('quadruped-rough', num_envs=16, play=True, edit=_small_terrain)
    scene = env.scene
    env.reset(seed=3)
    ground = scene.ground.height(scene.pos_w[:, 0], scene.pos_w[:, 1])
    above = scene.pos_w[:, 2] - ground
    assert (above >= NOMINAL_BASE_HEIGHT_M + 0.02 - 1e-4).all() and (above < 0.6).all()
    origins = scene.ground.origins(torch.arange(16))
    assert ((scene.pos_w[:, :2] - origins[:, :2]).abs() <= 1.0 + 1e-5).all()
    for _ in range(25):
        env.step(torch.zeros(16, 12))
    assert (scene.foot_contact.sum(dim=1) >= 2).all()
    assert (scene.base_height_m() > 0.15).all() and not scene.body_contact[:, 0].any()


def test_curriculum_promotes_far_walkers_and_demotes_idlers(make_env):
    """An env 3 m (> half a 4 m tile) from its origin moves up a level; one that stayed
    while commanded 1 m/s moves down; a fresh env (episode length 0) keeps its level."""
    env = make_env('quadruped-rough', num_envs=3, play=True, edit=_small_terrain)
    scene, curriculum = env.scene, env.scene.ground.curriculum
    curriculum.level[:] = 1
    origins = scene.ground.origins(torch.arange(3))
    pos = origins.double().clone()
    pos[0, 0] += 3.0
    scene.backend.qpos[:, 0:3] = pos
    scene.refresh()
    env.command('base_velocity').command[:] = torch.tensor([1.0, 0.0, 0.0])
    env.episode_length[:] = torch.tensor([50, 50, 0])
    scene.reset(torch.arange(3))
    assert curriculum.level.tolist() == [2, 0, 1]


def test_contract_of_a_quadruped_env(make_env):
    """Joint names in URDF order, the URDF standing pose, joint_position_offset with scale
    0.25, gains and limits, 50 Hz policy, 200 Hz physics, total mass 15.017 kg."""
    env = make_env('quadruped-flat', num_envs=1)
    contract = contract_from_env(env)
    assert contract.joint_names == _urdf_joints()
    assert contract.default_joint_pos_rad == [0.1, 0.8, -1.5, -0.1, 0.8, -1.5,
                                              0.1, 1.0, -1.5, -0.1, 1.0, -1.5]
    action = contract.action
    assert (action.kind, action.size, action.clip) == ('joint_position_offset', 12, 4.0)
    assert action.params['scale'] == 0.25
    assert action.params['default_joint_pos_rad'] == contract.default_joint_pos_rad
    assert action.params['kp_nm_per_rad'] == [25.0] * 12
    assert action.params['kd_nm_s_per_rad'] == [0.5] * 12
    assert action.params['effort_limit_nm'] == [23.7, 23.7, 45.43] * 4
    assert action.params['delay_ticks_trained'] == [0, 1]
    assert (contract.policy_rate_hz, contract.physics_rate_hz) == (50.0, 200.0)
    assert contract.robot == 'go2class'
    assert contract.robot_params['mass_kg'] == pytest.approx(15.017)
    assert contract.robot_params['observation_delay_ticks_trained'] == [0, 1]
    assert contract.robot_params['nominal_base_height_m'] == pytest.approx(
        NOMINAL_BASE_HEIGHT_M, abs=1e-4)


def test_refresh_of_reset_rows_matches_a_full_refresh(make_env):
    """refresh(env_ids) after resetting env_ids leaves every derived tensor exactly as a full
    refresh makes it; the contact views still follow the sensors."""
    env = make_env('quadruped-flat', num_envs=4)
    for _ in range(10):
        env.step(torch.rand(4, 12) - 0.5)
    ids = torch.tensor([0, 2])
    env.scene.reset(ids)
    env.events.apply('reset', ids)
    env.scene.refresh(ids)
    names = ('finite', 'pos_w', 'quat_w', 'rotmat_wb', 'lin_vel_w', 'lin_vel_b', 'ang_vel_b',
             'projected_gravity_b', 'joint_pos_rad', 'joint_vel_rad_s', 'foot_contact',
             'body_contact')
    partial = {n: getattr(env.scene, n).clone() for n in names}
    env.scene.refresh()
    for name in names:
        assert torch.equal(partial[name], getattr(env.scene, name)), name
    assert not env.scene.foot_contact[ids].any()   # reset() cleared the found contacts
