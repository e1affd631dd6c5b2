"""One simulated quadrotor for the HIL bridge: the training plant, stepped in real time.

The model comes from the same URDF through ``sim2real.sim.mjcf.quadrotor_model`` (with its
IMU and pose sensors enabled, which training switches off) and the command goes through the
same ``QuadrotorActuator`` (onboard rate controller, mixer, motor lag) with ``xp=numpy``,
applied at physics rate exactly as ``tasks/quadrotor`` does: set the actuator's mode and
command, then every physics step ``ctrl = actuator.substep(ang_vel_b, dt)`` and ``mj_step``.

Two firmware behaviours are added on top:

- hand launch: after ``reset`` the vehicle is held level and at rest at the start position
  with its rotors spinning at hover speed, and released at the first physics step whose
  COMMANDED collective thrust reaches ``hold_until_thrust_fraction`` x hover thrust (event
  'released'): the policy then takes over exactly as in every training episode, which starts
  in the air with the motors at hover speed. (Releasing from motors off on the rotors' actual
  thrust instead lets the rate loop of a held vehicle wind up differential thrust for ~0.4 s
  while the policy's rate commands get no response; the release then kicks the vehicle into
  a tilt the policy must recover from, which under CPU load exceeded the 1 rad tilt latch.)
- command watchdog: once released, when no command arrived for ``command_timeout_s`` the
  vehicle levels (body rates ``k (g_y, -g_x, 0)`` from the projected gravity g) and descends
  at 0.9 x hover thrust until z < ``ground_height_m``, then the motors stop (event
  'watchdog'). A new command ends the failsafe, as a fresh setpoint does on the firmware.

IMU values come from MuJoCo's gyro and accelerometer sensors, which ``mj_step`` evaluates
before integrating: they lag the odometry by one physics step (2 ms at 500 Hz).
"""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np

from sim2real import terms
from sim2real.deploy.bridge.faults import BridgeEvent
from sim2real.sim.mjcf import BASE_BODY, quadrotor_model
from sim2real.sim.quadrotor import QuadrotorActuator

GRAVITY_M_S2 = 9.81
COMMAND_KINDS = ('thrust_body_rates', 'rotor_speeds')
FAILSAFE_THRUST_FRACTION = 0.9
"""Collective thrust of the watchdog's descent, as a fraction of hover thrust."""
FAILSAFE_LEVEL_GAIN = 4.0
"""Levelling gain of the watchdog's descent [1/s]: body rate per unit of tilt."""


