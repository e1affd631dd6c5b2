"""Run a policy on a robot: the policy node with the robot's parameter file.

    ros2 launch sim2real policy.launch.py robot:=NAME policy_file:=/path/to/policy.onnx

NAME picks config/NAME.yaml (installed under share/sim2real/config), whose policy_node
section names the robot and its topics; params_file:= replaces it. The per-robot files
(quadrotor.launch.py, quadruped.launch.py) include this one and say which driver topics the
robot needs. Arm with `ros2 service call /policy_node/enable std_srvs/srv/SetBool
"{data: true}"`.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    """The policy node, parameters from config/<robot>.yaml."""
    params_file = PathJoinSubstitution(
        [FindPackageShare('sim2real'), 'config', [LaunchConfiguration('robot'), '.yaml']])
    return LaunchDescription([
        DeclareLaunchArgument('robot', description='robot name: config/<robot>.yaml'),
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
