"""Leg odometry: base velocity from joint states, gyro and attitude, with a filtered speed.

Each foot implies a base velocity if it stands still (legged_kinematics). Which feet stand
is a weight per foot that does not depend on foot clearance (a policy's swing feet may lift
5 mm): stance feet all imply the same velocity, close to the previous estimate, while a
swing foot moves forward at up to twice the body's speed and implies something else. The
weight of a foot is exp(-|v_i - v_prev|^2 / (2 VELOCITY_SPREAD^2) - (h_i - h_min) / HEIGHT
SPREAD): agreement with the last estimate, and a mild preference for the lowest feet, which
breaks the tie at a standstill and when the estimate was reset. Where the driver measures
foot contact (a Go2's foot force sensors), feet out of contact get no weight; a foot in
contact that slips still implies a stray velocity and is weighed down as before. The
estimate is the weighted mean of the implied velocities. It updates once per distinct
joint-state sample.
"""

from __future__ import annotations

import numpy as np

from sim2real.deploy.runtime import filters
from sim2real.deploy.runtime.legged_kinematics import LeggedKinematics

VELOCITY_SPREAD_M_S = 0.2
"""How far a stance foot's implied velocity strays from the last estimate in one joint-state
sample [m/s] (kinematic noise, touchdown, one tick of acceleration)."""
HEIGHT_SPREAD_M = 0.01
"""Height above the lowest foot over which a foot's stance weight falls by e [m]."""


def stance_weights(implied_b: np.ndarray, height_m: np.ndarray, prior_b: np.ndarray,
                   contact: np.ndarray | None = None) -> np.ndarray:
    """Stance weight per foot, summing to 1 (n,): agreement of its implied velocity with
    prior_b [m/s] and closeness to the lowest foot, among the feet in measured contact where
    contact (bool per foot) is given and any foot is in it."""
    log_w = (-np.sum((implied_b - prior_b) ** 2, axis=1) / (2.0 * VELOCITY_SPREAD_M_S ** 2)
             - (height_m - height_m.min()) / HEIGHT_SPREAD_M)
    if contact is not None and np.any(contact):
        log_w = np.where(np.asarray(contact, dtype=bool), log_w, -np.inf)
    weights = np.exp(log_w - log_w.max())
    return weights / weights.sum()


class LegOdometry:
    """Base velocity from the legs (Pinocchio) with stance weights and a filtered speed.

    The xy speed in the gravity-aligned frame is low-pass filtered (EMA, half per sample)
    so one slipping sample does not trip the latch: walking at 1 m/s, one sample reading
    3 m/s gives 2 m/s, below a 2.5 m/s threshold; a dragged robot at 3 m/s trips it within
    3-4 samples of the estimate reaching that speed.
    """

    EMA_ALPHA = 0.5
    MAX_SPEED_M_S = 10.0
    """Cap on one sample's speed entering the filter [m/s] (twice a racing quadruped's top
    speed): a gyro or joint spike of 1e300 still trips the latch, and the filter is back
    below a 2.5 m/s threshold within 4 samples of good data instead of never."""

    def __init__(self, urdf_path, joint_names, foot_names):
        """Kinematics of urdf_path in contract joint order."""
        self.kinematics = LeggedKinematics(urdf_path, joint_names, foot_names)
        self.reset()

    def reset(self) -> None:
        """Forget the estimate."""
        self.lin_vel_b = np.zeros(3)
        """Latest estimate [m/s; base frame]."""
        self.stance = np.full(len(self.kinematics.foot_frames), np.nan)
        """Stance weight per foot of the latest estimate (NaN before one)."""
        self.speed_xy_m_s = 0.0
        """Filtered horizontal speed [m/s]."""

    def update(self, q, qd, ang_vel_b, rotmat_wb, contact=None) -> None:
        """One estimate from joint states [rad, rad/s], gyro [rad/s], orientation and, where
        measured, foot contacts (bool per foot); inputs or an estimate that are not finite
        reset the filter instead of poisoning it."""
        with np.errstate(all='ignore'):
            if not filters.all_finite(q, qd, ang_vel_b, rotmat_wb):
                self.reset()
                return
            implied_b = self.kinematics.implied_base_velocities_b(q, qd, ang_vel_b)
            height = (self.kinematics.foot_positions_b(q) @ rotmat_wb.T)[:, 2]
            stance = stance_weights(implied_b, height, self.lin_vel_b, contact)
            lin_vel_b = stance @ implied_b
            speed = float(np.linalg.norm((rotmat_wb @ lin_vel_b)[:2]))
        if not (filters.all_finite(lin_vel_b, stance) and np.isfinite(speed)):
            self.reset()
            return
        self.lin_vel_b, self.stance = lin_vel_b, stance
        speed = min(speed, self.MAX_SPEED_M_S)
        self.speed_xy_m_s += self.EMA_ALPHA * (speed - self.speed_xy_m_s)
