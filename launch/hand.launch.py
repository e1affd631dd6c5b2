"""Run a hand policy on the LEAP-class hand: the policy node with its parameter file.

    ros2 launch sim2real hand.launch.py policy_file:=/path/to/hand_rotate.onnx

Connect the hand's ros2_control stack (Dynamixel bus, current-based position mode) so that it
publishes `joint_states` (sensor_msgs/JointState, joint_state_broadcaster; any joint order)
and runs a forward position controller `joint_group_position_controller` whose joint list is
in the contract's order (listed in config/hand.yaml). Place the cube on the palm, then arm
with `ros2 service call /policy_node/enable std_srvs/srv/SetBool "{data: true}"`: the node
seeds its target integrator with the measured joints, blends in over soft_start_s, then the
policy turns the cube.

A policy that observes the cube (hand-reorient) also needs its tracked pose on `cube_pose`
and goal orientations on `cube_goal` (geometry_msgs/PoseStamped, the mount frame); set
`current_limit_topic` in config/hand.yaml for a driver that writes the servos' current limit.

A thin include of policy.launch.py with robot:=hand.
"""

from launch import LaunchDescription
from launch.actions import IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import PathJoinSubstitution
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    """policy.launch.py with robot:=hand (its other arguments pass through)."""
    return LaunchDescription([
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(PathJoinSubstitution(
                [FindPackageShare('sim2real'), 'launch', 'policy.launch.py'])),
            launch_arguments={'robot': 'hand'}.items()),
    ])
