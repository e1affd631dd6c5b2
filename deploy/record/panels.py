"""Report panels robots compose in their folder's ``report.py`` (`deploy.record.report`):
the joint chain's targets against its measured joints, a base velocity against the
operator's command, a position against its target and an attitude."""

from __future__ import annotations

import numpy as np

from sim2real import terms
from sim2real.deploy.record.report import Figure, Line, Plot
from sim2real.deploy.record.series import FlightSeries


def joint_targets(series: FlightSeries) -> Figure | None:
    """Each joint's commanded target against its measured position [rad] (contract order;
    the command's first len(joints) values are the targets)."""
    names = list(series.contract.joint_names)
    states = series.puts.get('joint_state')
    if not names or states is None or not series.commands:
        return None
    t_cmd, commands = series.command_matrix()
    measured_t, measured = [], []
    for t, values in zip(states.t_s, states.values):
        order = [list(values['names']).index(n) if n in list(values['names']) else -1
                 for n in names]
        if min(order) < 0:
            continue
        measured_t.append(t)
        measured.append(np.asarray(values['pos_rad'], float)[order])
    if not measured:
        return None
    measured = np.stack(measured)
    plots = [Plot(name, 'rad', [Line('target', t_cmd, commands[:, i], '--'),
                                Line('measured', np.array(measured_t), measured[:, i])])
             for i, name in enumerate(names)]
    return Figure('joints', 'joint targets (dashed) against measured joint positions', plots,
                  ncols=4)


def base_velocity(series: FlightSeries) -> Figure | None:
    """The operator's velocity command against the robot's velocity: the node's leg-odometry
    estimate and, for a HIL recording, the simulated robot's true base velocity (body
    frame)."""
    command = series.received('command', 'velocity_command')
    if command is None:
        return None
    estimate = series.estimated('leg_odometry_lin_vel_b_m_s')
    truth = series.truth.stacked('lin_vel_b')
    plots = []
    for axis, label in ((0, 'forward vx [m/s]'), (1, 'lateral vy [m/s]')):
        lines = [Line('command', *_held(command, axis), '--')]
        if estimate is not None:
            lines.append(Line('leg odometry', estimate[0], estimate[1][:, axis]))
        if truth is not None:
            lines.append(Line('true (simulated robot)', truth[0], truth[1][:, axis]))
        plots.append(Plot(label, 'm/s', lines))
    return Figure('base_velocity', 'base velocity against the command', plots)


def position_and_attitude(series: FlightSeries) -> Figure | None:
    """Odometry position against the target the policy flew to, and roll, pitch and yaw
    (the target attitude is level)."""
    position = series.received('odom', 'pos_w')
    if position is None:
        return None
    target = series.estimated('target_pos_w_m')
    plots = []
    for axis, name in enumerate('xyz'):
        lines = [Line('odometry', position[0], position[1][:, axis])]
        if target is not None:
            lines.append(Line('target', target[0], target[1][:, axis], '--'))
        plots.append(Plot(f'position {name} (world)', 'm', lines))
    quat = series.received('odom', 'quat_wxyz')
    if quat is not None:
        rpy = np.array([_rpy(q) for q in quat[1]])
        plots.append(Plot('attitude (target: level)', 'rad', [
            Line(name, quat[0], rpy[:, i]) for i, name in enumerate(('roll', 'pitch', 'yaw'))]))
    return Figure('position_attitude', 'position against the target, attitude', plots)


def _held(stream: tuple[np.ndarray, np.ndarray], axis: int) -> tuple[np.ndarray, np.ndarray]:
    """A sampled command as steps (each value held until the next)."""
    t, values = stream
    return np.repeat(t, 2)[1:], np.repeat(values[:, axis], 2)[:-1]


def _rpy(quat_wxyz: np.ndarray) -> np.ndarray:
    """Roll, pitch, yaw [rad] (ZYX) of a unit quaternion."""
    r = terms.quat_to_rotmat(np.asarray(quat_wxyz, float))
    return np.array([np.arctan2(r[2, 1], r[2, 2]), -np.arcsin(np.clip(r[2, 0], -1, 1)),
                     np.arctan2(r[1, 0], r[0, 0])])
