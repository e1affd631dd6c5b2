"""Named free bodies: a fixed-base arm beside a free cube, and a floating-base robot's base."""

import mujoco
import pytest
import torch

from sim2real.sim.backend import SimulationError
from sim2real.sim.backends import make_backend
from sim2real.sim.bodies import free_joints

ARM_AND_CUBE = """
<mujoco>
  <option timestep="0.002"/>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 0.1"/>
    <body name="link1" pos="0 0 0.5">
      <joint name="shoulder" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03" mass="1"/>
      <body name="link2" pos="0.3 0 0">
        <joint name="elbow" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03" mass="0.5"/>
      </body>
    </body>
    <body name="cube" pos="0.5 0.4 0.3">
      <freejoint name="cube_free"/>
      <geom type="box" size="0.035 0.035 0.035" mass="0.1"/>
    </body>
  </worldbody>
</mujoco>
"""


@pytest.fixture
def arm():
    """Two simulations of a fixed-base two-joint arm and a free cube (qpos: 2 hinges, 7)."""
    model = mujoco.MjModel.from_xml_string(ARM_AND_CUBE)
    return make_backend(model, 2, num_threads=1)


def test_free_joints_are_found_after_the_robot_joints(arm):
    found = free_joints(arm.model)
    assert list(found) == ['cube_free']
    cube = found['cube_free']
    assert (cube.body, cube.qpos_adr, cube.qvel_adr) == ('cube', 2, 2)


def test_cube_view_reads_writes_and_falls(arm):
    cube = arm.free_body('cube_free')
    torch.testing.assert_close(cube.pos_w[0], torch.tensor([0.5, 0.4, 0.3], dtype=torch.float64))
    ids = torch.tensor([1])
    cube.write(ids, torch.tensor([[0.1, 0.2, 1.0]]), torch.tensor([[0.0, 0.0, 0.0, 1.0]]),
               torch.zeros(1, 3), torch.tensor([[0.0, 0.0, 2.0]]))
    assert arm.qpos[1, 2:5].tolist() == pytest.approx([0.1, 0.2, 1.0])
    assert arm.qpos[1, 0:2].tolist() == [0.0, 0.0]           # the arm's joints untouched
    state = cube.state()
    # rotated 180 deg about z: body x points along world -x
    torch.testing.assert_close(state['rotmat_wb'][1, 0, 0], torch.tensor(-1.0))
    arm.simulate(50, lambda dt: None)                       # 0.1 s of free fall
    z = cube.pos_w[1, 2].item()
    assert z == pytest.approx(1.0 - 0.5 * 9.81 * 0.1 ** 2, abs=2e-3)
    assert cube.ang_vel_b[1, 2].item() == pytest.approx(2.0, abs=1e-6)


def test_a_fixed_base_model_has_no_root_state(arm):
    with pytest.raises(SimulationError, match=r'no free joint "root".*cube_free'):
        arm.root_state()
    with pytest.raises(SimulationError, match='no free joint "lid"'):
        arm.free_body('lid')


def test_floating_base_robot_base_is_its_root_joint():
    from sim2real.assets import urdf_path
    from sim2real.sim.mjcf import quadrotor_model
    model, _ = quadrotor_model(urdf_path('quadrotor'), 0.005)
    backend = make_backend(model, 1, num_threads=1)
    assert backend.base.joint.body == 'base_link'
    assert backend.root_pos_w.data_ptr() == backend.qpos.data_ptr()
