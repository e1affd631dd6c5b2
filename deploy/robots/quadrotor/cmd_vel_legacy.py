"""SI thrust and body rates <-> crazyswarm2 ``cmd_vel_legacy`` geometry_msgs/Twist fields.

Pure numpy (no rclpy), so both the policy node and the HIL bridge use the same arithmetic.

The chain on real hardware: Twist -> crazyswarm2 ``crazyflie_server`` ->
``sendSetpoint(roll, pitch, yawrate, thrust)`` (CRTP legacy RPYT setpoint) -> firmware
``crtp_commander_rpyt.c`` with the parameters ``flightmode.stabModeRoll`` and
``flightmode.stabModePitch`` set to 0 (``RATE``; the default 1 is ``ANGLE``; yaw is ``RATE`` by
default) -> ``controller_pid.c`` rate loop. Sources, as read (bitcraze/crazyflie-firmware at
2a18fc2, IMRCLab/crazyswarm2 at f6154e2):

- crazyswarm2 ``crazyflie/src/crazyflie_server.cpp`` (``cmd_vel_legacy_changed``):
  ``roll = linear.y; pitch = -linear.x; yawrate = angular.z;
  thrust = min<uint16_t>(max<float>(linear.z, 0), 60000)``.
- bitcraze crazyflie-firmware ``src/modules/src/crtp_commander_rpyt.c``: in RATE mode
  ``attitudeRate.roll = roll; attitudeRate.pitch = pitch;
  attitudeRate.yaw = -yaw`` ("legacy rate input is inverted"), all in deg/s.
- bitcraze crazyflie-firmware ``src/modules/src/controller_pid.c``:
  ``attitudeControllerCorrectRatePID(gyro.x, -gyro.y, gyro.z, rateDesired...)``: the legacy
  pitch axis is the negated body y axis; gyro axes are the body frame (x forward, y left,
  z up, as our FLU body frame).

Resulting field map (omega = body rates [rad/s; body frame FLU], deg = rad * 180 / pi):

=============  ==========================  ========================================
Twist field    carries                     why
=============  ==========================  ========================================
linear.y       +deg(omega_x)  [deg/s]      roll = linear.y; compared with +gyro.x
linear.x       +deg(omega_y)  [deg/s]      pitch = -linear.x; compared with -gyro.y
angular.z      -deg(omega_z)  [deg/s]      attitudeRate.yaw = -yawrate; vs +gyro.z
linear.z       map(T) [thrust command]     THRUST_MAPS; clipped to [0, 60000]
angular.x/y    0 (unused)
=============  ==========================  ========================================

Thrust (``linear.z``) is the firmware's 16-bit thrust command T (crazyswarm2 clips it to
[0, 60000]; the firmware's RPYT commander sends 0 below MIN_COMMAND = 1000), given to each
motor beside the rate controller's differential. What thrust T gives depends on the firmware;
THRUST_MAPS holds the two measured relations, named by the node's and the bridge's
``legacy_thrust_map`` parameter (one table for both, so the HIL twin's firmware model is the
node's inverse):

- ``battery_compensated`` (the default): crazyflie-firmware with
  ``CONFIG_ENABLE_THRUST_BAT_COMPENSATED=y`` (its Kconfig default; the cubic fit since early
  2025, ``src/drivers/src/motors.c`` ``motorsCompensateBatteryVoltage`` and
  ``src/platform/interface/platform_defaults_cf2.h``, 2.1+ propellers). Each motor's thrust
  is ``T / 65535 * THRUST_MAX`` with THRUST_MAX = 0.12 N, 0 below THRUST_MIN = 0.0128 N
  (T = 7000): the firmware inverts its thrust-vs-motor-voltage fit and scales the PWM by the
  filtered battery voltage, so T means the same thrust over the battery's charge, until a low
  battery cannot supply the motor voltage near full thrust. Collective: 0.4395 N at 60000.
- ``pwm_2015``: firmware without the compensation (or before it; Crazyflie 2.0 motors and
  propellers): Bitcraze's 2015 thrust measurement, the whole vehicle's thrust at PWM duty
  cycle T / 65535 (``docs/functional-areas/pwm-to-thrust.md``, "Old measurements",
  interpolated linearly between its rows). It was measured on a bench supply whose voltage
  sagged from 4.01 V at 0 % to 3.30 V at 93.75 %; on a battery the thrust of a given PWM
  falls further as the battery discharges (the motor voltage is the duty cycle times the
  battery voltage). Collective: 0.547 N at 60000.

The contract's thrust is collective thrust in newtons, so a thrust limit, the soft start and
the fallback mean the same in the node, the HIL twin and on the vehicle; a parameter file
whose ``thrust_max_n`` the map cannot reach at 60000 is refused. Not modelled: the firmware's
thrust lock (motors stay off until one setpoint with thrust 0 arrives); the policy node sends
thrust 0 while disarmed, which unlocks the real vehicle.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

COMMAND_MAX = 60000.0
"""Largest thrust command crazyswarm2 forwards (it clips linear.z to [0, 60000])."""
MIN_COMMAND = 1000.0
"""Thrust commands below this are 0 in the firmware's RPYT commander (crtp_commander_rpyt.c)."""
UINT16_MAX = 65535.0
GRAM_FORCE_N = 9.80665e-3
"""One gram-force [N] (the 2015 table is in grams)."""
COMPENSATED_MOTOR_MAX_N = 0.12
"""THRUST_MAX of platform_defaults_cf2.h (2.1+ propellers): a motor's thrust at T = 65535 [N]."""
COMPENSATED_MOTOR_MIN_N = 0.012817578393224994
"""THRUST_MIN of platform_defaults_cf2.h: below it a motor gets no PWM [N]."""
TABLE_2015 = ((0.0, 0.0), (6.25, 1.6), (12.5, 4.8), (18.75, 7.9), (25.0, 10.9),
              (31.25, 13.9), (37.5, 17.3), (43.75, 21.0), (50.0, 24.4), (56.25, 28.6),
              (62.5, 32.8), (68.75, 37.3), (75.0, 41.7), (81.25, 46.0), (87.5, 51.9),
              (93.75, 57.9))
