"""toyarm's ROS I/O in the policy node: the joint chain's topics and the reach target."""

from __future__ import annotations

from geometry_msgs.msg import PointStamped
import numpy as np

from sim2real.deploy.ros_io import JointTargetsIo


def point_to_target(msg: PointStamped) -> dict:
    """The target's x, y [m; base frame]."""
    return {'pos_b': np.array([msg.point.x, msg.point.y], dtype=np.float64)}


class ToyArmIo(JointTargetsIo):
    """Joint states and the target in; position targets out."""

    def __init__(self, node, params):
        """Subscribe the joint chain's topics and the target topic."""
        super().__init__(node, params)
        node.subscribe_command(PointStamped, params.target_topic, point_to_target, 'target')


ROS_IO = ToyArmIo
