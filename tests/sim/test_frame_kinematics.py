"""Torch frame kinematics (sim2real/sim/frame_kinematics.py) against Pinocchio on the same
URDFs: the hand's fingertips and a branched arm with tilted origins and skew axes."""

import numpy as np
import pytest
import torch

from sim2real.assets import urdf_path
from sim2real.deploy.runtime.legged_kinematics import LeggedKinematics
from sim2real.sim.frame_kinematics import FrameKinematics
from sim2real.urdf import UrdfError

ARM = """<robot name="arm">
  <link name="base"/><link name="a"/><link name="b"/><link name="tip"/><link name="side"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="a"/>
    <origin xyz="0.1 -0.05 0.2" rpy="0.3 -0.7 1.1"/><axis xyz="0 0 1"/>
    <limit lower="-2" upper="2" effort="1" velocity="1"/></joint>
  <joint name="j2" type="revolute"><parent link="a"/><child link="b"/>
    <origin xyz="0 0.12 0" rpy="1.5707963267948966 0 0"/><axis xyz="1 1 0"/>
    <limit lower="-2" upper="2" effort="1" velocity="1"/></joint>
  <joint name="t" type="fixed"><parent link="b"/><child link="tip"/>
    <origin xyz="0.03 0.04 -0.05" rpy="0 -0.4 0.2"/></joint>
  <joint name="j3" type="revolute"><parent link="a"/><child link="side"/>
    <origin xyz="-0.02 0 0.07" rpy="0 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2" effort="1" velocity="1"/></joint>
</robot>
"""


def _compare(path, joints, frames, count=20, seed=0):
    """Largest |torch - Pinocchio| over count random configurations in [-2, 2] rad."""
    ours = FrameKinematics(path, joints, frames)
    pin = LeggedKinematics(path, joints, frames)
    q = np.random.default_rng(seed).uniform(-2.0, 2.0, (count, len(joints)))
    got = ours.positions(torch.as_tensor(q)).numpy()
    want = np.stack([pin.foot_positions_b(row) for row in q])
    return np.abs(got - want).max()


def test_a_branched_arm_with_tilted_origins_and_skew_axes(tmp_path):
    """Two frames on branches of a 3-joint arm (origins rotated about all three axes, an axis
    along (1, 1, 0), joints given in another order than the file's): within 1e-12 m."""
    path = tmp_path / 'arm.urdf'
    path.write_text(ARM)
    assert _compare(path, ['j3', 'j1', 'j2'], ['tip', 'side']) < 1e-12


def test_the_hands_fingertips():
    """The hand's four fingertip frames over its 16 joints: within 1e-12 m."""
    path = urdf_path('hand')
    joints = ['if_mcp', 'if_abd', 'if_pip', 'if_dip', 'mf_mcp', 'mf_abd', 'mf_pip', 'mf_dip',
              'rf_mcp', 'rf_abd', 'rf_pip', 'rf_dip', 'th_cmc', 'th_axl', 'th_mcp', 'th_ipl']
    assert _compare(path, joints, ['if_tip', 'mf_tip', 'rf_tip', 'th_tip']) < 1e-12


@pytest.mark.parametrize('joints, frames, words', [
    (['j1', 'j2', 'j3'], ['nowhere'], 'no link "nowhere"'),
    (['j1', 'j3'], ['tip'], 'joint "j2" is not among'),
])
def test_bad_frames_and_joints_are_named(tmp_path, joints, frames, words):
    """A frame that is not a link and a chain joint missing from the joints are refused."""
    path = tmp_path / 'arm.urdf'
    path.write_text(ARM)
    with pytest.raises(UrdfError, match=words):
        FrameKinematics(path, joints, frames)
