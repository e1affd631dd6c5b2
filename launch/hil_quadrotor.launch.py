"""Hardware-in-the-loop bring-up: the simulated quadrotor (sim_bridge) and the policy node.

    ros2 launch sim2real hil_quadrotor.launch.py policy_file:=/path/to/policy.onnx

A thin include of hil.launch.py (robot:=quadrotor). Both nodes read config/quadrotor.yaml,
the file `sim2real hil quadrotor` uses. Faults can be scheduled with
fault_schedule:='nan_imu@5.0+1.0' or switched at run time with `ros2 param set /sim_bridge
active_faults nan_imu`.
"""

from launch import LaunchDescription
from launch.actions import IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import PathJoinSubstitution
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    """hil.launch.py with robot:=quadrotor (its other arguments pass through)."""
    return LaunchDescription([
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(PathJoinSubstitution(
                [FindPackageShare('sim2real'), 'launch', 'hil.launch.py'])),
            launch_arguments={'robot': 'quadrotor'}.items()),
    ])
