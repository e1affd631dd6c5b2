"""The quadruped's identification walk (about 40 s): velocity-command steps forward, back,
sideways and turning, each held long enough to settle, with stops between.

Starts and stops load the legs (payload, stiffness, strength: how far the trunk pitches and
sinks), a steady gait shows the PD's tracking, turns the trunk's yaw inertia. Every command
lies inside the training's command ranges (tasks/quadruped/cfg.py: x +-1, y +-0.5 m/s, yaw
+-1 rad/s).
"""

from __future__ import annotations

import numpy as np

from sim2real.deploy.runtime.excitation import Excitation, schedule

HOLD_S = 3.0
"""Time at each command [s]."""
STOP_S = 2.0
"""Standing between commands [s]."""
COMMANDS = ((0.5, 0.0, 0.0), (1.0, 0.0, 0.0), (-0.5, 0.0, 0.0), (0.0, 0.4, 0.0),
            (0.0, -0.4, 0.0), (0.0, 0.0, 1.0), (0.0, 0.0, -1.0), (0.6, 0.0, 0.6))
"""(vx [m/s], vy [m/s], yaw rate [rad/s]) commands, in order."""


def excitation(node: dict) -> Excitation:
    """Velocity commands [vx m/s, vy m/s, yaw rate rad/s; body frame]."""
    segments = [(STOP_S, np.zeros(3))]
    for command in COMMANDS:
        segments += [(HOLD_S, np.array(command)), (STOP_S, np.zeros(3))]
    times_s, values = schedule(segments)
    return Excitation('cmd_vel', 'velocity_command_topic', 'Twist', times_s, values,
                      sum(d for d, _ in segments),
                      f'{len(COMMANDS)} velocity commands (forward, back, sideways, turning) '
                      f'of {HOLD_S:g} s, standing {STOP_S:g} s between them')
