"""Run a quadruped policy on the robot: the policy node with its parameter file.

    ros2 launch sim2real quadruped.launch.py policy_file:=/path/to/policy.onnx

Connect the robot's ros2_control stack so that it publishes `joint_states`
(sensor_msgs/JointState, joint_state_broadcaster) and `imu` (sensor_msgs/Imu with
orientation), and runs a forward position controller `joint_group_position_controller`
whose joint list is in the contract's order (listed in config/quadruped.yaml); the operator
publishes `cmd_vel` (geometry_msgs/Twist) at >= 2 Hz. Then arm with
`ros2 service call /policy_node/enable std_srvs/srv/SetBool "{data: true}"`: the node stands
the robot up to the default pose over soft_start_s, then the policy walks.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    """The policy node, parameters from config/quadruped.yaml."""
    params_file = PathJoinSubstitution(
        [FindPackageShare('sim2real'), 'config', 'quadruped.yaml'])
    return LaunchDescription([
        DeclareLaunchArgument('policy_file', description='exported ONNX policy'),
        DeclareLaunchArgument('params_file', default_value=params_file,
                              description='node parameter file'),
        Node(
            package='sim2real',
            executable='policy_node',
            name='policy_node',
            output='screen',
            parameters=[
                LaunchConfiguration('params_file'),
                {'policy_file': LaunchConfiguration('policy_file')},
            ],
        ),
    ])
