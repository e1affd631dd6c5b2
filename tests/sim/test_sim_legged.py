"""URDF -> MjSpec for the quadruped: actuators, masses, contacts, standing, terrain, errors."""

import xml.etree.ElementTree as ET

import mujoco
import numpy as np
import pytest

from sim2real.sim.legged import JOINT_NAMES, legged_model, legged_spec
from sim2real.urdf import UrdfError

DT = 0.005
ROTOR_INERTIA = 0.000111842


@pytest.fixture(scope='module')
def urdf(repo_root):
    """Path of the shipped Go2-class URDF."""
    return repo_root / 'urdf' / 'quadruped.urdf'


@pytest.fixture(scope='module')
def model_info(urdf):
    """The compiled quadruped at 200 Hz and its LeggedInfo."""
    return legged_model(urdf, DT)


def test_twelve_torque_actuators_in_policy_order(model_info):
    """12 joint motors FL, FR, RL, RR x hip, thigh, calf; ctrl range +-23.7 / +-45.43 N m."""
    model, info = model_info
    legs = ('FL', 'FR', 'RL', 'RR')
    assert info.joint_names == tuple(f'{leg}_{k}_joint' for leg in legs
                                     for k in ('hip', 'thigh', 'calf'))
    assert model.nu == 12 and model.njnt == 13
    assert [model.actuator(i).name for i in info.actuator_ids] == [
        n.removesuffix('_joint') for n in JOINT_NAMES]
    targets = model.actuator_trnid[info.actuator_ids, 0]
    assert [model.joint(j).name for j in targets] == list(JOINT_NAMES)
    np.testing.assert_array_equal(info.qpos_adr, np.arange(7, 19))
    np.testing.assert_array_equal(info.qvel_adr, np.arange(6, 18))
    np.testing.assert_allclose(model.actuator_ctrlrange[:, 1], [23.7, 23.7, 45.43] * 4)
    np.testing.assert_allclose(model.actuator_ctrlrange[:, 0], [-23.7, -23.7, -45.43] * 4)
    np.testing.assert_allclose(model.actuator_gainprm[:, 0], 1.0)
    np.testing.assert_allclose(info.velocity_limit_rad_s, [30.1, 30.1, 15.7] * 4)
    np.testing.assert_allclose(info.pos_limits_rad[:3], [[-1.0472, 1.0472], [-1.5708, 3.4907],
                                                         [-2.7227, -0.83776]])
    np.testing.assert_allclose(info.pos_limits_rad[7], [-0.5236, 4.5379])   # RL thigh


def test_total_mass_equals_the_urdf(model_info, urdf):
    """Bodies sum to the URDF's link masses: 6.921 + 4 * (0.678 + 1.152 + 0.154 + 0.04)."""
    model, _ = model_info
    urdf_mass = sum(float(m.get('value')) for m in ET.parse(urdf).iter('mass'))
    assert urdf_mass == pytest.approx(15.017, abs=1e-9)
    assert mujoco.mj_getTotalmass(model) == pytest.approx(urdf_mass, abs=1e-9)
    assert model.opt.timestep == DT and model.jnt_type[0] == mujoco.mjtJoint.mjJNT_FREE


def test_armature_is_reflected_rotor_inertia(model_info):
    """Armature = rotor inertia * gear^2: 0.000111842 * 36 (hip, thigh), * 81 (knee)."""
    model, info = model_info
    expected = np.array([36.0, 36.0, 81.0] * 4) * ROTOR_INERTIA
    np.testing.assert_allclose(model.dof_armature[info.qvel_adr], expected, rtol=1e-12)
    np.testing.assert_allclose(info.armature_kg_m2, expected, rtol=1e-12)
    np.testing.assert_allclose(info.stall_torque_nm, [23.7, 23.7, 45.43] * 4)
    np.testing.assert_allclose(info.no_load_speed_rad_s, [30.1, 30.1, 15.7] * 4)


