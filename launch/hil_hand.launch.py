"""Hardware-in-the-loop bring-up: the simulated hand with its cube (sim_bridge) and the
policy node.

    ros2 launch sim2real hil_hand.launch.py policy_file:=/path/to/hand_rotate.onnx

A thin include of hil.launch.py (robot:=hand). Both nodes read config/hand.yaml, the file
`sim2real hil hand` uses. The bridge starts with the hand holding the cube at its grasp pose.
Arm the node to start turning. Faults: fault_schedule:='nan_joint_states@5.0+1.0', or at run
time `ros2 param set /sim_bridge active_faults frozen_joint_states`.
"""

from launch import LaunchDescription
from launch.actions import IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import PathJoinSubstitution
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    """hil.launch.py with robot:=hand (its other arguments pass through)."""
    return LaunchDescription([
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(PathJoinSubstitution(
                [FindPackageShare('sim2real'), 'launch', 'hil.launch.py'])),
            launch_arguments={'robot': 'hand'}.items()),
    ])
