"""The quadruped's runtime entry: the joint chain with a floating base's IMU, a velocity
command and leg odometry."""

from __future__ import annotations

from functools import partial

from sim2real.deploy.robots.quadruped.params import QuadrupedParams
from sim2real.deploy.runtime.integrators import JOINT_POSITION_KINDS
from sim2real.deploy.runtime.joints import check_joint_params, JointProfile
from sim2real.deploy.runtime.parts import BaseImu, LegOdometryPart, VelocityCommand
from sim2real.deploy.runtime.profile import RobotRuntime

PARTS = (BaseImu, VelocityCommand, LegOdometryPart)
"""What the quadruped composes onto the joint chain, in latch order."""

RUNTIME = RobotRuntime(
    params_cls=QuadrupedParams,
    make_profile=partial(JointProfile, parts=PARTS),
    check_params=check_joint_params,
    command_interfaces={'joint_position': JOINT_POSITION_KINDS},
)
