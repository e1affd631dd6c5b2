"""The quadrotor's identification flight (50 s): moves of STEP_M on each axis from the hover
target and back, then EIGHTS figures of eight in the horizontal plane.

Each move glides the setpoint to its new place in MOVE_S (a minimum-jerk profile), not a
jump: a jump makes the policy dive at full authority, and a vehicle heavier or weaker than
nominal (what identification is for) may not arrest the sink; measured with mass x1.3,
thrust x0.9 and 2 ticks of delay, a 0.4 m step down from 1.9 m reached the ground. Moves
excite the vertical dynamics (thrust over mass: the climb and the sink), the tilt that
starts a lateral move (inertia, motor lag, delay: the rate loop's answer) and a settle; the
figures ask accelerations up to 1.7 m/s^2 (10 deg of tilt) on both axes at once. All
targets stay within 1 m of the hover target: the hover task starts up to 1 m away from its
target (tasks/quadrotor/cfg.py), so the policy flies each move as it was trained to.
"""

from __future__ import annotations

import math

import numpy as np

from sim2real.deploy.runtime.excitation import Excitation, schedule

STEP_M = 0.4
"""Size of a setpoint move [m]."""
MOVE_S = 1.0
"""Time a move takes [s]."""
HOLD_S = 2.0
"""Time at each target after its move [s]."""
EIGHT_RADIUS_M = 0.5
"""Half the figure of eight's width (its height: half of that) [m]."""
EIGHT_PERIOD_S = 5.0
"""One figure of eight [s]."""
EIGHTS = 2


def _eight(centre: np.ndarray):
    """The setpoint on the figure of eight (a Gerono lemniscate) t [s] into it."""
    def at(t_s: float) -> np.ndarray:
        phase = 2 * math.pi * t_s / EIGHT_PERIOD_S
        return centre + np.array([EIGHT_RADIUS_M * math.sin(phase),
                                  0.5 * EIGHT_RADIUS_M * math.sin(2 * phase), 0.0])
    return at


def _move(start: np.ndarray, end: np.ndarray):
    """The setpoint t [s] into a minimum-jerk move from start to end in MOVE_S."""
    def at(t_s: float) -> np.ndarray:
        u = min(1.0, t_s / MOVE_S)
        return start + (end - start) * (10 * u ** 3 - 15 * u ** 4 + 6 * u ** 5)
    return at


def excitation(node: dict) -> Excitation:
    """Setpoints [m; world] around the node's hover_target_m."""
    centre = np.asarray(node['hover_target_m'], dtype=float)
    segments = [(HOLD_S, centre)]
    for axis in range(3):
        for sign in (1.0, -1.0):
            target = centre.copy()
            target[axis] += sign * STEP_M
            segments += [(MOVE_S, _move(centre, target)), (HOLD_S, target),
                         (MOVE_S, _move(target, centre)), (HOLD_S, centre)]
    segments.append((EIGHTS * EIGHT_PERIOD_S, _eight(centre)))
    segments.append((HOLD_S, centre))
    times_s, values = schedule(segments)
    return Excitation('setpoint', 'setpoint_topic', 'PointStamped', times_s, values,
                      sum(d for d, _ in segments),
                      f'setpoint moves of {STEP_M:g} m in {MOVE_S:g} s on x, y and z from the '
                      f'hover target and back, then {EIGHTS} figures of eight '
                      f'{2 * EIGHT_RADIUS_M:g} m wide')