"""Bitcraze 2015: (PWM duty [%], whole-vehicle thrust [g]); the page's '43.25 %' row is the
43.75 % step of its 6.25 % ramp."""


@dataclass(frozen=True)
class ThrustMap:
    """Collective thrust [N] of the legacy thrust command T, piecewise linear in T."""

    name: str
    command: tuple[float, ...]
    """Knots: thrust commands T, rising from 0."""
    thrust_n: tuple[float, ...]
    """Collective thrust at each knot [N], rising from 0."""
    cutoff_command: float = MIN_COMMAND
    """Commands below this give no thrust (the firmware's dead band)."""

    @property
    def max_thrust_n(self) -> float:
        """Collective thrust at COMMAND_MAX [N]: the most this interface can ask for."""
        return self.to_thrust_n(COMMAND_MAX)

    def to_command(self, thrust_n: float) -> float:
        """The thrust command T for a collective thrust [N], within [0, COMMAND_MAX]."""
        command = float(np.interp(float(thrust_n), self.thrust_n, self.command))
        return float(np.clip(command, 0.0, COMMAND_MAX))

    def to_thrust_n(self, command: float) -> float:
        """Collective thrust [N] the vehicle makes at command T (clipped as crazyswarm2 does;
        NaN stays NaN for the caller to reject)."""
        command = float(np.clip(float(command), 0.0, COMMAND_MAX))
        if command < self.cutoff_command:
            return 0.0
        return float(np.interp(command, self.command, self.thrust_n))


def _compensated() -> ThrustMap:
    """The battery-compensated firmware: 4 motors x T / 65535 x THRUST_MAX."""
    return ThrustMap('battery_compensated', (0.0, UINT16_MAX), (0.0, 4 * COMPENSATED_MOTOR_MAX_N),
                     UINT16_MAX * COMPENSATED_MOTOR_MIN_N / COMPENSATED_MOTOR_MAX_N)


def _table_2015() -> ThrustMap:
    """The 2015 measurement, duty cycle of 65535 -> grams-force; extrapolated linearly past
    93.75 % (T = 61439; crazyswarm2's 60000 stays inside the table)."""
    pct, grams = np.array(TABLE_2015).T
    return ThrustMap('pwm_2015', tuple(pct / 100.0 * UINT16_MAX),
                     tuple(grams * GRAM_FORCE_N))


THRUST_MAPS = {m.name: m for m in (_compensated(), _table_2015())}
"""The legacy thrust maps by name (parameter legacy_thrust_map)."""


def thrust_map(name: str) -> ThrustMap:
    """The named map; ValueError naming the valid ones."""
    if name not in THRUST_MAPS:
        raise ValueError(f'legacy_thrust_map {name!r} is not one of {sorted(THRUST_MAPS)}')
    return THRUST_MAPS[name]


def to_cmd_vel_legacy(thrust_n: float, rates_rad_s_b, thrust: ThrustMap
                      ) -> tuple[float, float, float, float]:
    """(linear_x, linear_y, linear_z, angular_z) of a thrust [N] and body rates [rad/s]."""
    rates_deg_s = np.degrees(np.asarray(rates_rad_s_b, dtype=np.float64).reshape(3))
    return (float(rates_deg_s[1]), float(rates_deg_s[0]), thrust.to_command(thrust_n),
            float(-rates_deg_s[2]))


def from_cmd_vel_legacy(linear_x: float, linear_y: float, linear_z: float, angular_z: float,
                        thrust: ThrustMap) -> tuple[float, np.ndarray]:
    """Collective thrust [N] and body rates (3,) [rad/s; body frame] of the Twist fields."""
    rates_rad_s_b = np.radians(np.array([linear_y, linear_x, -angular_z], dtype=np.float64))
    return thrust.to_thrust_n(linear_z), rates_rad_s_b
