"""Leg kinematics on the robot with Pinocchio: foot positions, foot Jacobians, leg odometry.

The URDF is loaded with a fixed base, so Pinocchio's world frame IS the base frame: every
position, Jacobian and velocity here is expressed in the base frame (FLU, origin at the
base link origin). Joint vectors are in the caller's (policy) order, matched to Pinocchio's
joints by name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np
import pinocchio as pin

__all__ = ['LeggedKinematics']


class LeggedKinematics:
    """Foot kinematics of a legged robot from its URDF, in the base frame."""

    def __init__(self, urdf_path: str | Path, joint_names: Sequence[str],
                 foot_frames: Sequence[str]):
        """Load the URDF (fixed base); map joint_names (policy order) and foot frames by name."""
        self.model = pin.buildModelFromUrdf(str(urdf_path))
        self.data = self.model.createData()
        self.joint_names = list(joint_names)
        self.foot_frames = list(foot_frames)
        model_joints = {name for name in self.model.names[1:]}
        missing = [n for n in self.joint_names if n not in model_joints]
        extra = sorted(model_joints - set(self.joint_names))
        if missing or extra:
            raise ValueError(f'{urdf_path}: joint_names do not match the URDF: '
                             f'missing {missing}, not listed {extra}')
        for name in self.joint_names:
            if self.model.joints[self.model.getJointId(name)].nq != 1:
                raise ValueError(f'{urdf_path}: joint "{name}" is not a 1-DoF joint')
        self._idx_q = np.array([self.model.joints[self.model.getJointId(n)].idx_q
                                for n in self.joint_names])
        self._idx_v = np.array([self.model.joints[self.model.getJointId(n)].idx_v
                                for n in self.joint_names])
        bad = [f for f in self.foot_frames if not self.model.existFrame(f)]
        if bad:
            raise ValueError(f'{urdf_path}: no frames named {bad}')
        self._frame_ids = [self.model.getFrameId(f) for f in self.foot_frames]

    def _q_pin(self, q: np.ndarray) -> np.ndarray:
        """Pinocchio configuration from joint positions in policy order."""
        q_pin = pin.neutral(self.model)
        q_pin[self._idx_q] = np.asarray(q, dtype=np.float64)
        return q_pin

    def foot_positions_b(self, q: np.ndarray) -> np.ndarray:
        """Foot frame origins [m; base frame] for joint positions q [rad], (n_feet, 3)."""
        pin.framesForwardKinematics(self.model, self.data, self._q_pin(q))
        return np.array([self.data.oMf[f].translation for f in self._frame_ids])

    def foot_jacobians_b(self, q: np.ndarray) -> np.ndarray:
        """d(foot position)/dq [m/rad; base frame], (n_feet, 3, n_joints), policy joint order."""
        q_pin = self._q_pin(q)
        pin.computeJointJacobians(self.model, self.data, q_pin)
        pin.updateFramePlacements(self.model, self.data)
        return np.array([
            pin.getFrameJacobian(self.model, self.data, f,
                                 pin.LOCAL_WORLD_ALIGNED)[:3, self._idx_v]
            for f in self._frame_ids])

    def implied_base_velocities_b(self, q: np.ndarray, qd: np.ndarray,
                                  ang_vel_b: np.ndarray) -> np.ndarray:
        """The base velocity each foot implies if it stands still [m/s; base frame], (n, 3).

        A stance foot does not move in the world: 0 = v_b + omega_b x p_b + J(q) qd for its
        position p_b and Jacobian J in the base frame, so it implies
        v_b = -(J qd + omega_b x p_b). q [rad], qd [rad/s] in policy order, ang_vel_b
        [rad/s; base frame].
        """
        jac = self.foot_jacobians_b(q)
        pos = self.foot_positions_b(q)
        return -(jac @ np.asarray(qd, dtype=np.float64) + np.cross(ang_vel_b, pos))

    def base_velocity_from_legs(self, q: np.ndarray, qd: np.ndarray, ang_vel_b: np.ndarray,
                                stance_mask: np.ndarray) -> np.ndarray:
        """Leg odometry: the mean of the stance feet's implied base velocities [m/s; base
        frame], (3,); NaN (3,) when no foot is in stance. stance_mask (n_feet,) bool."""
        stance = np.asarray(stance_mask, dtype=bool)
        if not stance.any():
            return np.full(3, np.nan)
        return self.implied_base_velocities_b(q, qd, ang_vel_b)[stance].mean(axis=0)
