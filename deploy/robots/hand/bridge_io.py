"""The hand's twin in the bridge node: joint states out (servo-ID order), the cube's tracked
pose out, the forward position controller's targets in."""

from __future__ import annotations

from geometry_msgs.msg import PoseStamped
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState

from sim2real.deploy import ros_msgs
from sim2real.deploy.robots.hand.bridge_sim import SERVO_ORDER


class HandBridgeIo:
    """Publishes joint states and the tracked cube pose, applies position targets."""

    reset_message = 'reset to the grasp pose with the cube on the palm, faults cleared'

    def __init__(self, node, p: dict, sim):
        """The joint_states and cube_pose publishers and the targets subscription."""
        self.node, self.sim = node, sim
        self.publishers = {
            'joint_states': node.create_publisher(
                JointState, p['joint_state_topic'], qos_profile_sensor_data),
            'cube_pose': node.create_publisher(
                PoseStamped, p['cube_pose_topic'], qos_profile_sensor_data)}
        frame = p['cube_pose_frame']
        self.makers = {
            'joint_states': lambda v, stamp_s: ros_msgs.make_joint_state(
                SERVO_ORDER, v['pos_rad'], v['vel_rad_s'], v['effort_nm'], stamp_s),
            'cube_pose': lambda v, stamp_s: ros_msgs.make_pose_stamped(
                v['pos_m'], v['quat_wxyz'], stamp_s, frame)}
        ros_msgs.subscribe_joint_targets(node, p['command_topic'], sim)
        self.description = (f'hand holding the cube at its grasp pose, physics '
                            f'{p["physics_rate_hz"]} Hz, joint_states '
                            f'{p["joint_states_rate_hz"]} Hz in servo order; the tracked '
                            f'cube on {p["cube_pose_topic"]} at {p["cube_pose_rate_hz"]} Hz; '
                            f'targets on {p["command_topic"]}')


BRIDGE_IO = HandBridgeIo
