"""Hardware-in-the-loop bring-up: the simulated quadruped (sim_bridge) and the policy node.

    ros2 launch sim2real hil_quadruped.launch.py policy_file:=/path/to/policy.onnx

A thin include of hil.launch.py (robot:=quadruped). Both nodes read config/quadruped.yaml,
the file `sim2real hil quadruped` uses. The bridge starts with the robot standing on its PD
at the default pose. Publish a velocity command (`ros2 topic pub -r 20 /cmd_vel
geometry_msgs/msg/Twist "{linear: {x: 0.5}}"`), then arm the node. Faults:
fault_schedule:='nan_imu@5.0+1.0', or at run time `ros2 param set /sim_bridge active_faults
frozen_joint_states`.
"""

from launch import LaunchDescription
from launch.actions import IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import PathJoinSubstitution
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    """hil.launch.py with robot:=quadruped (its other arguments pass through)."""
    return LaunchDescription([
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(PathJoinSubstitution(
                [FindPackageShare('sim2real'), 'launch', 'hil.launch.py'])),
            launch_arguments={'robot': 'quadruped'}.items()),
    ])
