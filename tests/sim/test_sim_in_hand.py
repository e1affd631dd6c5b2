"""The LEAP-class hand URDF and the in-hand builder: joints, limits, masses, armature,
contacts, the cube, the grasp holding it, Pinocchio agreeing on the fingertips, URDF errors."""

import mujoco
import numpy as np
import pinocchio as pin
import pytest

from sim2real.sim.in_hand import in_hand_model, SolverCfg
from sim2real.sim.joint_robot import fixed_base_model
from sim2real.urdf import UrdfError

DT = 0.005
FINGER = ('mcp', 'abd', 'pip', 'dip')
JOINTS = tuple(f'{f}_{j}' for f in ('if', 'mf', 'rf') for j in FINGER) + (
    'th_cmc', 'th_axl', 'th_mcp', 'th_ipl')
# hand.md section 6.2: LEAP URDF, dexsuite URDF and LEAP_Hand_API LEAPsim_limits agree
FINGER_LIMITS = [(-0.314, 2.23), (-1.047, 1.047), (-0.506, 1.885), (-0.366, 2.042)]
THUMB_LIMITS = [(-0.349, 2.094), (-0.47, 2.443), (-1.20, 1.90), (-1.34, 1.88)]


@pytest.fixture(scope='module')
def urdf(repo_root):
    """Path of the shipped LEAP-class hand URDF."""
    return repo_root / 'urdf' / 'hand.urdf'


@pytest.fixture(scope='module')
def model_info(urdf):
    """The compiled hand + cube at 200 Hz and its InHandInfo."""
    return in_hand_model(urdf, DT)


def test_sixteen_joints_with_the_leap_limits_and_servo_limits(model_info):
    """16 revolute joints in file order (index, middle, ring: MCP flexion, abduction, PIP, DIP;
    thumb CMC, axial, MCP, IP) with LEAP's ranges, 0.29 N m effort, 8.48 rad/s."""
    model, info = model_info
    assert info.joint_names == JOINTS
    assert model.nu == 16 and model.njnt == 17   # + the cube's free joint
    np.testing.assert_allclose(info.pos_limits_rad, FINGER_LIMITS * 3 + THUMB_LIMITS)
    np.testing.assert_allclose(info.effort_limit_nm, 0.29)
    np.testing.assert_allclose(info.velocity_limit_rad_s, 8.48)
    np.testing.assert_allclose(info.stall_torque_nm, 0.93)
    assert np.all(info.pos_limits_rad[:, 0] <= info.default_joint_pos_rad)
    assert np.all(info.default_joint_pos_rad <= info.pos_limits_rad[:, 1])


def test_masses_armature_and_the_cube(model_info):
    """Hand 0.746 kg (the LEAP URDF's links), armature 1.7e-8 x 288.35^2 = 1.41e-3 kg m^2 on
    every hand joint and none on the cube; the cube 7 cm, 108 g, friction 0.3, after the hand
    in qpos, resting on the palm centre (palm top 0.25 m + half its edge)."""
    model, info = model_info
    assert model.body_subtreemass[model.body('palm').id] == pytest.approx(0.746, abs=1e-9)
    np.testing.assert_allclose(model.dof_armature[info.qvel_adr], 1.7e-8 * 288.35 ** 2)
    cube = slice(info.object_qvel_adr, info.object_qvel_adr + 6)
    assert not model.dof_armature[cube].any()
    assert model.body_mass[info.object_body_id] == pytest.approx(0.108)
    np.testing.assert_allclose(model.geom_size[info.object_geom_id], [0.035] * 3)
    assert model.geom_friction[info.object_geom_id, 0] == pytest.approx(0.3)
    assert info.object_qpos_adr == 16 and model.nq == 23
    np.testing.assert_allclose(info.object_spawn_pos_m, [-0.03, 0.0, 0.25 + 0.0355])


def test_contact_settings_from_the_urdf(model_info):
    """Fingertip spheres 0.7, the rest of the hand 0.2 (Playground's values), five palm
    exclusions, and no contact from the solver defaults: 20 iterations, 10 line searches."""
    model, info = model_info
    tips = [model.geom(f'{f}_tip_collision').id for f in ('if', 'mf', 'rf', 'th')]
    hand = [g for g in range(model.ngeom)
            if model.geom_bodyid[g] in info.hand_body_ids and g not in tips]
    np.testing.assert_allclose(model.geom_friction[tips, 0], 0.7)
    np.testing.assert_allclose(model.geom_friction[hand, 0], 0.2)
    assert model.nexclude == 5
    assert (model.opt.iterations, model.opt.ls_iterations) == (20, 10)
    assert model.opt.timestep == DT


