"""Hardware-in-the-loop bring-up: the simulated quadruped (sim_bridge) and the policy node.

    ros2 launch sim2real hil_quadruped.launch.py policy_file:=/path/to/policy.onnx

Both nodes read config/quadruped.yaml, the file `sim2real hil quadruped` uses. The bridge
starts with the robot standing on its PD at the default pose. Publish a velocity command
(`ros2 topic pub -r 20 /cmd_vel geometry_msgs/msg/Twist "{linear: {x: 0.5}}"`), then arm
the node. Faults: fault_schedule:='nan_imu@5.0+1.0', or at run time
`ros2 param set /sim_bridge active_faults frozen_joint_states`.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    """sim_bridge + policy_node, parameters from config/quadruped.yaml."""
    params_file = PathJoinSubstitution(
        [FindPackageShare('sim2real'), 'config', 'quadruped.yaml'])
    return LaunchDescription([
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
