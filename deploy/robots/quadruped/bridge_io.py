"""The quadruped's twin in the bridge node: joint states and IMU out, the forward position
controller's targets (and optional kp / kd arrays) in."""

from __future__ import annotations

from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64MultiArray

from sim2real.deploy import ros_msgs
from sim2real.deploy.robots.quadruped.bridge_sim import PUBLISHED_ORDER


class QuadrupedBridgeIo:
    """The twin's side of the bridge node: joint_states and imu out, targets (and gains) in."""

    reset_message = 'reset to the standing pose, faults cleared'

    def __init__(self, node, p: dict, sim):
        """Publishers of the streams; position targets and optional kp / kd arrays."""
        self.node, self.sim = node, sim
        self.publishers = {
            'joint_states': node.create_publisher(JointState, p['joint_state_topic'],
                                                  qos_profile_sensor_data),
            'imu': node.create_publisher(Imu, p['imu_topic'], qos_profile_sensor_data)}
        self.makers = {'joint_states': make_joint_state,
                       'imu': ros_msgs.make_imu_with_orientation}
        ros_msgs.subscribe_joint_targets(node, p['command_topic'], sim)
        for kind in ('kp', 'kd'):
            if p[f'{kind}_command_topic']:
                node.subscribe_command(
                    Float64MultiArray, p[f'{kind}_command_topic'],
                    lambda msg, info, kind=kind: self._on_gains(kind, msg, info))
        self.description = (
            f'quadruped standing at the default pose, PD holding it; physics '
            f'{p["physics_rate_hz"]} Hz, joint_states {p["joint_states_rate_hz"]} Hz, imu '
            f'{p["imu_rate_hz"]} Hz; targets on {p["command_topic"]}')

    def _on_gains(self, kind: str, msg: Float64MultiArray, info: dict) -> None:
        """kp [N m/rad] or kd [N m s/rad] per joint (JOINT_ORDER)."""
        gains = ros_msgs.from_float64_array(msg)
        self.node.apply_command(lambda _t_s: self.sim.set_gains(kind, gains),
                                ros_msgs.arrival_steady_s(info), f'invalid {kind}')


def make_joint_state(values: dict, stamp_s: float) -> JointState:
    """JointState of QuadrupedSim.joint_states() values (PUBLISHED_ORDER names)."""
    return ros_msgs.make_joint_state(PUBLISHED_ORDER, values['pos_rad'], values['vel_rad_s'],
                                     values['effort_nm'], stamp_s)


BRIDGE_IO = QuadrupedBridgeIo
