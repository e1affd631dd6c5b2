"""The hand's ROS I/O in the policy node: joint states in (matched by name), position targets
out to the forward position controller, and the fingertip guard's figures on /diagnostics."""

from __future__ import annotations

import numpy as np

from sim2real.deploy.robots.hand.runtime import FingertipGuardPart
from sim2real.deploy.ros_io import JointTargetsIo


class HandIo(JointTargetsIo):
    """Joint states in; position targets out."""

    def __init__(self, node, params):
        """Subscribe the joint chain's topics; keep the fingertip guard for diagnostics."""
        super().__init__(node, params)
        self.guard = node.runtime.profile.part(FingertipGuardPart)

    def diagnostics(self) -> dict[str, float]:
        """The smallest distance between two fingertip pads since the node was armed [m]
        (none before the first check)."""
        closest = self.guard.closest_since_enable_m
        return {'fingertip_distance_min_m': closest} if np.isfinite(closest) else {}


ROS_IO = HandIo
