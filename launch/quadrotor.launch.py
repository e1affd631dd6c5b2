"""Run a quadrotor policy on the robot: the policy node with its parameter file.

    ros2 launch sim2real quadrotor.launch.py policy_file:=/path/to/policy.onnx

Connect the vehicle's driver (e.g. crazyswarm2's crazyflie_server for a Crazyflie in rate
mode) so that it publishes `odom` (nav_msgs/Odometry) and `imu` (sensor_msgs/Imu) and reads
`cmd_vel_legacy` (geometry_msgs/Twist); remap them here if your driver uses other names.
Then arm with `ros2 service call /policy_node/enable std_srvs/srv/SetBool "{data: true}"`.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    """The policy node, parameters from config/quadrotor.yaml."""
    params_file = PathJoinSubstitution(
        [FindPackageShare('sim2real'), 'config', 'quadrotor.yaml'])
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