def test_robot_geoms_touch_the_ground_only(model_info):
    """No robot pair can collide; every robot geom collides with the floor; feet mu = 0.8."""
    model, info = model_info
    robot = np.flatnonzero(model.geom_bodyid != 0)
    floor = model.geom('floor').id
    for i in robot:
        assert model.geom_contype[i] & model.geom_conaffinity[floor] or \
            model.geom_contype[floor] & model.geom_conaffinity[i]
        for j in robot:
            assert not (model.geom_contype[i] & model.geom_conaffinity[j])
    assert [model.geom(g).name for g in info.foot_geom_ids] == [
        f'{leg}_foot_collision' for leg in ('FL', 'FR', 'RL', 'RR')]
    np.testing.assert_allclose(model.geom_friction[info.foot_geom_ids, 0], 0.8)
    assert (model.geom_condim[info.foot_geom_ids] == 3).all()
    assert info.foot_radius_m == 0.022
    names = [model.body(b).name for b in (*info.thigh_body_ids, *info.calf_body_ids)]
    assert names == [f'{leg}_{part}' for part in ('thigh', 'calf')
                     for leg in ('FL', 'FR', 'RL', 'RR')]
    assert model.body(info.base_body_id).name == 'base_link'


def test_nominal_height_by_hand(model_info):
    """Front foot 0.213 (cos 0.8 + cos 0.7) = 0.3113 below the hip, abducted 0.1 rad with the
    0.0955 offset: 0.995 * 0.3113 - 0.0998 * 0.0955 = 0.3002; + foot radius 0.022."""
    _, info = model_info
    front = 0.213 * (np.cos(0.8) + np.cos(0.8 - 1.5))
    by_hand = np.cos(0.1) * front - np.sin(0.1) * 0.0955 + 0.022
    assert info.nominal_base_height_m == pytest.approx(by_hand, abs=1e-9)
    assert info.nominal_base_height_m == pytest.approx(0.3222, abs=1e-4)


def _stand(model, info, data, steps, kp=20.0, kd=0.5):
    """Physics-rate PD to the standing pose, torque clipped to the effort limits."""
    heights = []
    for _ in range(steps):
        q, qd = data.qpos[info.qpos_adr], data.qvel[info.qvel_adr]
        tau = kp * (info.default_joint_pos_rad - q) - kd * qd
        data.ctrl[info.actuator_ids] = np.clip(tau, -info.effort_limit_nm, info.effort_limit_nm)
        mujoco.mj_step(model, data)
        heights.append(data.qpos[2])
    return np.array(heights)


def test_standing_pd_keeps_the_base_up_for_2_s(model_info):
    """kp 20, kd 0.5 from the standing pose for 2 s: the base stays level and above 0.2 m
    (it sags from 0.322 m on the soft gains), only the feet touch, and they do not slip."""
    model, info = model_info
    data = mujoco.MjData(model)
    data.qpos[2] = info.nominal_base_height_m
    data.qpos[info.qpos_adr] = info.default_joint_pos_rad
    heights = _stand(model, info, data, int(0.5 / DT))
    feet_xy = data.geom_xpos[info.foot_geom_ids, :2].copy()
    heights = np.concatenate([heights, _stand(model, info, data, int(1.5 / DT))])
    assert heights.min() > 0.2 and heights.max() <= info.nominal_base_height_m + 1e-3
    assert data.xmat[info.base_body_id][8] > 0.99          # body z still points up
    touching = {data.contact[i].geom2 for i in range(data.ncon)}
    assert touching == set(info.foot_geom_ids)
    np.testing.assert_allclose(data.geom_xpos[info.foot_geom_ids, :2], feet_xy, atol=3e-3)


