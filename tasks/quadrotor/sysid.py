"""The quadrotor's plant for identification: the training's rotor model (rate loop, mixer,
motor lag: ``QuadrotorActuator``) and rigid body (MuJoCo, from the URDF) replaying logged
commands from logged states over short windows (multiple shooting).

Each window starts from an odometry sample (position, attitude, velocity) and the body
rates measured then. The motors' speeds and the rate loop's memory are not measured: they
are warmed up by driving the actuator model with the logged commands and body rates for
WARM_S before the window (a first-order motor forgets its start within a few time
constants). A command acts delay_ticks policy ticks after its tick. Predictions are taken at
the measured samples inside each window; the parameters scale the URDF's nominal values as
the training's randomization box does (tasks/quadrotor/cfg.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from sim2real import terms
from sim2real.sim.mjcf import BASE_BODY, quadrotor_model
from sim2real.sim.quadrotor import QuadrotorActuator

PARAMETERS = ('mass_scale', 'inertia_scale', 'thrust_scale', 'motor_tau_scale',
              'action_delay_ticks')
"""The box parameters the plant takes (the others are nominal)."""
NOMINAL = {'mass_scale': 1.0, 'inertia_scale': 1.0, 'thrust_scale': 1.0,
           'motor_tau_scale': 1.0, 'action_delay_ticks': 0.0}
BOUNDS = {'mass_scale': (0.1, 10.0), 'inertia_scale': (0.1, 10.0),
          'thrust_scale': (0.1, 10.0), 'motor_tau_scale': (0.1, 10.0),
          'action_delay_ticks': (0.0, 20.0)}
"""Values the plant takes, (lowest, highest); a *_ticks parameter is a whole number."""
COMMAND = 'thrust_body_rates'
"""The command the plant replays: [collective thrust N, body rates rad/s] (a rotor-speed
policy's commands are not replayed yet)."""
WARM_S = 1.0
"""Warm-up of the motors and the rate loop before each window [s]: 10 nominal motor time
constants (with half of that, a climb's motor transient still missed a window's position by
1 cm in 0.3 s: tests/tasks/test_quadrotor_sysid.py)."""
SIGNALS = {'pos_w': 'm', 'lin_vel_b': 'm/s', 'attitude': 'rad', 'ang_vel_b': 'rad/s'}
"""What is compared: position, body velocity, attitude (rotation vector of the measured
attitude to the predicted one) and body rates."""


@dataclass
class Measured:
    """The measured states, on the steady clock."""

    t_s: np.ndarray
    """(n,) sample times [s], rising."""
    pos_w: np.ndarray
    """(n, 3) [m; world]."""
    quat_wxyz: np.ndarray
    """(n, 4) [world <- body]."""
    lin_vel_b: np.ndarray
    """(n, 3) [m/s; body]."""
    ang_vel_b: np.ndarray
    """(n, 3) [rad/s; body], from the IMU at these times."""


@dataclass
class Commands:
    """The commands the node sent: [collective thrust N, body rates rad/s]."""

    t_s: np.ndarray
    """(m,) tick times [s], rising."""
    values: np.ndarray
    """(m, 4)."""


URDF = 'quadrotor'
"""The vehicle's URDF (sim2real.assets.urdf_path)."""


def from_flight(flight) -> tuple[Measured, Commands]:
    """The measured states and commands of a flight log (sim2real.sysid.flight.Flight):
    odometry's pose and velocity, the IMU's body rates at the odometry's times (the node
    reads body rates from the IMU; a bridge's odometry may leave them zero)."""
    if flight.contract.action.kind != COMMAND:
        raise ValueError(f'the quadrotor plant replays {COMMAND} commands; this policy sends '
                         f'{flight.contract.action.kind}')
    if 'odom' not in flight.streams:
        raise ValueError('the quadrotor plant needs the odom stream; the log has '
                         f'{", ".join(flight.streams) or "none"}')
    odom = flight.streams['odom']
    rates = odom.values['ang_vel_b']
    if 'imu' in flight.streams:   # the IMU's where there is one: odometry's may be zeros
        imu = flight.streams['imu']
        gyro = imu.values['ang_vel_b']
        ok = np.isfinite(gyro).all(axis=1)
        rates = np.stack([np.interp(odom.t_s, imu.t_s[ok], gyro[ok, j]) for j in range(3)],
                         axis=1)
    return (Measured(odom.t_s, odom.values['pos_w'], odom.values['quat_wxyz'],
                     odom.values['lin_vel_b'], rates),
            Commands(flight.tick_t_s, flight.commands))


def _model(urdf: str, dt_s: float, params: dict):
    """The vehicle's model with the parameters' mass and inertia; its rotors and the
    nominal inertia (the rate loop's)."""
    model, rotors = quadrotor_model(urdf, dt_s)
    body = model.body(BASE_BODY).id
    nominal_inertia = model.body_inertia[body].copy()
    model.body_mass[body] *= params['mass_scale']
    model.body_inertia[body] *= params['inertia_scale']
    mujoco.mj_setConst(model, mujoco.MjData(model))
    return model, rotors, nominal_inertia


def _rates_at(measured: Measured, t_s: np.ndarray) -> np.ndarray:
    """Measured body rates interpolated at times t_s, (len(t), 3)."""
    return np.stack([np.interp(t_s, measured.t_s, measured.ang_vel_b[:, j])
                     for j in range(3)], axis=1)


def replay(measured: Measured, commands: Commands, tick_s: float, starts: np.ndarray,
           window_s: float, params: dict, dt_s: float = 0.002, urdf: str | None = None
           ) -> dict[str, list[np.ndarray]]:
    """Predicted signals (SIGNALS) at the measured samples in (t_start, t_start + window_s]
    of each window starting at measured sample index starts[i]: signal -> one (k_i, 3)
    array per window. params: PARAMETERS -> value (missing ones nominal)."""
    from sim2real.assets import urdf_path
    urdf = str(urdf_path(URDF)) if urdf is None else urdf
    params = {**NOMINAL, **params}
    model, rotors, inertia = _model(urdf, dt_s, params)
    n = len(starts)
    act = QuadrotorActuator(rotors, inertia, n, xp=np, dtype=np.float64)
    act.thrust_scale[:] = params['thrust_scale']
    act.time_constant_s[:] = rotors.time_constant_s * params['motor_tau_scale']
    act.mode = 'thrust_body_rates'
    applied_s = commands.t_s + round(params['action_delay_ticks']) * tick_s
    t0 = measured.t_s[starts]

    def command_at(t_s: np.ndarray) -> np.ndarray:
        index = np.searchsorted(applied_s, t_s, side='right') - 1
        return commands.values[np.maximum(index, 0)]
    act.reset(slice(None), 0.0)
    hover = np.maximum(command_at(t0 - WARM_S)[:, 0], 0.0) / (
        4 * rotors.thrust_coefficient * params['thrust_scale'])
    act.speed_rad_s[:] = np.sqrt(hover)[:, None]
    for step in range(-int(round(WARM_S / dt_s)), 0):
        t = t0 + step * dt_s
        act.command = command_at(t)
        act.substep(_rates_at(measured, t), dt_s)
    datas = [mujoco.MjData(model) for _ in range(n)]
    for data, k in zip(datas, starts):
        rotmat = terms.quat_to_rotmat(measured.quat_wxyz[k])
        data.qpos[:3], data.qpos[3:7] = measured.pos_w[k], measured.quat_wxyz[k]
        data.qvel[:3], data.qvel[3:6] = rotmat @ measured.lin_vel_b[k], measured.ang_vel_b[k]
        mujoco.mj_forward(model, data)
    ends = [np.searchsorted(measured.t_s, t0[i] + window_s + 1e-9) for i in range(n)]
    taken = [k + 1 for k in starts]
    out = {name: [[] for _ in range(n)] for name in SIGNALS}
    # every sample in (t0, t0 + window] is taken at the first step end at or after it
    for step in range(int(np.ceil(window_s / dt_s - 1e-9))):
        t = t0 + step * dt_s
        act.command = command_at(t)
        ctrl = act.substep(np.array([d.qvel[3:6] for d in datas]), dt_s)
        for i, data in enumerate(datas):
            data.ctrl[:] = ctrl[i]
            mujoco.mj_step(model, data)
            while taken[i] < ends[i] and measured.t_s[taken[i]] <= t[i] + dt_s + 1e-9:
                _take(out, i, data, measured, taken[i])
                taken[i] += 1
    return {name: [np.array(rows) for rows in series] for name, series in out.items()}


def _take(out: dict, i: int, data: mujoco.MjData, measured: Measured, k: int) -> None:
    """The predicted signals of window i at measured sample k: the errors' other half."""
    quat = data.qpos[3:7].copy()
    rotmat = terms.quat_to_rotmat(quat)
    out['pos_w'][i].append(data.qpos[:3].copy())
    out['lin_vel_b'][i].append(terms.rotate_world_to_body(rotmat, data.qvel[:3]))
    relative = terms.quat_mul(terms.quat_conjugate(measured.quat_wxyz[k]), quat)
    out['attitude'][i].append(terms.quat_to_rotvec(relative))
    out['ang_vel_b'][i].append(data.qvel[3:6].copy())


def measured_signals(measured: Measured, starts: np.ndarray, window_s: float
                     ) -> dict[str, list[np.ndarray]]:
    """The measured signals replay() predicts, window by window (attitude: zero, the
    prediction is its own error)."""
    out = {name: [] for name in SIGNALS}
    for k in starts:
        rows = slice(k + 1, np.searchsorted(measured.t_s, measured.t_s[k] + window_s + 1e-9))
        out['pos_w'].append(measured.pos_w[rows])
        out['lin_vel_b'].append(measured.lin_vel_b[rows])
        out['attitude'].append(np.zeros_like(measured.pos_w[rows]))
        out['ang_vel_b'].append(measured.ang_vel_b[rows])
    return out


def held_signals(measured: Measured, starts: np.ndarray, window_s: float
                 ) -> dict[str, list[np.ndarray]]:
    """What replay() would predict if nothing changed in a window: each signal held at its
    value at the window's start (the attitude: the measured rotation away from the start's);
    the scale a gap is normalized by."""
    out = {name: [] for name in SIGNALS}
    for k in starts:
        rows = slice(k + 1, np.searchsorted(measured.t_s, measured.t_s[k] + window_s + 1e-9))
        count = rows.stop - rows.start
        out['pos_w'].append(np.repeat(measured.pos_w[k][None], count, axis=0))
        out['lin_vel_b'].append(np.repeat(measured.lin_vel_b[k][None], count, axis=0))
        inverse = terms.quat_conjugate(measured.quat_wxyz[rows])
        out['attitude'].append(terms.quat_to_rotvec(terms.quat_mul(
            inverse, np.repeat(measured.quat_wxyz[k][None], count, axis=0))))
        out['ang_vel_b'].append(np.repeat(measured.ang_vel_b[k][None], count, axis=0))
    return out
