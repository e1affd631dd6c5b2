"""The quadrotor's twin in the bridge node: odometry and IMU out, cmd_vel_legacy (Twist)
or rotor speeds (Float64MultiArray) in."""

from __future__ import annotations

from functools import partial

from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
import numpy as np
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import Imu
from std_msgs.msg import Float64MultiArray

from sim2real import terms
from sim2real.deploy import ros_msgs
from sim2real.deploy.robots.quadrotor.cmd_vel_legacy import thrust_map
from sim2real.deploy.robots.quadrotor.ros_io import command_from_twist


class QuadrotorBridgeIo:
    """The twin's side of the bridge node: odom and imu out, the command in."""

    reset_message = 'reset to start_pos_m, held, faults cleared'

    def __init__(self, node, p: dict, sim):
        """Publishers of the streams; cmd_vel_legacy or rotor-speed commands."""
        self.node, self.sim = node, sim
        self.thrust_map = thrust_map(p['legacy_thrust_map'])
        """The firmware's thrust command -> collective thrust (the node's map, inverted)."""
        self.publishers = {
            'odom': node.create_publisher(Odometry, p['odom_topic'], qos_profile_sensor_data),
            'imu': node.create_publisher(Imu, p['imu_topic'], qos_profile_sensor_data)}
        self.makers = {'odom': partial(driver_odometry, p['odom_twist_frame'],
                                       p['odom_angular_velocity']),
                       'imu': ros_msgs.make_imu}
        if p['command_interface'] == 'cmd_vel_legacy':
            node.subscribe_command(Twist, p['command_topic'], self._on_twist)
        else:
            node.subscribe_command(Float64MultiArray, p['command_topic'], self._on_speeds)
        self.description = (
            f'quadrotor at {p["start_pos_m"]} held until {p["hold_until_thrust_fraction"]} x '
            f'hover ({sim.hover_thrust_n:.4f} N); physics {p["physics_rate_hz"]} Hz, '
            f'odom {p["odom_rate_hz"]} Hz, imu {p["imu_rate_hz"]} Hz')

    def _on_twist(self, msg: Twist, info: dict) -> None:
        """cmd_vel_legacy -> [thrust N, body rates rad/s]."""
        thrust_n, rates = command_from_twist(msg, self.thrust_map)
        now_s = ros_msgs.arrival_steady_s(info)
        self.node.apply_command(
            lambda t_s: self.sim.set_command('thrust_body_rates', [thrust_n, *rates], t_s),
            now_s, 'non-finite command')

    def _on_speeds(self, msg: Float64MultiArray, info: dict) -> None:
        """Rotor speeds [rad/s], URDF rotor order."""
        speeds = ros_msgs.from_float64_array(msg)
        if speeds.shape != (4,):
            self.node.get_logger().warning(
                f'rotor speed command of size {speeds.size}, expected 4')
            return
        now_s = ros_msgs.arrival_steady_s(info)
        self.node.apply_command(lambda t_s: self.sim.set_command('rotor_speeds', speeds, t_s),
                                now_s, 'non-finite command')


def driver_odometry(frame: str, angular: bool, values: dict, stamp_s: float) -> Odometry:
    """nav_msgs/Odometry as the twin's driver publishes it: the twist in the body frame, or in
    the world frame (crazyswarm2's C++ server), its angular part zero where the driver leaves
    it so (angular false)."""
    if frame == 'world':
        rotmat = terms.quat_to_rotmat(np.asarray(values['quat_wxyz'], dtype=np.float64))
        values = dict(values, lin_vel_b=rotmat @ values['lin_vel_b'],
                      ang_vel_b=rotmat @ values['ang_vel_b'])
    if not angular:
        values = dict(values, ang_vel_b=np.zeros(3))
    return ros_msgs.make_odometry(values, stamp_s)


BRIDGE_IO = QuadrotorBridgeIo
