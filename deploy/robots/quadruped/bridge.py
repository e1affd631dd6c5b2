"""The quadruped's simulated twin for the HIL bridge: its parameters, streams and checks."""

from sim2real.assets import urdf_path
from sim2real.deploy.bridge.params import RobotBridge
from sim2real.deploy.robots.quadruped.variant import knobs
from sim2real.deploy.robots.quadruped.bridge_sim import QuadrupedSim
from sim2real.deploy.robots.quadruped.faults import quadruped_faults

DEFAULTS = {
    'robot': 'quadruped',
    'urdf_file': 'quadruped',
    'joint_states_rate_hz': 500.0,
    'imu_rate_hz': 500.0,
    'joint_state_topic': 'joint_states',
    'imu_topic': 'imu',
    'command_topic': 'joint_group_position_controller/commands',
    'kp_command_topic': '',
    'kd_command_topic': '',
    'kp': [25.0] * 12,
    'kd': [0.5] * 12,
    'damping_kd': 1.0,
}
"""The quadruped bridge's own parameters: the driver's topics and its PD gains."""


def checks(p: dict) -> list:
    """The driver's gains."""
    return [(k, len(p[k]) == 12 and min(p[k]) >= 0, 'must be 12 values >= 0')
            for k in ('kp', 'kd')] + [('damping_kd', p['damping_kd'] >= 0, 'must be >= 0')]


def make_sim(p: dict) -> QuadrupedSim:
    """The robot standing at the default pose on the driver's PD."""
    return QuadrupedSim(
        urdf_path(p['urdf_file']), p['physics_rate_hz'], tuple(p['kp']), tuple(p['kd']),
        p['damping_kd'], p['command_timeout_s'], p['imu_gyro_noise_std_rad_s'], p['seed'])


BRIDGE = RobotBridge(defaults=DEFAULTS, streams=('joint_states', 'imu'), checks=checks,
                     make_sim=make_sim, faults=quadruped_faults, variant=knobs)