def test_the_default_grasp_holds_the_cube_for_5_s(model_info):
    """Under Kp 3 N m/rad, Kd 0.1 N m s/rad at the default pose, the cube stays within 5 mm
    of where it was spawned, on the palm and against the thumb, after 5 s."""
    model, info = model_info
    data = mujoco.MjData(model)
    data.qpos[info.qpos_adr] = info.default_joint_pos_rad
    q0 = info.default_joint_pos_rad
    for _ in range(round(5.0 / DT)):
        q, qd = data.qpos[info.qpos_adr], data.qvel[info.qvel_adr]
        data.ctrl[info.actuator_ids] = np.clip(3.0 * (q0 - q) - 0.1 * qd, -0.29, 0.29)
        mujoco.mj_step(model, data)
    cube = data.qpos[info.object_qpos_adr:info.object_qpos_adr + 3]
    assert np.linalg.norm(cube - info.object_spawn_pos_m) < 0.005
    cube_geom = info.object_geom_id
    touching = {model.body(model.geom_bodyid[c.geom1 + c.geom2 - cube_geom]).name
                for c in data.contact[:data.ncon] if cube_geom in (c.geom1, c.geom2)}
    assert {'palm', 'th_px'} <= touching


def test_pinocchio_and_mujoco_agree_on_the_fingertips(urdf, model_info):
    """The same URDF in Pinocchio (fixed base) and MuJoCo: fingertip positions agree to 1e-9 m
    at 20 random joint configurations (the fingertip guard's kinematics)."""
    model, info = model_info
    pmodel = pin.buildModelFromUrdf(str(urdf))
    pdata = pmodel.createData()
    names = [pmodel.names[i] for i in range(1, pmodel.njoints)]
    order = [names.index(n) for n in info.joint_names]
    data = mujoco.MjData(model)
    rng = np.random.default_rng(0)
    for _ in range(20):
        q = rng.uniform(info.pos_limits_rad[:, 0], info.pos_limits_rad[:, 1])
        data.qpos[info.qpos_adr] = q
        mujoco.mj_kinematics(model, data)
        qp = np.zeros(pmodel.nq)
        qp[order] = q
        pin.framesForwardKinematics(pmodel, pdata, qp)
        for name, body in zip(info.fingertip_names, info.fingertip_body_ids):
            frame = pdata.oMf[pmodel.getFrameId(name)].translation
            np.testing.assert_allclose(frame, data.xpos[body], atol=1e-9)


def test_the_solver_settings_reach_the_model(urdf):
    """SolverCfg sets iterations, line searches and the cone; an unknown cone is refused."""
    model, _ = in_hand_model(urdf, 0.01, SolverCfg(5, 8, 'elliptic', 10.0))
    assert (model.opt.iterations, model.opt.ls_iterations) == (5, 8)
    assert model.opt.cone == mujoco.mjtCone.mjCONE_ELLIPTIC and model.opt.impratio == 10.0
    with pytest.raises(ValueError, match='cone'):
        in_hand_model(urdf, 0.01, SolverCfg(cone='round'))


def _edit(urdf, tmp_path, old, new):
    """A copy of the URDF with one text replacement."""
    text = urdf.read_text()
    assert old in text
    path = tmp_path / 'broken.urdf'
    path.write_text(text.replace(old, new, 1))
    return path


@pytest.mark.parametrize('old, new, words', [
    ('<exclude body1="palm" body2="if_base"/>', '<exclude body1="palm" body2="if_bse"/>',
     'names no link "if_bse"'),
    ('geoms="if_tip_collision', 'geoms="if_tipp_collision', "no collision geom ['if_tipp"),
    ('friction="0.7 0.05 0.0002"', 'friction="0.7 0.05"', 'is not 3 numbers'),
    ('mass_kg="0.108"', 'mass_kg="-0.108"', 'mass_kg > 0'),
    ('link="palm_center" pos_m', 'link="palm_centre" pos_m', 'link "palm_centre"'),
    ('shape="box"', 'shape="cone"', "shape in ['box', 'sphere']"),
    ('if_mcp="1.2" if_abd', 'if_mcpp="1.2" if_abd', "names joints ['if_mcpp']"),
    ('joints="if_mcp if_abd', 'joints="if_abd', "covers joints ['if_mcp']"),
    ('<fingertips links="if_tip', '<fingertips links="if_top', "no link ['if_top']"),
])
def test_malformed_hand_urdf_errors_name_the_file(urdf, tmp_path, old, new, words):
    """A wrong link, geom, number, mass, shape, pose joint, motor or fingertip: UrdfError
    names the file and the item."""
    path = _edit(urdf, tmp_path, old, new)
    with pytest.raises(UrdfError) as err:
        in_hand_model(path, DT)
    assert str(path) in str(err.value)
    assert words in str(err.value)


def test_a_fixed_base_urdf_without_extensions_is_unchanged(tmp_path):
    """No <sim2real>: no armature, no exclusions, no object, MuJoCo's friction 1."""
    path = tmp_path / 'arm.urdf'
    path.write_text("""<robot name="arm">
  <link name="base"/>
  <link name="l1"><inertial><mass value="0.5"/><inertia ixx="1e-3" ixy="0" ixz="0" iyy="1e-3"
    iyz="0" izz="1e-3"/></inertial><collision><geometry><box size="0.1 0.02 0.02"/></geometry>
    </collision></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="2" velocity="3"/></joint>
</robot>""")
    model, info = fixed_base_model(path, DT)
    assert model.nq == 1 and model.nexclude == 0 and not model.dof_armature.any()
    assert model.geom_friction[0, 0] == 1.0
