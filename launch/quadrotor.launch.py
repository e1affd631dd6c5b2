"""Run a quadrotor policy on the robot: the policy node with its parameter file.

    ros2 launch sim2real quadrotor.launch.py policy_file:=/path/to/policy.onnx

Connect the vehicle's driver (e.g. crazyswarm2's crazyflie_server for a Crazyflie in rate
mode) so that it publishes `odom` (nav_msgs/Odometry) and `imu` (sensor_msgs/Imu) and reads
`cmd_vel_legacy` (geometry_msgs/Twist); remap them here if your driver uses other names.
config/quadrotor.yaml is set up for crazyswarm2's default C++ server, whose `odom` (add it
under firmware_logging.default_topics) carries a world-frame velocity and no angular twist
(odom_twist_frame world, odom_angular_velocity false); it publishes no sensor_msgs/Imu, so
the gyro comes from another source.
Then arm with `ros2 service call /policy_node/enable std_srvs/srv/SetBool "{data: true}"`.

A thin include of policy.launch.py with robot:=quadrotor.
"""

from launch import LaunchDescription
from launch.actions import IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import PathJoinSubstitution
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    """policy.launch.py with robot:=quadrotor (its other arguments pass through)."""
    return LaunchDescription([
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(PathJoinSubstitution(
                [FindPackageShare('sim2real'), 'launch', 'policy.launch.py'])),
            launch_arguments={'robot': 'quadrotor'}.items()),
    ])
