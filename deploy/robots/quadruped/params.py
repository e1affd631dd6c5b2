"""Node parameters of the quadruped policy node (config/quadruped.yaml, section policy_node):
the joint chain's, the base IMU's, the velocity command's and leg odometry's."""

from __future__ import annotations

from dataclasses import dataclass

from sim2real.deploy.runtime.params import JointParams
from sim2real.deploy.runtime.parts import BaseImuParams, LegOdometryParams, VelocityCommandParams


@dataclass
class QuadrupedParams(LegOdometryParams, VelocityCommandParams, BaseImuParams, JointParams):
    """Parameters of a legged robot's policy node; per-joint lists follow joint_names
    (bases in reverse: the dataclass fields start with JointParams', as the file lists them)."""