class QuadrotorSim:
    """MuJoCo quadrotor with the training actuator, hand launch and a command watchdog."""

    def __init__(self, urdf_path: str | Path, physics_rate_hz: float = 500.0,
                 start_pos_m=(0.0, 0.0, 1.5), hold_until_thrust_fraction: float = 0.9,
                 command_timeout_s: float = 0.1, imu_gyro_noise_std_rad_s: float = 0.0,
                 seed: int = 0, ground_height_m: float = 0.05, start_yaw_rad: float = 0.0):
        """Build the model at physics_rate_hz; the vehicle starts held at start_pos_m, level,
        heading start_yaw_rad."""
        self.dt_s = 1.0 / physics_rate_hz
        self.model, self.rotors = quadrotor_model(urdf_path, self.dt_s)
        self.data = mujoco.MjData(self.model)
        body = self.model.body(BASE_BODY)
        self.max_collective_thrust_n = 4 * self.rotors.max_thrust_n
        self.actuator = QuadrotorActuator(self.rotors, body.inertia.copy(), 1, xp=np,
                                          dtype=np.float64)
        self.start_pos_m = np.asarray(start_pos_m, dtype=np.float64).reshape(3)
        self.start_quat_wxyz = np.array([np.cos(start_yaw_rad / 2), 0.0, 0.0,
                                         np.sin(start_yaw_rad / 2)])
        self.hold_until_thrust_fraction = hold_until_thrust_fraction
        self.command_timeout_s = command_timeout_s
        self.ground_height_m = ground_height_m
        self.gyro_noise_std_rad_s = imu_gyro_noise_std_rad_s
        self._rng = np.random.default_rng(seed)
        self._adr = {n: self.model.sensor(n).adr[0] for n in ('gyro', 'accelerometer')}
        self.rejected_commands = 0
        """Number of non-finite commands refused since construction."""
        self._events: list[BridgeEvent] = []
        # first array_api_compat calls import its numpy wrapper (~60 ms): do it here, not
        # in the real-time loop
        self.actuator.substep(np.zeros((1, 3)), self.dt_s)
        terms.quat_to_rotmat(np.array([1.0, 0.0, 0.0, 0.0]))
        self.reset()

    def reset(self, now_s: float | None = None) -> None:
        """Back to the start pose, held, no command yet; event 'reset' when timed. The mass
        is read from the model here (the bridge may have changed it, `bridge.physical`)."""
        self.mass_kg = float(self.model.body(BASE_BODY).mass[0])
        self.hover_thrust_n = self.mass_kg * GRAVITY_M_S2
        self._hover_speed_rad_s = self.actuator.hover_speed_rad_s(self.mass_kg)
        mujoco.mj_resetData(self.model, self.data)
        self.data.qpos[0:3] = self.start_pos_m
        self.data.qpos[3:7] = self.start_quat_wxyz
        mujoco.mj_forward(self.model, self.data)
        self.actuator.reset(slice(None), 0.0)
        self.actuator.mode = 'thrust_body_rates'
        self.actuator.command = np.zeros((1, 4))
        self.held = True
        self.motors_on = False
        self.failsafe = False
        self._last_command_s: float | None = None
        if now_s is not None:
            self._events.append(BridgeEvent('reset', '', now_s))

    def set_command(self, kind: str, values, now_s: float) -> bool:
        """Apply [thrust N, rates rad/s] or rotor speeds [rad/s]; False if non-finite."""
        if kind not in COMMAND_KINDS:
            raise ValueError(f'command kind {kind!r} not in {COMMAND_KINDS}')
        command = np.asarray(values, dtype=np.float64).reshape(1, 4)
        if not np.all(np.isfinite(command)):
            self.rejected_commands += 1
            return False
        self.actuator.mode = kind
        self.actuator.command = command
        self.motors_on = True
        self.failsafe = False
        self._last_command_s = now_s
        return True

    def step(self, now_s: float) -> None:
        """Advance one physics step at wall time now_s (watchdog, hold, actuator, MuJoCo)."""
        self._check_watchdog(now_s)
        if self.held:
            self.actuator.speed_rad_s[:] = self._hover_speed_rad_s   # spinning in the hand
            if self._commanded_thrust_n() < self.hold_until_thrust_fraction * self.hover_thrust_n:
                return
            self.held = False
            self._events.append(BridgeEvent('released', '', now_s))
        thrusts = self._motor_thrusts(self.data.qvel[3:6][None, :].copy())
        self.data.ctrl[:] = thrusts[0]
        mujoco.mj_step(self.model, self.data)
        if self.failsafe and self.data.qpos[2] < self.ground_height_m:
            self.motors_on = False

    def _commanded_thrust_n(self) -> float:
        """Collective thrust the current command asks for [N] (0 before any command)."""
        if not self.motors_on:
            return 0.0
        if self.actuator.mode == 'thrust_body_rates':
            return float(self.actuator.command[0, 0])
        speeds = self.actuator.command[0]
        return float(self.rotors.thrust_coefficient * np.sum(speeds * speeds))

    def _motor_thrusts(self, ang_vel_b: np.ndarray) -> np.ndarray:
        """Rotor thrusts [N] (1, 4) of this step; zero with the motors stopped."""
        if not self.motors_on:
            self.actuator.speed_rad_s[:] = 0.0
            return np.zeros((1, 4))
        return self.actuator.substep(ang_vel_b, self.dt_s)

    def _check_watchdog(self, now_s: float) -> None:
        """Trip the failsafe after command_timeout_s without a command; steer its descent."""
        if self.held or self._last_command_s is None:
            return
        if not self.failsafe and now_s - self._last_command_s > self.command_timeout_s:
            self.failsafe = True
            self._events.append(BridgeEvent('watchdog', '', now_s))
        if self.failsafe and self.motors_on:
            gravity_b = terms.projected_gravity(terms.quat_to_rotmat(self.data.qpos[3:7]))
            rates = FAILSAFE_LEVEL_GAIN * np.array([gravity_b[1], -gravity_b[0], 0.0])
            self.actuator.mode = 'thrust_body_rates'
            self.actuator.command = np.array(
                [[FAILSAFE_THRUST_FRACTION * self.hover_thrust_n, *rates]])

    def pop_events(self) -> list[BridgeEvent]:
        """'released' / 'watchdog' / 'reset' events since the last call, oldest first."""
        events, self._events = self._events, []
        return events

    def odom(self) -> dict[str, np.ndarray]:
        """pos_w [m], quat_wxyz [world<-body], lin_vel_b [m/s], ang_vel_b [rad/s], exact."""
        qpos, qvel = self.data.qpos, self.data.qvel
        rotmat_wb = terms.quat_to_rotmat(qpos[3:7])
        return {'pos_w': qpos[0:3].copy(), 'quat_wxyz': qpos[3:7].copy(),
                'lin_vel_b': terms.rotate_world_to_body(rotmat_wb, qvel[0:3]),
                'ang_vel_b': qvel[3:6].copy()}   # free-joint angular velocity: body frame

    def ground_truth(self) -> dict[str, np.ndarray]:
        """The true state, same fields as odom (never noised or faulted)."""
        return self.odom()

    def imu(self) -> dict[str, np.ndarray]:
        """ang_vel_b [rad/s] (gyro + noise) and lin_acc_b [m/s^2, specific force]."""
        noise = self._rng.normal(0.0, self.gyro_noise_std_rad_s, 3) \
            if self.gyro_noise_std_rad_s > 0 else np.zeros(3)
        if self.held:   # the hand carries the weight: at rest, specific force = -g in body
            rotmat_wb = terms.quat_to_rotmat(self.data.qpos[3:7])
            lin_acc_b = terms.rotate_world_to_body(rotmat_wb, np.array([0, 0, GRAVITY_M_S2]))
            return {'ang_vel_b': noise, 'lin_acc_b': lin_acc_b}
        gyro, acc = self._adr['gyro'], self._adr['accelerometer']
        return {'ang_vel_b': self.data.sensordata[gyro:gyro + 3] + noise,
                'lin_acc_b': self.data.sensordata[acc:acc + 3].copy()}
