"""One simulated quadruped for the HIL bridge: the training plant behind a motor driver.

The model comes from the same URDF through ``sim2real.sim.legged.legged_model`` (its IMU and
pose sensors kept, which training removes) and the joints are driven by the same
``JointActuator`` (PD with the DC-motor torque-speed envelope) with ``xp=numpy``, evaluated
every physics step exactly as ``tasks/quadruped`` does: ``ctrl = actuator.torque(q, qd)``,
then ``mj_step``. Motor strength, gain scales and encoder bias are the nominal 1, 1 and 0.

It behaves like a joint-level motor driver behind a ros2_control forward position controller:

- the position targets (Float64MultiArray, 12 values in ``JOINT_ORDER``) are held and tracked
  by the PD at physics rate; the gains are the driver's own (the bridge's kp/kd parameters,
  the training values), replaced per joint by kp / kd arrays when the policy node publishes
  them (hardware with kp/kd command interfaces);
- start pose: after ``reset`` the robot stands on the floor at the default pose with the PD
  holding that pose (the driver holds a pose before the first command, so no hand launch),
  settled for ``SETTLE_S`` before the clock starts;
- command watchdog: once targets have arrived, ``command_timeout_s`` without one switches to
  damping (kp 0, kd ``damping_kd``; event 'watchdog'), since ``forward_command_controller``
  itself has no command timeout. A new target ends the failsafe.

IMU: orientation from the base quaternion, gyro and accelerometer from MuJoCo's sensors at
the base site (evaluated by ``mj_step`` before integrating: one physics step old).
"""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np

from sim2real import terms
from sim2real.deploy.bridge.joint_driver import DrivenJoints, JointDriver
from sim2real.sim.joint_actuator import JointActuator, JointActuatorCfg
from sim2real.sim.legged import JOINT_NAMES, legged_model

JOINT_ORDER = JOINT_NAMES
"""Order of the target, kp and kd arrays of the shipped URDF: the policy (contract) order FL,
FR, RL, RR x hip, thigh, calf (the sim itself follows its URDF's order, info.joint_names).
The forward position controller's `joints` list must be in this order."""
PUBLISHED_ORDER = tuple(sorted(JOINT_NAMES))
"""Order of the names in the published JointState: alphabetical, as some drivers do, so the
node's by-name matching is exercised on every message."""
SETTLE_S = 0.5
"""Simulated time the robot stands on the holding PD after reset before the clock starts [s]."""


class QuadrupedSim(DrivenJoints):
    """MuJoCo quadruped with the training actuator, a standing start and a command watchdog."""

    def __init__(self, urdf_path: str | Path, physics_rate_hz: float = 500.0,
                 kp_nm_per_rad=25.0, kd_nm_s_per_rad=0.5, damping_kd: float = 1.0,
                 command_timeout_s: float = 0.1, imu_gyro_noise_std_rad_s: float = 0.0,
                 seed: int = 0):
        """Build the model at physics_rate_hz with the driver's gains (JOINT_ORDER)."""
        self.dt_s = 1.0 / physics_rate_hz
        self.model, self.info = legged_model(urdf_path, self.dt_s)
        self.data = mujoco.MjData(self.model)
        info = self.info
        self.actuator = JointActuator(JointActuatorCfg(
            kp_nm_per_rad, kd_nm_s_per_rad, tuple(info.effort_limit_nm),
            tuple(info.stall_torque_nm), tuple(info.no_load_speed_rad_s)), 1, 12, xp=np,
            dtype=np.float64)
        self.driver = JointDriver(self.actuator, damping_kd, command_timeout_s)
        self.gyro_noise_std_rad_s = imu_gyro_noise_std_rad_s
        self._rng = np.random.default_rng(seed)
        self._adr = {n: self.model.sensor(n).adr[0] for n in ('gyro', 'accelerometer')}
        self._published = np.array([self.info.joint_names.index(n) for n in PUBLISHED_ORDER])
        terms.quat_to_rotmat(np.array([1.0, 0.0, 0.0, 0.0]))   # array-API import, not in a step
        self.reset()

    @property
    def joint_pos_rad(self) -> np.ndarray:
        """Joint positions [rad], JOINT_ORDER."""
        return self.data.qpos[self.info.qpos_adr].copy()

    @property
    def joint_vel_rad_s(self) -> np.ndarray:
        """Joint velocities [rad/s], JOINT_ORDER."""
        return self.data.qvel[self.info.qvel_adr].copy()

    def reset(self, now_s: float | None = None) -> None:
        """Standing at the default pose, PD holding it, settled; no command yet."""
        mujoco.mj_resetData(self.model, self.data)
        self.data.qpos[0:3] = (0.0, 0.0, self.info.nominal_base_height_m)
        self.data.qpos[3:7] = (1.0, 0.0, 0.0, 0.0)
        self.data.qpos[self.info.qpos_adr] = self.info.default_joint_pos_rad
        self.driver.reset(self.info.default_joint_pos_rad)
        for _ in range(round(SETTLE_S / self.dt_s)):
            self._physics()
        self.driver.reset(self.info.default_joint_pos_rad, now_s)

    def joint_states(self) -> dict[str, np.ndarray]:
        """pos_rad, vel_rad_s, effort_nm (the latest motor torque), PUBLISHED_ORDER."""
        order = self._published
        return {'pos_rad': self.joint_pos_rad[order], 'vel_rad_s': self.joint_vel_rad_s[order],
                'effort_nm': self.actuator.torque_nm[0, order].copy()}

    def imu(self) -> dict[str, np.ndarray]:
        """quat_wxyz [world<-base], ang_vel_b [rad/s] (gyro + noise), lin_acc_b [m/s^2]."""
        noise = self._rng.normal(0.0, self.gyro_noise_std_rad_s, 3) \
            if self.gyro_noise_std_rad_s > 0 else np.zeros(3)
        gyro, acc = self._adr['gyro'], self._adr['accelerometer']
        return {'quat_wxyz': self.data.qpos[3:7].copy(),
                'ang_vel_b': self.data.sensordata[gyro:gyro + 3] + noise,
                'lin_acc_b': self.data.sensordata[acc:acc + 3].copy()}

    def ground_truth(self) -> dict[str, np.ndarray]:
        """pos_w [m], quat_wxyz, lin_vel_b [m/s], ang_vel_b [rad/s]; exact, never faulted."""
        qpos, qvel = self.data.qpos, self.data.qvel
        rotmat_wb = terms.quat_to_rotmat(qpos[3:7])
        return {'pos_w': qpos[0:3].copy(), 'quat_wxyz': qpos[3:7].copy(),
                'lin_vel_b': terms.rotate_world_to_body(rotmat_wb, qvel[0:3]),
                'ang_vel_b': qvel[3:6].copy()}
