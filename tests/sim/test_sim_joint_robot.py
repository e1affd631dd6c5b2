"""Fixed-base jointed robots from a URDF: joint names in the URDF's order, torque actuators,
no free joint, and clear errors for what cannot be one."""

import mujoco
import numpy as np
import pytest
import torch

from sim2real.sim.backends import make_backend
from sim2real.sim.joint_robot import fixed_base_model, movable_joints
from sim2real.urdf import UrdfError

ARM = """<?xml version="1.0"?>
<robot name="arm">
  <link name="base_link"><inertial><mass value="1.0"/><origin xyz="0 0 0"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="a"><inertial><mass value="0.5"/><origin xyz="0.15 0 0"/>
    <inertia ixx="0.001" iyy="0.004" izz="0.004" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="b"><inertial><mass value="0.3"/><origin xyz="0.1 0 0"/>
    <inertia ixx="0.001" iyy="0.002" izz="0.002" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="tip"/>
  <joint name="wrist" type="revolute"><parent link="a"/><child link="b"/>
    <origin xyz="0.3 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-1.5" upper="1.5" effort="4" velocity="8"/></joint>
  <joint name="base" type="revolute"><parent link="base_link"/><child link="a"/>
    <origin xyz="0 0 0.1"/><axis xyz="0 1 0"/>
    <limit lower="-2.0" upper="2.0" effort="8" velocity="6"/></joint>
  <joint name="fix" type="fixed"><parent link="b"/><child link="tip"/>
    <origin xyz="0.2 0 0"/></joint>
</robot>
"""


@pytest.fixture
def arm(tmp_path):
    """The URDF above, on disk."""
    path = tmp_path / 'arm.urdf'
    path.write_text(ARM)
    return path


def test_joint_names_follow_the_urdf_and_the_base_is_welded(arm):
    """Movable joints in file order (wrist before base), no free joint, one actuator each,
    limits from the URDF; the tip link on a fixed joint stays a body."""
    assert movable_joints(arm) == ('wrist', 'base')
    model, info = fixed_base_model(arm, 0.005)
    assert model.nq == 2 and model.nv == 2 and model.nu == 2
    assert mujoco.mjtJoint.mjJNT_FREE not in set(model.jnt_type)
    assert info.joint_names == ('wrist', 'base')
    np.testing.assert_allclose(info.effort_limit_nm, [4.0, 8.0])
    np.testing.assert_allclose(info.velocity_limit_rad_s, [8.0, 6.0])
    np.testing.assert_allclose(info.pos_limits_rad, [[-1.5, 1.5], [-2.0, 2.0]])
    assert model.body('tip').id > 0 and model.opt.timestep == 0.005


def test_gravity_swings_the_pitch_joint_of_a_welded_base(arm):
    """200 ms unactuated on the batch backend: the y-axis joint falls under gravity, the
    same in both simulations; the base link is a child of the world without a joint, and
    after 200 ms simulated by MuJoCo it is still at the origin while the tip has dropped."""
    model, info = fixed_base_model(arm, 0.002)
    backend = make_backend(model, 2, 'mujoco', 'cpu', 1)
    backend.simulate(100, lambda dt: None)
    q = backend.qpos[:, info.qpos_adr[1]]
    assert torch.all(q.abs() > 0.1) and torch.allclose(q[0], q[1])
    base = model.body('base_link').id
    assert model.body_parentid[base] == 0 and model.body_jntnum[base] == 0
    data = mujoco.MjData(model)
    mujoco.mj_step(model, data, 100)
    np.testing.assert_allclose(data.xpos[base], 0.0, atol=1e-12)
    assert data.xpos[model.body('tip').id][2] < 0.1 - 0.05


def test_a_joint_without_limits_is_refused(tmp_path, arm):
    """A continuous joint has no position range for the deploy clamp: UrdfError naming it."""
    path = tmp_path / 'spin.urdf'
    path.write_text(ARM.replace('name="wrist" type="revolute"', 'name="wrist" type="continuous"'))
    with pytest.raises(UrdfError, match='"wrist" is continuous'):
        fixed_base_model(path, 0.005)


def test_a_robot_with_nothing_to_move_is_refused(tmp_path):
    """A URDF without movable joints: UrdfError saying so."""
    path = tmp_path / 'rock.urdf'
    path.write_text('<?xml version="1.0"?><robot name="rock"><link name="base_link">'
                    '<inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" '
                    'ixz="0" iyz="0"/></inertial></link></robot>')
    with pytest.raises(UrdfError, match='no movable joint'):
        fixed_base_model(path, 0.005)
