"""hand-reorient terms: pure functions of the env (observations, rewards, terminations, the
cube's start). The policy sees the cube only through the tracker (``tracking.py``); rewards
and the critic read the simulator's exact pose.
"""

from __future__ import annotations

import itertools

import mujoco
import numpy as np
import torch

from sim2real import terms


def _cube_symmetries() -> torch.Tensor:
    """The 24 rotations that map a cube onto itself, as quaternions (w, x, y, z), (24, 4)."""
    quats = []
    for perm in itertools.permutations(range(3)):
        for signs in itertools.product((1.0, -1.0), repeat=3):
            mat = np.zeros((3, 3))
            mat[range(3), perm] = signs
            if np.linalg.det(mat) > 0:
                quat = np.zeros(4)
                mujoco.mju_mat2Quat(quat, mat.reshape(-1))
                quats.append(quat)
    return torch.as_tensor(np.array(quats), dtype=torch.float64)


CUBE_SYMMETRIES = _cube_symmetries()
"""The cube's 24 rotational symmetries (w, x, y, z), (24, 4)."""


# -- observations (policy: the tracker's view) ----------------------------------------------
def tracked_cube_pos(env) -> torch.Tensor:
    """The tracked cube position relative to its rest position [m; hand root frame], (N, 3)."""
    return env.scene.tracked_cube_pos_rel_m()


def tracked_cube_rot6(env) -> torch.Tensor:
    """The tracked cube orientation as the first two columns of its rotation, (N, 6)."""
    return terms.rotmat_6d(env.scene.tracker.quat_wxyz)


def tracked_goal_rot6(env, command: str = 'goal') -> torch.Tensor:
    """The rotation from the goal to the tracked cube, q_cube q_goal^-1, as two rotation
    columns, (N, 6): the identity's (1, 0, 0, 0, 1, 0) at the goal."""
    return terms.relative_rot6(env.scene.tracker.quat_wxyz, env.command(command).quat_w)


# -- critic (exact) --------------------------------------------------------------------------
def goal_rot6(env, command: str = 'goal') -> torch.Tensor:
    """As tracked_goal_rot6 from the exact cube orientation, (N, 6) (critic)."""
    return terms.relative_rot6(env.scene.cube_quat_w, env.command(command).quat_w)


def goal_error(env, command: str = 'goal') -> torch.Tensor:
    """Angle from the exact cube orientation to its goal [rad], (N, 1) (critic)."""
    return terms.quat_angle_rad(env.scene.cube_quat_w, env.command(command).quat_w)[:, None]


# -- rewards ---------------------------------------------------------------------------------
def orientation_inverse(env, eps_rad: float, command: str = 'goal') -> torch.Tensor:
    """1 / (angle to the goal + eps) [1/rad], (N,): Isaac Lab's and DeXtreme's shaping."""
    return 1.0 / (env.command(command).error_rad + eps_rad)


def goal_reached(env, command: str = 'goal') -> torch.Tensor:
    """1 on the step a goal was reached, (N,)."""
    return env.command(command).reached.float()


def cube_distance(env) -> torch.Tensor:
    """Distance of the cube from its rest position on the palm [m], (N,)."""
    return torch.linalg.vector_norm(env.scene.cube_pos_rel_m(), dim=1)


# -- terminations ----------------------------------------------------------------------------
def goal_timeout(env, timeout_s: float, command: str = 'goal') -> torch.Tensor:
    """No goal reached for timeout_s, (N,) (DeXtreme's 8 s reset)."""
    return env.command(command).steps_since_goal * env.step_dt_s >= timeout_s - 1e-9


def max_successes(env, count: int, command: str = 'goal') -> torch.Tensor:
    """count goals reached this episode, (N,) (Isaac Lab: 50)."""
    return env.command(command).successes >= count


# -- events ----------------------------------------------------------------------------------
def relabel_cube(env, env_ids: torch.Tensor) -> None:
    """Reset event after the cube is placed: turn its body frame by one of its 24 symmetries,
    drawn uniformly. The geometry is unchanged; the orientation the tracker reports, which
    the goal is measured in, starts anywhere among the cube's 24 face-up poses."""
    p = env.scene.info.object_qpos_adr
    backend = env.scene.backend
    pick = torch.randint(0, len(CUBE_SYMMETRIES), (len(env_ids),), generator=env.rng)
    quat = backend.qpos[env_ids, p + 3:p + 7].double()
    quat = terms.quat_mul(quat, CUBE_SYMMETRIES[pick])
    backend.qpos[env_ids, p + 3:p + 7] = quat.to(backend.qpos.dtype)
