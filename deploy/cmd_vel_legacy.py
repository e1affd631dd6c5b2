"""SI thrust and body rates <-> crazyswarm2 ``cmd_vel_legacy`` geometry_msgs/Twist fields.

Pure numpy (no rclpy), so both the policy node and the HIL bridge use the same arithmetic.

The chain on real hardware: Twist -> crazyswarm2 ``crazyflie_server`` ->
``sendSetpoint(roll, pitch, yawrate, thrust)`` (CRTP legacy RPYT setpoint) -> firmware
``crtp_commander_rpyt.c`` with the parameters ``flightmode.stabModeRoll`` and
``flightmode.stabModePitch`` set to 0 (``RATE``; the default 1 is ``ANGLE``; yaw is ``RATE`` by
default) -> ``controller_pid.c`` rate loop. Sources, as read:

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
linear.z       60000 * T / T_max  [PWM]    clipped to [0, 60000]; T collective [N]
angular.x/y    0 (unused)
=============  ==========================  ========================================

The thrust map is LINEAR in collective thrust T (the sim2real convention, not the motors'
true PWM-thrust curve): ``pwm = 60000 * T / max_collective_thrust_n``. crazyswarm2 truncates
linear.z to an integer, a resolution of max_collective_thrust_n / 60000 (1e-5 N for the
Crazyflie). Not modelled here: the firmware's thrust lock (motors stay off until one setpoint
with thrust 0 arrives) and its MIN_THRUST dead band; the policy node sends thrust 0 while
disarmed, which unlocks the real vehicle.
"""

from __future__ import annotations

import numpy as np

PWM_MAX = 60000.0
"""Full-scale thrust on the firmware's legacy setpoint scale (crazyswarm2 clips to it)."""


def to_cmd_vel_legacy(thrust_n: float, rates_rad_s_b, max_collective_thrust_n: float
                      ) -> tuple[float, float, float, float]:
    """(linear_x, linear_y, linear_z, angular_z) of a thrust [N] and body rates [rad/s]."""
    rates_deg_s = np.degrees(np.asarray(rates_rad_s_b, dtype=np.float64).reshape(3))
    pwm = np.clip(PWM_MAX * float(thrust_n) / max_collective_thrust_n, 0.0, PWM_MAX)
    return (float(rates_deg_s[1]), float(rates_deg_s[0]), float(pwm), float(-rates_deg_s[2]))


def from_cmd_vel_legacy(linear_x: float, linear_y: float, linear_z: float, angular_z: float,
                        max_collective_thrust_n: float) -> tuple[float, np.ndarray]:
    """Collective thrust [N] and body rates (3,) [rad/s; body frame] of the Twist fields."""
    pwm = np.clip(float(linear_z), 0.0, PWM_MAX)   # NaN stays NaN: the caller rejects it
    thrust_n = float(pwm) / PWM_MAX * max_collective_thrust_n
    rates_rad_s_b = np.radians(np.array([linear_y, linear_x, -angular_z], dtype=np.float64))
    return thrust_n, rates_rad_s_b
