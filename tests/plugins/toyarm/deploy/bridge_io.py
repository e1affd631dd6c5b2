"""toyarm's side of the bridge node: joint_states out, position targets in."""

from __future__ import annotations

from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState

from sim2real.deploy import ros_msgs


class ToyArmBridgeIo:
    """Publishes joint states, applies position targets."""

    reset_message = 'reset to the rest pose, faults cleared'

    def __init__(self, node, p: dict, sim):
        """The joint_states publisher and the targets subscription."""
        self.node, self.sim = node, sim
        names = sim.info.joint_names
        self.publishers = {'joint_states': node.create_publisher(
            JointState, p['joint_state_topic'], qos_profile_sensor_data)}
        self.makers = {'joint_states': lambda v, stamp_s: ros_msgs.make_joint_state(
            names, v['pos_rad'], v['vel_rad_s'], v['effort_nm'], stamp_s)}
        ros_msgs.subscribe_joint_targets(node, p['command_topic'], sim)
        self.description = (f'toyarm at its rest pose, physics {p["physics_rate_hz"]} Hz, '
                            f'targets on {p["command_topic"]}')


BRIDGE_IO = ToyArmBridgeIo
