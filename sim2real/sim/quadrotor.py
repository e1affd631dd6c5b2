"""Quadrotor actuation at physics rate: onboard rate controller, mixer, motor lag, thrust.

Array-API code (torch in training, numpy in the HIL bridge). The onboard controller uses
the robot's NOMINAL parameters, as firmware would; the plant uses the randomized ones.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from array_api_compat import array_namespace

from sim2real.sim.rotors import allocation_matrix
from sim2real.sim.state import Stateful
from sim2real.urdf import RotorParams


@dataclass
class RateControllerCfg:
    """Body-rate controller of the flight firmware, run at physics rate: a PD law on the
    rate error with the derivative on the measured rate, as the Crazyflie's rate PID
    (roll and pitch with a D term, yaw without much of one).

    torque = J (kp (w_cmd - w) - kd dw/dt) + w x J w, J the NOMINAL inertia. The gains keep
    the rate loop's step response within 10 % overshoot and 0.1-0.2 s to 90 % over the
    training box (motor lag 0.06-0.14 s, loop gain x0.71-1.44 from thrust and inertia):
    the P-only kp 20 it replaces overshot 13-45 % and took 0.35-0.8 s to settle there, so
    the policy met a different plant at every corner.
    """

    kp_rad_s2_per_rad_s: tuple[float, float, float] = (40.0, 40.0, 10.0)
    """Proportional gains on the body-rate error (roll, pitch, yaw) [1/s]."""
    kd: tuple[float, float, float] = (2.0, 2.0, 0.5)
    """Gains on the measured angular acceleration (roll, pitch, yaw) [torque / (J dw/dt),
    dimensionless]."""


def cap_rotor_thrusts(thrust_n, max_thrust_n: float):
    """Rotor thrusts the firmware can command from the mixer's (N, 4) [N]: all four lowered
    by the excess of the highest over the maximum (attitude kept before collective thrust),
    then negatives cut to zero, as the Crazyflie's power distribution caps its motors
    (crazyflie-firmware, power_distribution_quadrotor.c, powerDistributionCap)."""
    xp = array_namespace(thrust_n)
    excess = xp.clip(xp.max(thrust_n, axis=1, keepdims=True) - max_thrust_n, 0.0, None)
    return xp.clip(thrust_n - excess, 0.0, max_thrust_n)


def motor_lag(speed_rad_s, command_rad_s, dt_s: float, time_constant_s):
    """Exact first-order response over dt of a zero-order-held speed command."""
    xp = array_namespace(speed_rad_s)
    alpha = 1.0 - xp.exp(-dt_s / time_constant_s)
    return speed_rad_s + alpha * (command_rad_s - speed_rad_s)


class QuadrotorActuator(Stateful):
    """Turns actuator commands into rotor thrusts written to MuJoCo's ctrl, every substep."""

    STATE = ('speed_rad_s', 'command', 'thrust_scale', 'time_constant_s', 'last_ang_vel_b')
    NOT_STATE = ('_mix', '_inertia', '_kp', '_kd')   # nominal constants

    def __init__(self, rotors: RotorParams, inertia_kg_m2, num_envs: int, xp, dtype,
                 rate_cfg: RateControllerCfg | None = None):
        """Nominal rotor model, nominal inertia diag (3,), batch size, array namespace."""
        self.rotors = rotors
        self.xp = xp
        self.num_envs = num_envs
        alloc = allocation_matrix(rotors)
        self._mix = xp.asarray(np.linalg.inv(alloc).T.copy(), dtype=dtype)   # wrench -> f
        self._inertia = xp.asarray(np.asarray(inertia_kg_m2), dtype=dtype)
        cfg = rate_cfg or RateControllerCfg()
        self._kp = xp.asarray(np.asarray(cfg.kp_rad_s2_per_rad_s), dtype=dtype)
        self._kd = xp.asarray(np.asarray(cfg.kd), dtype=dtype)
        ones = xp.ones((num_envs, 4), dtype=dtype)
        self.speed_rad_s = ones * 0.0
        """Rotor speeds, the motor state [rad/s], (N, 4)."""
        self.command = ones * 0.0
        """Current command: rotor speeds (N, 4) or [thrust N, body rates rad/s] (N, 4)."""
        self.mode = 'rotor_speeds'
        self.thrust_scale = ones * 1.0
        """Per-rotor thrust coefficient multiplier (randomization), (N, 4)."""
        self.time_constant_s = ones[:, :1] * rotors.time_constant_s
        """Per-env motor time constant [s], (N, 1)."""
        self.last_ang_vel_b = ones[:, :3] * float('nan')
        """Body rates of the previous substep [rad/s], (N, 3); NaN after a reset (no rate
        derivative on the first substep)."""

    def reset(self, env_ids, speed_rad_s: float) -> None:
        """Set the motors of env_ids to a steady speed; the rate derivative starts afresh."""
        self.speed_rad_s[env_ids] = speed_rad_s
        self.last_ang_vel_b[env_ids] = float('nan')

    def hover_speed_rad_s(self, mass_kg: float, gravity_m_s2: float = 9.81) -> float:
        """Nominal rotor speed at which four rotors carry mass_kg [rad/s]."""
        return float(np.sqrt(mass_kg * gravity_m_s2 / (4 * self.rotors.thrust_coefficient)))

    def rate_control(self, command, ang_vel_b, dt_s: float):
        """Rotor speed commands from [collective thrust N, body rates rad/s] (N, 4)."""
        xp = self.xp
        rate_err = command[:, 1:4] - ang_vel_b
        last = xp.where(xp.isnan(self.last_ang_vel_b), ang_vel_b, self.last_ang_vel_b)
        ang_acc = (ang_vel_b - last) / dt_s
        # tau = J (Kp (w_cmd - w) - Kd dw/dt) + w x J w
        j_w = ang_vel_b * self._inertia
        tau = self._inertia * (self._kp * rate_err - self._kd * ang_acc) + xp.linalg.cross(
            ang_vel_b, j_w)
        wrench = xp.concat([command[:, 0:1], tau], axis=1)
        thrust = cap_rotor_thrusts(wrench @ self._mix, self.rotors.max_thrust_n)
        return xp.sqrt(thrust / self.rotors.thrust_coefficient)

    def substep(self, ang_vel_b, dt_s: float):
        """Advance the motors one physics step; returns rotor thrusts [N], (N, 4)."""
        xp = self.xp
        if self.mode == 'thrust_body_rates':
            speed_cmd = self.rate_control(self.command, ang_vel_b, dt_s)
        else:
            speed_cmd = self.command
        self.last_ang_vel_b[...] = ang_vel_b
        speed_cmd = xp.clip(speed_cmd, self.rotors.min_speed_rad_s, self.rotors.max_speed_rad_s)
        self.speed_rad_s = motor_lag(self.speed_rad_s, speed_cmd, dt_s, self.time_constant_s)
        kf = self.rotors.thrust_coefficient
        return kf * self.thrust_scale * self.speed_rad_s * self.speed_rad_s
