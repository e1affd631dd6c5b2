"""One simulated LEAP-class hand holding its cube, for the HIL bridge: the training plant
behind a servo bus.

The model comes from the same URDF through ``sim2real.sim.in_hand.in_hand_model`` (the cube
included) and the joints are driven by the same ``JointActuator`` (PD with the servos'
torque-speed envelope, clipped at the URDF's current-limited effort) with ``xp=numpy``, every
physics step as ``tasks/hand`` does. Gain scales, strength and encoder offsets are nominal.

It behaves like the Dynamixel bus behind a forward position controller:

- position targets (Float64MultiArray, 16 values in the contract's joint order) are tracked
  by the PD at physics rate; after ``reset`` the hand holds its grasp pose with the cube
  resting on the palm, settled for ``SETTLE_S``;
- joint states are published in servo-ID order (``SERVO_ORDER``: per finger abduction,
  flexion, PIP, DIP; LEAP's IDs 0-15), which differs from the URDF's, so the node's by-name
  matching is exercised on every message;
- command watchdog (``sim2real.deploy.bridge.joint_driver``): once targets have arrived,
  ``command_timeout_s`` without one switches to damping (kp 0, kd ``damping_kd``; event
  'watchdog'); a new target ends it.

- the cube's tracked pose (``cube_pose``, each call one tracker frame, at the bridge's
  cube_pose_rate_hz): the training's tracker model (``sim2real.sim.pose_tracker``) with the
  pose ``tracker_latency_frames`` frames old and Gaussian position and rotation noise; the
  bridge stamps it when published, as a camera pipeline that stamps its output does.

Ground truth is the cube: its pose and velocity, for the HIL monitor's rotation and drop
figures.
"""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np

from sim2real import terms
from sim2real.deploy.bridge.joint_driver import DrivenJoints, JointDriver
from sim2real.sim.in_hand import in_hand_model
from sim2real.sim.joint_actuator import JointActuator, JointActuatorCfg
from sim2real.sim.pose_tracker import PoseTracker

SERVO_ORDER = tuple(f'{f}_{j}' for f in ('if', 'mf', 'rf') for j in ('abd', 'mcp', 'pip', 'dip')
                    ) + ('th_cmc', 'th_axl', 'th_mcp', 'th_ipl')
"""Joint names in servo-ID order (LEAP_Hand_API: per finger abduction 0, flexion 1, PIP 2,
DIP 3; index 0-3, middle 4-7, ring 8-11, thumb 12-15)."""
SETTLE_S = 0.5
"""Simulated time the hand holds its grasp on the cube after reset before the clock starts [s]."""


class HandSim(DrivenJoints):
    """MuJoCo hand + cube with the training actuator, a held grasp and a command watchdog."""

    def __init__(self, urdf_path: str | Path, physics_rate_hz: float = 200.0,
                 kp_nm_per_rad: float | tuple = 3.0, kd_nm_s_per_rad: float | tuple = 0.1,
                 damping_kd: float = 0.1, command_timeout_s: float = 0.2,
                 tracker_latency_frames: int = 0, tracker_pos_noise_m: float = 0.0,
                 tracker_rot_noise_rad: float = 0.0, seed: int = 0):
        """Model at physics_rate_hz with the driver's gains (contract joint order); the cube
        tracker's latency [frames] and noise deviations [m, rad]; the noise's seed."""
        self.dt_s = 1.0 / physics_rate_hz
        self.model, self.info = in_hand_model(urdf_path, self.dt_s)
        self.data = mujoco.MjData(self.model)
        info = self.info
        actuator = JointActuator(JointActuatorCfg(
            kp_nm_per_rad, kd_nm_s_per_rad, tuple(info.effort_limit_nm),
            tuple(info.stall_torque_nm), tuple(info.no_load_speed_rad_s)), 1,
            len(info.joint_names), xp=np, dtype=np.float64)
        self.driver = JointDriver(actuator, damping_kd, command_timeout_s)
        self.published_order = np.array([info.joint_names.index(j) for j in SERVO_ORDER])
        self.tracker = PoseTracker(1, tracker_latency_frames, np, np.float64)
        self.tracker.configure(np.arange(1), 1, tracker_latency_frames, tracker_pos_noise_m,
                               tracker_rot_noise_rad)
        self._rng = np.random.default_rng(seed)
        self.reset()

    def reset(self, now_s: float | None = None) -> None:
        """The grasp pose held by the PD, the cube on the palm, settled; no command yet."""
        mujoco.mj_resetData(self.model, self.data)
        q0 = self.info.default_joint_pos_rad
        self.data.qpos[self.info.qpos_adr] = q0
        self.driver.reset(q0)
        for _ in range(round(SETTLE_S / self.dt_s)):
            self._physics()
        self.driver.reset(q0, now_s)
        self.tracker.reset(np.arange(1), *self._cube_pose_w())

    def joint_states(self) -> dict[str, np.ndarray]:
        """pos_rad, vel_rad_s, effort_nm (the latest motor torque) in SERVO_ORDER."""
        order = self.published_order
        return {'pos_rad': self.data.qpos[self.info.qpos_adr][order],
                'vel_rad_s': self.data.qvel[self.info.qvel_adr][order],
                'effort_nm': self.driver.actuator.torque_nm[0, order].copy()}

    def cube_pose(self) -> dict[str, np.ndarray]:
        """One tracker frame: pos_m [m; world, the hand's root frame] and quat_wxyz of the
        cube as tracked now (latency_frames old, noisy)."""
        self.tracker.update(*self._cube_pose_w(), self._rng.standard_normal((1, 3)),
                            self._rng.standard_normal((1, 3)))
        return {'pos_m': self.tracker.pos_m[0].copy(),
                'quat_wxyz': self.tracker.quat_wxyz[0].copy()}

    def _cube_pose_w(self) -> tuple[np.ndarray, np.ndarray]:
        """The cube's exact position [m] and quaternion, (1, 3) and (1, 4) copies."""
        p = self.info.object_qpos_adr
        return self.data.qpos[None, p:p + 3].copy(), self.data.qpos[None, p + 3:p + 7].copy()

    def ground_truth(self) -> dict[str, np.ndarray]:
        """The cube: pos_w [m], quat_wxyz, lin_vel_b [m/s; cube frame], ang_vel_b [rad/s];
        exact, never faulted."""
        p, v = self.info.object_qpos_adr, self.info.object_qvel_adr
        quat = self.data.qpos[p + 3:p + 7].copy()
        rotmat_wb = terms.quat_to_rotmat(quat)
        return {'pos_w': self.data.qpos[p:p + 3].copy(), 'quat_wxyz': quat,
                'lin_vel_b': terms.rotate_world_to_body(rotmat_wb, self.data.qvel[v:v + 3]),
                'ang_vel_b': self.data.qvel[v + 3:v + 6].copy()}