def test_heightfield_has_the_given_heights(urdf):
    """Balls (r 0.05) dropped on a 8 x 4 m heightfield rest on its plateaus: x > 1 m at 0.2 m,
    x < -1 m and y > 0.5 m at 0.35 m, elsewhere 0 (rows run along y, columns along x)."""
    x, y = np.linspace(-4.0, 4.0, 41), np.linspace(-2.0, 2.0, 21)
    grid_x, grid_y = np.meshgrid(x, y)
    heights = np.where(grid_x > 1.0, 0.2, 0.0)
    heights[(grid_y > 0.5) & (grid_x < -1.0)] = 0.35
    spec = legged_spec(urdf, DT, hfield=(heights, 8.0, 4.0))
    drops = {(2.5, 0.0): 0.2, (-2.5, 1.2): 0.35, (-2.5, -1.2): 0.0, (0.0, -1.2): 0.0}
    for i, xy in enumerate(drops):
        ball = spec.worldbody.add_body(name=f'ball{i}', pos=[*xy, 0.6])
        ball.add_freejoint()
        ball.add_geom(type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[0.05, 0, 0], mass=0.1)
    model = spec.compile()
    assert model.nhfield == 1 and model.geom('floor').type == mujoco.mjtGeom.mjGEOM_HFIELD
    data = mujoco.MjData(model)
    data.qpos[2] = 0.5
    for _ in range(300):
        mujoco.mj_step(model, data)
    rest = [data.body(f'ball{i}').xpos[2] - 0.05 for i in range(len(drops))]
    np.testing.assert_allclose(rest, list(drops.values()), atol=2e-3)


def _edit(urdf, tmp_path, old, new):
    """A copy of the URDF with one text replacement."""
    text = urdf.read_text()
    assert old in text
    path = tmp_path / 'broken.urdf'
    path.write_text(text.replace(old, new, 1))
    return path


@pytest.mark.parametrize('old, new, words', [
    ('</robot>', '', 'malformed XML'),
    ('name="RR_calf_joint"', 'name="RR_knee_joint"', 'RR_calf_joint'),
    ('name="FL_thigh_joint" type="revolute"', 'name="FL_thigh_joint" type="continuous"',
     'expected revolute'),
    ('gear_ratio="9"', 'gear_ratio="nine"', 'not a number'),
    ('<standing_pose FL', '<standing_posture FL', 'standing_pose'),
    ('FL_hip_joint="0.1"', '', 'lacks attribute "FL_hip_joint"'),
])
def test_malformed_urdf_errors_name_the_file(urdf, tmp_path, old, new, words):
    """Broken XML, a missing or wrong joint, bad motor or pose values: UrdfError names it."""
    path = _edit(urdf, tmp_path, old, new)
    with pytest.raises(UrdfError) as err:
        legged_model(path, DT)
    assert str(path) in str(err.value) and words in str(err.value)


def test_the_policy_joint_order_is_the_urdf_order(tmp_path, repo_root):
    """A copy of the quadruped URDF with the FR leg's joints listed first: the model's policy
    order follows the file (FR first), each joint keeps its own limits and standing pose."""
    import re

    from sim2real.sim.legged import legged_joint_names
    text = (repo_root / 'urdf' / 'quadruped.urdf').read_text()
    blocks = re.findall(r'\s*<joint name="FR_[a-z]+_joint".*?</joint>', text, flags=re.S)
    assert len(blocks) == 4   # hip, thigh, calf, foot
    for block in blocks:
        text = text.replace(block, '')
    first = text.index('<joint ')
    text = text[:first] + ''.join(blocks).strip() + '\n  ' + text[first:]
    path = tmp_path / 'quadruped.urdf'
    path.write_text(text)
    names = legged_joint_names(path)
    assert names[:3] == ('FR_hip_joint', 'FR_thigh_joint', 'FR_calf_joint')
    assert sorted(names) == sorted(JOINT_NAMES)
    _, info = legged_model(path, 0.005)
    _, ref = legged_model(repo_root / 'urdf' / 'quadruped.urdf', 0.005)
    assert info.joint_names == names
    order = [ref.joint_names.index(n) for n in names]
    np.testing.assert_allclose(info.default_joint_pos_rad, ref.default_joint_pos_rad[order])
    np.testing.assert_allclose(info.pos_limits_rad, ref.pos_limits_rad[order])
    np.testing.assert_allclose(info.effort_limit_nm, ref.effort_limit_nm[order])
