"""An identification run's operator commands: what the operator sends the policy node while
the robot is logged for system identification (`sim2real hil ROBOT --scenario identify`,
`sim2real excite ROBOT` on a real robot).

A robot's folder declares ``excitation.excitation(node params) -> Excitation``: a schedule
of values on one of the node's operator streams (the quadrotor's setpoint, the quadruped's
velocity command), sampled at SAMPLE_HZ, that moves the robot through what identification
needs to see (accelerations on every axis, turns, steps), inside what its policy was trained
for. A robot with no operator command (the hand's ordinary rotation) has an empty schedule
and a duration.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SAMPLE_HZ = 50.0
"""Rate at which the operator's command is published [Hz]."""


@dataclass(frozen=True)
class Excitation:
    """The operator's commands of one identification run."""

    stream: str
    """The node's operator stream ('setpoint', 'cmd_vel'); '' when the operator sends
    nothing."""
    topic_param: str
    """The node parameter naming the stream's topic ('setpoint_topic'); '' for none."""
    message: str
    """The stream's message: 'PointStamped' (a position [m; world]) or 'Twist' (vx, vy
    [m/s], yaw rate [rad/s]); '' for none."""
    times_s: np.ndarray
    """(n,) send times from the start [s], rising."""
    values: np.ndarray
    """(n, k) the command at each time, in the stream's units (documented by the robot)."""
    duration_s: float
    """Length of the run [s] (>= the last time)."""
    what: str
    """One line for the operator: what the robot will do."""

    def __post_init__(self):
        """Times rising inside the duration, one row of values per time."""
        if len(self.times_s) != len(self.values):
            raise ValueError(f'{len(self.times_s)} times but {len(self.values)} values')
        if len(self.times_s) and (np.any(np.diff(self.times_s) <= 0)
                                  or self.times_s[-1] > self.duration_s):
            raise ValueError('times must rise and end within the duration')

    def at(self, t_s: float) -> np.ndarray | None:
        """The command at t_s [s] from the start: the last one sent by then (None before
        the first, or when the operator sends nothing)."""
        index = int(np.searchsorted(self.times_s, t_s, side='right')) - 1
        return None if index < 0 else self.values[index]


def schedule(segments: list[tuple[float, object]]) -> tuple[np.ndarray, np.ndarray]:
    """Times and values sampled at SAMPLE_HZ from (duration [s], value) segments, where a
    value is an array (held) or a function of the time into its segment [s]."""
    times, values, start_s = [], [], 0.0
    for duration_s, value in segments:
        local = np.arange(0.0, duration_s - 1e-9, 1.0 / SAMPLE_HZ)
        for t in local:
            values.append(np.asarray(value(t) if callable(value) else value, dtype=float))
        times.extend(start_s + local)
        start_s += duration_s
    return np.asarray(times), np.asarray(values)
