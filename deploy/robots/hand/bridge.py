"""The hand's simulated twin for the HIL bridge: its parameters, streams and checks."""

from sim2real.assets import urdf_path
from sim2real.deploy.bridge.params import RobotBridge
from sim2real.deploy.robots.hand.variant import knobs
from sim2real.deploy.robots.hand.bridge_sim import HandSim

DEFAULTS = {
    'robot': 'hand',
    'urdf_file': 'hand',
    'joint_states_rate_hz': 100.0,
    'joint_state_topic': 'joint_states',
    'command_topic': 'joint_group_position_controller/commands',
    'kp': [3.0] * 16,
    'kd': [0.1] * 16,
    'damping_kd': 0.1,
    'cube_pose_rate_hz': 15.0,
    'cube_pose_topic': 'cube_pose',
    'cube_pose_frame': 'mount',
    'tracker_latency_frames': 1,
    'tracker_pos_noise_m': 0.005,
    'tracker_rot_noise_rad': 0.03,
}
"""The servo bus's topics, its state rate and the PD gains (the training values); the cube
tracker's frame rate, topic, frame, latency and noise (inside the training's ranges: 5-20 Hz,
0-100 ms, 1 cm and 0.05 rad)."""


def checks(p: dict) -> list:
    """Sixteen gains per list, non-negative; a tracker with a rate, a whole number of frames
    of latency and non-negative noise."""
    return [(k, len(p[k]) == 16 and min(p[k]) >= 0, 'must be 16 values >= 0')
            for k in ('kp', 'kd')] + [
        (k, p[k] >= 0, 'must be >= 0')
        for k in ('damping_kd', 'tracker_latency_frames', 'tracker_pos_noise_m',
                  'tracker_rot_noise_rad')] + [
        ('cube_pose_rate_hz', p['cube_pose_rate_hz'] > 0, 'must be > 0')]


def make_sim(p: dict) -> HandSim:
    """The hand holding the cube at its grasp pose on the driver's PD."""
    return HandSim(urdf_path(p['urdf_file']), p['physics_rate_hz'], tuple(p['kp']),
                   tuple(p['kd']), p['damping_kd'], p['command_timeout_s'],
                   p['tracker_latency_frames'], p['tracker_pos_noise_m'],
                   p['tracker_rot_noise_rad'], p['seed'])


BRIDGE = RobotBridge(defaults=DEFAULTS, streams=('joint_states', 'cube_pose'), checks=checks,
                     make_sim=make_sim, variant=knobs)
