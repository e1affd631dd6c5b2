"""Leg odometry: base velocity from joint states, gyro and attitude, with a filtered speed."""

from __future__ import annotations

import numpy as np

from sim2real.deploy.runtime import filters
from sim2real.deploy.runtime.legged_kinematics import LeggedKinematics


class LegOdometry:
    """Base velocity from the legs (Pinocchio) with a stance guess and a filtered speed.

    Stance: the feet whose gravity-aligned height below the base is within STANCE_MARGIN_M
    of the lowest foot (no contact sensors needed). The xy speed in the gravity-aligned
    frame is low-pass filtered (EMA) so one slipping tick does not trip the latch.
    """

    STANCE_MARGIN_M = 0.02
    EMA_ALPHA = 0.3
    MAX_SPEED_M_S = 10.0
    """Cap on one tick's speed entering the filter [m/s] (twice a racing quadruped's top
    speed): a gyro or joint spike of 1e300 still trips the latch, and the filter is back
    below a 2.5 m/s threshold within 4 ticks of good data instead of never."""

    def __init__(self, urdf_path, joint_names, foot_names):
        """Kinematics of urdf_path in contract joint order."""
        self.kinematics = LeggedKinematics(urdf_path, joint_names, foot_names)
        self.reset()

    def reset(self) -> None:
        """Forget the estimate."""
        self.lin_vel_b = np.zeros(3)
        """Latest estimate [m/s; base frame] (NaN when it could not be formed)."""
        self.speed_xy_m_s = 0.0
        """Filtered horizontal speed [m/s]."""

    def update(self, q, qd, ang_vel_b, rotmat_wb) -> None:
        """One estimate from joint states [rad, rad/s], gyro [rad/s] and orientation; inputs
        or an estimate that are not finite reset the filter instead of poisoning it."""
        with np.errstate(all='ignore'):
            if not filters.all_finite(q, qd, ang_vel_b, rotmat_wb):
                self.reset()
                return
            feet_b = self.kinematics.foot_positions_b(q)
            height = (feet_b @ rotmat_wb.T)[:, 2]
            stance = height <= height.min() + self.STANCE_MARGIN_M
            lin_vel_b = self.kinematics.base_velocity_from_legs(q, qd, ang_vel_b, stance)
            speed = float(np.linalg.norm((rotmat_wb @ lin_vel_b)[:2]))
        if not (filters.all_finite(lin_vel_b) and np.isfinite(speed)):
            self.reset()
            return
        self.lin_vel_b = lin_vel_b
        speed = min(speed, self.MAX_SPEED_M_S)
        self.speed_xy_m_s += self.EMA_ALPHA * (speed - self.speed_xy_m_s)
