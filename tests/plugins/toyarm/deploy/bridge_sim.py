"""toyarm's simulated twin for the HIL bridge: the training plant behind a joint driver.

The model comes from the same URDF through ``sim2real.sim.joint_robot.fixed_base_model``;
the joints are driven by the same ``JointActuator`` PD (numpy) at physics rate, as in
training. The driver holds the rest pose after reset and tracks position targets
(Float64MultiArray, contract joint order); a command timeout switches it to damping (event
'watchdog') until the next target. Ground truth is the tip position (z: the arm's plane).
"""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np

from sim2real.deploy.bridge.joint_driver import DrivenJoints, JointDriver
from sim2real.sim.joint_actuator import JointActuator, JointActuatorCfg
from sim2real.sim.joint_robot import fixed_base_model

from toyarm.kinematics import DEFAULT_POSE_RAD, link_lengths_m, tip_pos_b, tip_vel_b

PLANE_HEIGHT_M = 0.1
"""Height of the arm's plane above the base (the shoulder joint's origin) [m]."""


class ToyArmSim(DrivenJoints):
    """MuJoCo arm with the training actuator, a rest-pose start and a command watchdog."""

    def __init__(self, urdf_path: str | Path, physics_rate_hz: float, kp_nm_per_rad,
                 kd_nm_s_per_rad, damping_kd: float, command_timeout_s: float):
        """Model at physics_rate_hz with the driver's gains (contract joint order)."""
        self.dt_s = 1.0 / physics_rate_hz
        self.model, self.info = fixed_base_model(urdf_path, self.dt_s)
        self.data = mujoco.MjData(self.model)
        self.links_m = link_lengths_m(urdf_path)
        n = len(self.info.joint_names)
        self.actuator = JointActuator(JointActuatorCfg(
            kp_nm_per_rad, kd_nm_s_per_rad, tuple(self.info.effort_limit_nm)), 1, n, xp=np,
            dtype=np.float64)
        self.driver = JointDriver(self.actuator, damping_kd, command_timeout_s)
        self.reset()

    def reset(self, now_s: float | None = None) -> None:
        """At the rest pose, the PD holding it; no command yet."""
        mujoco.mj_resetData(self.model, self.data)
        self.data.qpos[self.info.qpos_adr] = DEFAULT_POSE_RAD
        self.driver.reset(np.asarray(DEFAULT_POSE_RAD), now_s)

    def joint_states(self) -> dict[str, np.ndarray]:
        """pos_rad, vel_rad_s, effort_nm in the URDF's joint order."""
        return {'pos_rad': self.data.qpos[self.info.qpos_adr].copy(),
                'vel_rad_s': self.data.qvel[self.info.qvel_adr].copy(),
                'effort_nm': self.actuator.torque_nm[0].copy()}

    def ground_truth(self) -> dict[str, np.ndarray]:
        """Tip position as pos_w [m] and its velocity as lin_vel_b [m/s] (the base frame is
        the world's: identity orientation), zero angular velocity; never faulted."""
        q, qd = self.data.qpos[self.info.qpos_adr], self.data.qvel[self.info.qvel_adr]
        tip, tip_vel = tip_pos_b(q, *self.links_m), tip_vel_b(q, qd, *self.links_m)
        return {'pos_w': np.array([tip[0], tip[1], PLANE_HEIGHT_M]),
                'quat_wxyz': np.array([1.0, 0.0, 0.0, 0.0]),
                'lin_vel_b': np.array([tip_vel[0], tip_vel[1], 0.0]), 'ang_vel_b': np.zeros(3)}
