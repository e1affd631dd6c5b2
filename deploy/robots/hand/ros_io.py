"""The hand's ROS I/O in the policy node: joint states in (matched by name), position targets
out to the forward position controller, the fingertip guard's figures on /diagnostics, and
for a policy that observes the cube its tracked pose and goal (geometry_msgs/PoseStamped)."""

from __future__ import annotations

import numpy as np
from geometry_msgs.msg import PoseStamped
from std_msgs.msg import Float64MultiArray

from sim2real.deploy import ros_msgs
from sim2real.deploy.robots.hand.runtime import FingertipGuardPart, ObjectTrackerPart
from sim2real.deploy.ros_io import JointTargetsIo


class HandIo(JointTargetsIo):
    """Joint states (and the tracked cube and its goal) in; position targets (and the
    servos' current limits) out."""

    def __init__(self, node, params):
        """Subscribe the joint chain's topics, the tracker's and the goal's when the policy
        observes the cube; publish current limits when current_limit_topic is set; keep the
        fingertip guard for diagnostics."""
        super().__init__(node, params)
        self.guard = node.runtime.profile.part(FingertipGuardPart)
        limit_nm = node.runtime.profile.torque_limit_nm
        self.current_limit_a = limit_nm / params.torque_constant_nm_per_a
        """Per-joint current limits [A], contract order."""
        self.current_publisher = (node.create_publisher(
            Float64MultiArray, params.current_limit_topic, 10)
            if params.current_limit_topic else None)
        if node.runtime.profile.part(ObjectTrackerPart).active:
            node.subscribe_sensor(PoseStamped, params.object_pose_topic,
                                  ros_msgs.pose_stamped_to_values, 'object_pose')
            node.subscribe_command(PoseStamped, params.goal_topic,
                                   ros_msgs.pose_orientation_to_values, 'goal')

    def publish(self, command: np.ndarray, state: str) -> None:
        """Targets as the joint chain publishes them; with each, the current limits."""
        super().publish(command, state)
        if self.current_publisher is not None and state != 'inactive':
            self.current_publisher.publish(ros_msgs.float64_array(self.current_limit_a))

    def diagnostics(self) -> dict[str, float]:
        """The smallest distance between two fingertip pads since the node was armed [m]
        (none before the first check)."""
        closest = self.guard.closest_since_enable_m
        return {'fingertip_distance_min_m': closest} if np.isfinite(closest) else {}


ROS_IO = HandIo
