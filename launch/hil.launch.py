"""Hardware-in-the-loop bring-up of a robot: its simulated twin (sim_bridge) and the policy node.

    ros2 launch sim2real hil.launch.py robot:=NAME policy_file:=/path/to/policy.onnx

Both nodes read config/NAME.yaml, the file `sim2real hil NAME` uses. Faults can be
scheduled with fault_schedule:='nan_imu@5.0+1.0' or switched at run time with
`ros2 param set /sim_bridge active_faults nan_imu` (the robot's HIL profile,
deploy/robots/NAME/hil.py, lists its faults).
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    """sim_bridge + policy_node, parameters from config/<robot>.yaml."""
    params_file = PathJoinSubstitution(
        [FindPackageShare('sim2real'), 'config', [LaunchConfiguration('robot'), '.yaml']])
    return LaunchDescription([
        DeclareLaunchArgument('robot', description='robot name: config/<robot>.yaml'),
        DeclareLaunchArgument('policy_file', description='exported ONNX policy'),
        DeclareLaunchArgument('params_file', default_value=params_file,
                              description='parameter file of both nodes'),
        DeclareLaunchArgument('fault_schedule', default_value='',
                              description="'name@start_s+duration_s;...'"),
        Node(
            package='sim2real',
            executable='sim_bridge',
            name='sim_bridge',
            output='screen',
            parameters=[
                LaunchConfiguration('params_file'),
                {'fault_schedule': LaunchConfiguration('fault_schedule')},
            ],
        ),
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
