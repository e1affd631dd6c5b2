"""The hand's ROS I/O in the policy node: joint states in (matched by name), position targets
out to the forward position controller, and the fingertip guard's figures on /diagnostics."""

from __future__ import annotations

from sim2real.deploy.robots.hand.runtime import FingertipGuardPart
from sim2real.deploy.ros_io import JointTargetsIo


class HandIo(JointTargetsIo):
    """Joint states in; position targets out."""

    def __init__(self, node, params):
        """Subscribe the joint chain's topics; keep the fingertip guard for diagnostics."""
        super().__init__(node, params)
        self.guard = node.runtime.profile.part(FingertipGuardPart)

    def diagnostics(self) -> dict[str, float]:
        """The smallest distance between two fingertip pads [m] at the last check."""
        return {'fingertip_distance_min_m': self.guard.closest_m()}


ROS_IO = HandIo
