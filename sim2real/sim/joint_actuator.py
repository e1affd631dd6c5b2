"""Joint actuation at physics rate: explicit PD, DC-motor torque-speed envelope, strength.

Array-API code (torch in training, numpy in the HIL bridge), so the plant the policy is
trained on is the plant the bridge's motor driver runs. Every physics step:

    tau_pd = kp * kp_scale * (q_target - q) - kd * kd_scale * qd
    tau    = strength * clip(tau_pd, lo(qd), hi(qd))

The envelope (lo, hi) is the torque-speed line of a voltage-limited DC motor with a current
(effort) limit, the model of Isaac Lab's ``DCMotor`` actuator. With a supply voltage cap the
torque available in the direction of motion falls linearly with speed,
``tau_max(qd) = stall * (1 - qd / no_load)``, reaching zero at the no-load speed; against
the motion (braking) back-EMF adds to the supply, ``stall * (1 + |qd| / no_load)``, so the
current limit, i.e. the effort limit, binds whenever stall >= effort (the usual case).
Both bounds are then clipped to [-effort, effort]. See the DC motor speed-torque curve, e.g.
Hughes & Drury, "Electric Motors and Drives", 5th ed., ch. 3, or maxon's "Key information
on maxon DC motor and maxon EC motor" (the speed-torque line).

``strength`` models the spread of the torque constant kt (torque per ampere): it scales the
whole motor torque, envelope included, so a 0.9 motor never exceeds 0.9 * effort. Whatever
writes tau into MuJoCo must therefore not clip it again at the nominal effort limit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from array_api_compat import array_namespace

from sim2real.sim.state import Stateful

PerJoint = float | tuple[float, ...]


@dataclass
class JointActuatorCfg:
    """PD gains, effort limits and torque-speed envelope of a robot's joint motors."""

    kp_nm_per_rad: PerJoint
    """Position gain per joint, or one for all [N m/rad]."""
    kd_nm_s_per_rad: PerJoint
    """Velocity gain per joint, or one for all [N m s/rad]."""
    effort_limit_nm: PerJoint
    """Peak torque (current limit) per joint, or one for all [N m]."""
    stall_torque_nm: PerJoint | None = None
    """Torque at zero speed of the torque-speed line [N m]; None: no speed dependence."""
    no_load_speed_rad_s: PerJoint | None = None
    """Speed at which the torque-speed line reaches zero torque [rad/s]."""


def torque_speed_limits(qd_rad_s, stall_torque_nm, no_load_speed_rad_s, effort_limit_nm):
    """Torque bounds (lo, hi) [N m] of a DC motor turning at qd [rad/s].

    hi = clip(stall * (1 - qd / no_load), 0, effort) and
    lo = clip(stall * (-1 - qd / no_load), -effort, 0): the line limits the torque that
    drives the motion and leaves the braking torque at the effort limit.
    """
    xp = array_namespace(qd_rad_s)
    speed_ratio = qd_rad_s / no_load_speed_rad_s
    zero = xp.zeros_like(qd_rad_s)
    hi = xp.minimum(xp.maximum(stall_torque_nm * (1.0 - speed_ratio), zero), effort_limit_nm)
    lo = xp.maximum(xp.minimum(stall_torque_nm * (-1.0 - speed_ratio), zero), -effort_limit_nm)
    return lo, hi


class JointActuator(Stateful):
    """Per-env PD motors with randomizable gains and strength, evaluated every physics step."""

    STATE = ('kp_scale', 'kd_scale', 'strength', 'target_rad', 'torque_nm')
    NOT_STATE = ('kp_nm_per_rad', 'kd_nm_s_per_rad', 'effort_limit_nm', '_envelope')   # nominal

    def __init__(self, cfg: JointActuatorCfg, num_envs: int, num_joints: int, xp, dtype,
                 device=None):
        """Nominal motor model, batch size, joint count, array namespace, dtype, device."""
        self.cfg = cfg
        self.xp = xp
        self.num_envs = num_envs
        self.num_joints = num_joints
        self._device = device
        self.kp_nm_per_rad = self._per_joint(cfg.kp_nm_per_rad, dtype)
        """Nominal position gains [N m/rad], (1, J)."""
        self.kd_nm_s_per_rad = self._per_joint(cfg.kd_nm_s_per_rad, dtype)
        """Nominal velocity gains [N m s/rad], (1, J)."""
        self.effort_limit_nm = self._per_joint(cfg.effort_limit_nm, dtype)
        """Peak torques [N m], (1, J)."""
        self._envelope = None
        if (cfg.stall_torque_nm is None) != (cfg.no_load_speed_rad_s is None):
            raise ValueError('give both stall_torque_nm and no_load_speed_rad_s, or neither')
        if cfg.stall_torque_nm is not None:
            self._envelope = (self._per_joint(cfg.stall_torque_nm, dtype),
                              self._per_joint(cfg.no_load_speed_rad_s, dtype))
        ones = self._asarray(np.ones((num_envs, num_joints)), dtype)
        self.xp = array_namespace(ones)
        self.kp_scale = ones * 1.0
        """Per-env, per-joint multiplier of kp (randomization), (N, J)."""
        self.kd_scale = ones * 1.0
        """Per-env, per-joint multiplier of kd (randomization), (N, J)."""
        self.strength = ones * 1.0
        """Per-env, per-joint motor strength (torque constant) multiplier, (N, J)."""
        self.target_rad = ones * 0.0
        """Joint position targets held between policy steps [rad], (N, J)."""
        self.torque_nm = ones * 0.0
        """Torque of the latest torque() call [N m], (N, J)."""

    def _asarray(self, values, dtype):
        """values as an array of this actuator's namespace, dtype and device."""
        if self._device is None:
            return self.xp.asarray(values, dtype=dtype)
        return self.xp.asarray(values, dtype=dtype, device=self._device)

    def _per_joint(self, values: PerJoint, dtype):
        """A scalar or per-joint tuple as a (1, J) array; rejects a wrong length."""
        if np.ndim(values) and np.shape(values) != (self.num_joints,):
            raise ValueError(f'expected 1 or {self.num_joints} values, got {np.shape(values)}')
        arr = np.broadcast_to(np.asarray(values, dtype=np.float64), (self.num_joints,))
        return self._asarray(arr.reshape(1, self.num_joints).copy(), dtype)

    def reset(self, env_ids, target_rad) -> None:
        """Hold env_ids at target_rad (scalar, (J,) or (len(env_ids), J)) [rad]."""
        self.target_rad[env_ids, :] = target_rad
        self.torque_nm[env_ids, :] = 0.0

    def torque(self, q_rad, qd_rad_s):
        """Motor torques [N m], (N, J), for joint positions [rad] and velocities [rad/s]."""
        xp = self.xp
        kp = self.kp_nm_per_rad * self.kp_scale
        kd = self.kd_nm_s_per_rad * self.kd_scale
        tau = kp * (self.target_rad - q_rad) - kd * qd_rad_s
        if self._envelope is None:
            tau = xp.clip(tau, -self.effort_limit_nm, self.effort_limit_nm)
        else:
            lo, hi = torque_speed_limits(qd_rad_s, *self._envelope, self.effort_limit_nm)
            tau = xp.minimum(xp.maximum(tau, lo), hi)
        self.torque_nm = self.strength * tau
        return self.torque_nm
