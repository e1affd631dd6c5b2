"""Run a quadruped policy on the robot: the policy node with its parameter file.

    ros2 launch sim2real quadruped.launch.py policy_file:=/path/to/policy.onnx

Connect the robot's ros2_control stack so that it publishes `joint_states`
(sensor_msgs/JointState, joint_state_broadcaster) and `imu` (sensor_msgs/Imu with
orientation), and runs a forward position controller `joint_group_position_controller`
whose joint list is in the contract's order (listed in config/quadruped.yaml); the operator
publishes `cmd_vel` (geometry_msgs/Twist) at >= 2 Hz. Then arm with
`ros2 service call /policy_node/enable std_srvs/srv/SetBool "{data: true}"`: the node stands
the robot up to the default pose over soft_start_s, then the policy walks.

A thin include of policy.launch.py with robot:=quadruped.
"""

from launch import LaunchDescription
from launch.actions import IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import PathJoinSubstitution
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    """policy.launch.py with robot:=quadruped (its other arguments pass through)."""
    return LaunchDescription([
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(PathJoinSubstitution(
                [FindPackageShare('sim2real'), 'launch', 'policy.launch.py'])),
            launch_arguments={'robot': 'quadruped'}.items()),
    ])
