"""Named free bodies of a batched simulation: a robot's floating base, objects it handles.

A free joint's qpos and qvel addresses are resolved once from the compiled model; the views
read and write the backend's live memory (no copy). MuJoCo conventions: qpos holds position
[m] and quaternion (w, x, y, z) body-to-world, qvel linear velocity [m/s; world frame] and
angular velocity [rad/s; body frame].
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import torch

from sim2real import terms


@dataclass(frozen=True)
class FreeJoint:
    """Where one free joint lives in a compiled model."""

    name: str
    """Joint name."""
    body: str
    """Name of the body it frees."""
    qpos_adr: int
    """First of its 7 qpos entries (position, quaternion)."""
    qvel_adr: int
    """First of its 6 qvel entries (linear velocity, angular velocity)."""


def free_joints(model: mujoco.MjModel) -> dict[str, FreeJoint]:
    """Every free joint of model by joint name, in model order."""
    out = {}
    for j in range(model.njnt):
        if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            joint = model.joint(j)
            out[joint.name] = FreeJoint(joint.name, model.body(model.jnt_bodyid[j]).name,
                                        int(model.jnt_qposadr[j]), int(model.jnt_dofadr[j]))
    return out


def float32_copy(values: torch.Tensor) -> torch.Tensor:
    """A float32 copy of simulation state, never a view of it: on the float32 mjwarp backend
    .float() returns the live memory itself, so derived state (and a 'previous' value kept
    from it) would change with the next physics step, and writing to it would write qpos."""
    return values.to(torch.float32, copy=True)


class FreeBodyView:
    """Pose and velocity of one free body in every simulation, as (N, k) views."""

    def __init__(self, qpos: torch.Tensor, qvel: torch.Tensor, joint: FreeJoint):
        """qpos, qvel: the backend's (N, nq), (N, nv) state views."""
        self.joint = joint
        p, v = joint.qpos_adr, joint.qvel_adr
        self.pos_w = qpos[:, p:p + 3]
        """Position [m; world frame], (N, 3) view."""
        self.quat_w = qpos[:, p + 3:p + 7]
        """Orientation quaternion (w, x, y, z) body-to-world, (N, 4) view."""
        self.lin_vel_w = qvel[:, v:v + 3]
        """Linear velocity [m/s; world frame], (N, 3) view."""
        self.ang_vel_b = qvel[:, v + 3:v + 6]
        """Angular velocity [rad/s; body frame], (N, 3) view."""

    def state(self, rows=slice(None)) -> dict[str, torch.Tensor]:
        """float32 copies of the rows: pos_w [m], quat_w, rotmat_wb, lin_vel_w, lin_vel_b
        [m/s] (world, body frame), ang_vel_b [rad/s]."""
        quat_w = float32_copy(self.quat_w[rows])
        rotmat_wb = terms.quat_to_rotmat(quat_w)
        lin_vel_w = float32_copy(self.lin_vel_w[rows])
        return {'pos_w': float32_copy(self.pos_w[rows]), 'quat_w': quat_w,
                'rotmat_wb': rotmat_wb, 'lin_vel_w': lin_vel_w,
                'lin_vel_b': terms.rotate_world_to_body(rotmat_wb, lin_vel_w),
                'ang_vel_b': float32_copy(self.ang_vel_b[rows])}

    def write(self, env_ids: torch.Tensor, pos_w: torch.Tensor, quat_w: torch.Tensor,
              lin_vel_w: torch.Tensor, ang_vel_b: torch.Tensor) -> None:
        """Set the pose and velocity of the given simulations."""
        for view, value in ((self.pos_w, pos_w), (self.quat_w, quat_w),
                            (self.lin_vel_w, lin_vel_w), (self.ang_vel_b, ang_vel_b)):
            view[env_ids] = value.to(view.dtype)
