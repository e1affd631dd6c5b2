"""The quadrotor's ROS I/O in the policy node: odometry, IMU and setpoint in; crazyswarm2's
cmd_vel_legacy (geometry_msgs/Twist) or rotor speeds (std_msgs/Float64MultiArray) out."""

from __future__ import annotations

from geometry_msgs.msg import PointStamped, Twist
from nav_msgs.msg import Odometry
import numpy as np
from sensor_msgs.msg import Imu
from std_msgs.msg import Float64MultiArray

from sim2real.deploy import ros_msgs
from sim2real.deploy.robots.quadrotor.cmd_vel_legacy import (
    from_cmd_vel_legacy, thrust_map, ThrustMap, to_cmd_vel_legacy)
from sim2real.deploy.runtime.sensors import rotmat_from_quat


class QuadrotorIo:
    """Subscriptions and the command publisher of the quadrotor policy node."""

    def __init__(self, node, params):
        """odom, imu (sensor-data QoS) and setpoint in; the command on command_topic."""
        to_values = (ros_msgs.odometry_to_values if params.odom_twist_frame == 'body'
                     else world_twist_odometry_to_values)
        node.subscribe_sensor(Odometry, params.odom_topic, to_values, 'odom')
        self.twist = node.runtime.profile.twist
        node.subscribe_sensor(Imu, params.imu_topic, ros_msgs.imu_to_values, 'imu')
        node.subscribe_sensor(PointStamped, params.setpoint_topic, ros_msgs.point_to_values,
                              'setpoint', sensor_qos=False)
        self.legacy = params.command_interface == 'cmd_vel_legacy'
        self.thrust_map = thrust_map(params.legacy_thrust_map)
        self.publisher = node.create_publisher(
            Twist if self.legacy else Float64MultiArray, params.command_topic, 10)
        self.command_topic = self.publisher.topic_name

    def publish(self, command: np.ndarray, state: str) -> None:
        """Every tick, motors off included (the firmware's command watchdog expects it)."""
        if self.legacy:
            msg = twist_from_command(command[0], command[1:4], self.thrust_map)
        else:
            msg = ros_msgs.float64_array(command)
        self.publisher.publish(msg)

    def diagnostics(self) -> dict[str, float]:
        """How much of the position's motion the odometry twist leaves unexplained [m]."""
        return {'odom_twist_residual_m': float(self.twist.residual_m)}


def world_twist_odometry_to_values(msg: Odometry) -> tuple[dict[str, np.ndarray], float]:
    """odometry_to_values of a message whose twist is world-frame: the linear and angular
    velocity rotated into the body by the message's own attitude (R^T v)."""
    values, stamp_s = ros_msgs.odometry_to_values(msg)
    return twist_world_to_body(values), stamp_s


def twist_world_to_body(values: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """values with lin_vel_b and ang_vel_b rotated from the world into the body frame (a
    quaternion that is no rotation gives NaN, which the runtime refuses)."""
    rotmat = rotmat_from_quat(values['quat_wxyz'])
    return dict(values, lin_vel_b=rotmat.T @ values['lin_vel_b'],
                ang_vel_b=rotmat.T @ values['ang_vel_b'])


ROS_IO = QuadrotorIo


def twist_from_command(thrust_n: float, rates_rad_s_b, thrust: ThrustMap) -> Twist:
    """cmd_vel_legacy Twist of a collective thrust [N] and body rates [rad/s]."""
    msg = Twist()
    (msg.linear.x, msg.linear.y, msg.linear.z,
     msg.angular.z) = to_cmd_vel_legacy(thrust_n, rates_rad_s_b, thrust)
    return msg


def command_from_twist(msg: Twist, thrust: ThrustMap) -> tuple[float, np.ndarray]:
    """Collective thrust [N] and body rates (3,) [rad/s] of a cmd_vel_legacy Twist."""
    return from_cmd_vel_legacy(msg.linear.x, msg.linear.y, msg.linear.z, msg.angular.z, thrust)
