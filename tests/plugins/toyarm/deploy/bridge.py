"""toyarm's simulated twin in the bridge node: its parameters, streams and checks."""

from sim2real.assets import urdf_path
from sim2real.deploy.bridge.params import RobotBridge

from toyarm.deploy.bridge_sim import ToyArmSim

DEFAULTS = {
    'robot': 'toyarm',
    'urdf_file': '',
    'joint_states_rate_hz': 200.0,
    'joint_state_topic': 'joint_states',
    'command_topic': 'joint_commands',
    'kp': [5.0, 5.0],
    'kd': [0.5, 0.5],
    'damping_kd': 0.5,
}
"""The driver's topics and PD gains (the training values)."""


def checks(p: dict) -> list:
    """A URDF, two gains per list, non-negative."""
    return [('urdf_file', bool(p['urdf_file']), 'must name the arm URDF')] + [
        (k, len(p[k]) == 2 and min(p[k]) >= 0, 'must be 2 values >= 0')
        for k in ('kp', 'kd')] + [('damping_kd', p['damping_kd'] >= 0, 'must be >= 0')]


def make_sim(p: dict) -> ToyArmSim:
    """The arm at its rest pose on the driver's PD."""
    return ToyArmSim(urdf_path(p['urdf_file']), p['physics_rate_hz'], tuple(p['kp']),
                     tuple(p['kd']), p['damping_kd'], p['command_timeout_s'])


BRIDGE = RobotBridge(defaults=DEFAULTS, streams=('joint_states',), checks=checks,
                     make_sim=make_sim)
