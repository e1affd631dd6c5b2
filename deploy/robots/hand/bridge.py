"""The hand's simulated twin for the HIL bridge: its parameters, streams and checks."""

from sim2real.assets import resolve_urdf
from sim2real.deploy.bridge.params import RobotBridge
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
}
"""The servo bus's topics, its state rate and the PD gains (the training values)."""


def checks(p: dict) -> list:
    """Sixteen gains per list, non-negative."""
    return [(k, len(p[k]) == 16 and min(p[k]) >= 0, 'must be 16 values >= 0')
            for k in ('kp', 'kd')] + [('damping_kd', p['damping_kd'] >= 0, 'must be >= 0')]


def make_sim(p: dict) -> HandSim:
    """The hand holding the cube at its grasp pose on the driver's PD."""
    return HandSim(resolve_urdf(p['urdf_file']), p['physics_rate_hz'], tuple(p['kp']),
                   tuple(p['kd']), p['damping_kd'], p['command_timeout_s'])


BRIDGE = RobotBridge(defaults=DEFAULTS, streams=('joint_states',), checks=checks,
                     make_sim=make_sim)
