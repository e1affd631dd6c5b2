"""The quadruped's ROS I/O in the policy node: the joint chain's topics, the base IMU, the
operator's cmd_vel, and the leg-odometry base velocity on /diagnostics and, every tick, on
``~/leg_odometry`` (geometry_msgs/TwistStamped, base frame)."""

from __future__ import annotations

from geometry_msgs.msg import TwistStamped
import numpy as np
from std_msgs.msg import Float64MultiArray

from sim2real.deploy import ros_msgs
from sim2real.deploy.ros_io import JointTargetsIo, subscribe_base_imu, subscribe_velocity_command
from sim2real.deploy.runtime.parts import LegOdometryPart


class QuadrupedIo(JointTargetsIo):
    """Joint states, base IMU and velocity command in; position targets (and gains) out."""

    def __init__(self, node, params):
        """Subscribe and create publishers (see the parts)."""
        super().__init__(node, params)
        subscribe_base_imu(node, params)
        subscribe_velocity_command(node, params)
        if params.foot_force_topic:
            node.subscribe_command(Float64MultiArray, params.foot_force_topic,
                                   lambda msg: {'force': ros_msgs.from_float64_array(msg)},
                                   'foot_force')
        self.odometry = node.runtime.profile.part(LegOdometryPart).odometry
        self.node = node
        self.odometry_publisher = node.create_publisher(TwistStamped, '~/leg_odometry', 10) \
            if self.odometry is not None else None

    def publish(self, command: np.ndarray, state: str) -> None:
        """The joint chain's command, then the leg-odometry estimate (every tick)."""
        super().publish(command, state)
        if self.odometry_publisher is None:
            return
        msg = TwistStamped()
        msg.header.stamp = self.node.get_clock().now().to_msg()
        msg.header.frame_id = 'base'
        msg.twist.linear.x, msg.twist.linear.y, msg.twist.linear.z = (
            float(v) for v in self.odometry.lin_vel_b)
        self.odometry_publisher.publish(msg)

    def diagnostics(self) -> dict[str, float]:
        """The leg-odometry base velocity (base frame), when the contract names the feet."""
        if self.odometry is None:
            return {}
        return {f'leg_odometry_v{axis}_m_s': float(v)
                for axis, v in zip('xyz', np.asarray(self.odometry.lin_vel_b))}


ROS_IO = QuadrupedIo
