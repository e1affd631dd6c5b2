"""The ROS side of a robot, as the policy node runs it: what a robot's ``ros_io`` offers, and
the pieces joint robots compose (joint states and position targets, a base IMU, a velocity
command).

A robot's folder declares ``ROS_IO``: a callable ``(node, params) -> RobotIo`` that
subscribes its streams through the node (``subscribe_sensor``: sensor-data QoS, samples aged
from their DDS arrival; ``subscribe_command``: an operator stream stamped on arrival) and
creates its command publishers. The node owns the loop, services and diagnostics.
"""

from __future__ import annotations

from typing import Callable, Protocol

import numpy as np
from geometry_msgs.msg import Twist
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64MultiArray

from sim2real.deploy import ros_msgs


class RobotIo(Protocol):
    """A robot's publishers, behind the policy node."""

    command_topic: str
    """Where the command goes (named in the node's start-up line)."""

    def publish(self, command: np.ndarray, state: str) -> None:
        """Publish one tick's command (the runtime's StepResult.command in its state)."""

    def diagnostics(self) -> dict[str, float]:
        """Robot figures for /diagnostics (name with unit -> value)."""


class Node(Protocol):
    """What the policy node offers a robot's ROS I/O."""

    runtime: object
    """The node's Runtime (its contract, params and profile)."""

    def subscribe_sensor(self, msg_type, topic: str, to_values: Callable, stream: str) -> None:
        """A sensor stream: to_values(msg) -> (values, stamp_s)."""

    def subscribe_command(self, msg_type, topic: str, to_values: Callable,
                          stream: str) -> None:
        """An operator stream without a stamp: to_values(msg) -> values."""

    def create_publisher(self, msg_type, topic: str, qos_depth: int):
        """rclpy's create_publisher."""


class JointTargetsIo:
    """Joint chain: JointState in (matched by name), position targets out (contract order),
    optional kp / kd arrays; nothing while inactive, so the driver keeps holding the joints."""

    def __init__(self, node: Node, params):
        """Subscribe joint_state_topic; publish command_topic, kp/kd_command_topic."""
        self.n = len(node.runtime.contract.joint_names)
        node.subscribe_sensor(JointState, params.joint_state_topic,
                              ros_msgs.joint_state_to_values, 'joint_state')
        self.publisher = node.create_publisher(Float64MultiArray, params.command_topic, 10)
        self.command_topic = self.publisher.topic_name
        self.gain_publishers = [
            (i, node.create_publisher(Float64MultiArray, topic, 10))
            for i, topic in enumerate((params.kp_command_topic, params.kd_command_topic), 1)
            if topic]

    def publish(self, command: np.ndarray, state: str) -> None:
        """Targets (and the kp, kd blocks of [q*, kp, kd]) unless inactive."""
        if state == 'inactive':
            return
        self.publisher.publish(ros_msgs.float64_array(command[:self.n]))
        for i, publisher in self.gain_publishers:
            publisher.publish(ros_msgs.float64_array(command[i * self.n:(i + 1) * self.n]))

    def diagnostics(self) -> dict[str, float]:
        """Nothing beyond the node's."""
        return {}


def subscribe_base_imu(node: Node, params) -> None:
    """Base IMU with orientation (sensor_msgs/Imu) on imu_topic, stream 'imu'."""
    node.subscribe_sensor(Imu, params.imu_topic, ros_msgs.imu_orientation_to_values, 'imu')


def subscribe_velocity_command(node: Node, params) -> None:
    """Operator velocity command (geometry_msgs/Twist) on velocity_command_topic."""
    node.subscribe_command(Twist, params.velocity_command_topic,
                           ros_msgs.twist_to_velocity_command, 'command')
