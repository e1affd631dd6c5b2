"""The reorientation goal: a target orientation of the cube, replaced each time it is reached.

Goals are uniform on SO(3) and at least ``min_goal_distance_rad`` (90 degrees) from the
cube's orientation when drawn, so every goal asks for a real turn: MuJoCo Playground's LEAP
paper states goals at least 90 degrees away (its code instead drifts the goal; hand.md 2.1).
A goal is reached when the cube's orientation is within ``success_tolerance_rad`` of it (0.1
rad in simulation: Playground, Isaac Lab, DeXtreme; hand.md 4.2); the next goal is drawn at
once. The first goal of an episode is drawn by the reset event ``draw_first_goal``, after the
event that places the cube, so that it too is measured from the cube's start.
"""

from __future__ import annotations

import math

import torch

from sim2real import terms
from sim2real.sim.state import Stateful


class CubeGoal(Stateful):
    """Goal orientations, the error to them, and the goals reached this episode."""

    STATE = ('quat_w', 'error_rad', 'reached', 'successes', 'steps_since_goal')
    NOT_STATE = ('env',)

    def __init__(self, env, success_tolerance_rad: float = 0.1,
                 min_goal_distance_rad: float = math.pi / 2, candidates: int = 16):
        """Tolerance and least distance of a new goal [rad]; uniform draws tried per goal."""
        self.env = env
        self.success_tolerance_rad = success_tolerance_rad
        self.min_goal_distance_rad = min_goal_distance_rad
        self.candidates = candidates
        n = env.num_envs
        self.quat_w = torch.zeros(n, 4)
        """Goal orientation (w, x, y, z) [world], (N, 4)."""
        self.quat_w[:, 0] = 1.0
        self.error_rad = torch.zeros(n)
        """Angle between the cube and the goal it had at the last update [rad], (N,)."""
        self.reached = torch.zeros(n, dtype=torch.bool)
        """Whether the last update reached the goal (a new one was drawn), (N,)."""
        self.successes = torch.zeros(n, dtype=torch.long)
        """Goals reached this episode, (N,)."""
        self.steps_since_goal = torch.zeros(n, dtype=torch.long)
        """Control steps since the episode started or the last goal was reached, (N,)."""

    def resample(self, env_ids: torch.Tensor) -> None:
        """A new episode: no goals reached yet (draw_first_goal draws its goal)."""
        self.successes[env_ids] = 0
        self.steps_since_goal[env_ids] = 0
        self.reached[env_ids] = False
        self.error_rad[env_ids] = 0.0

    def draw(self, env_ids: torch.Tensor, cube_quat_w: torch.Tensor) -> None:
        """New goals for env_ids: uniform on SO(3), the first of `candidates` draws at least
        min_goal_distance_rad from cube_quat_w (len(env_ids), 4), else the farthest."""
        n, k = len(env_ids), self.candidates
        quats = torch.randn(n, k, 4, generator=self.env.rng)
        quats = quats / torch.linalg.vector_norm(quats, dim=-1, keepdim=True)
        angle = terms.quat_angle_rad(quats, cube_quat_w.float()[:, None, :].expand(n, k, 4))
        far = angle >= self.min_goal_distance_rad
        pick = torch.where(far.any(dim=1), far.float().argmax(dim=1), angle.argmax(dim=1))
        self.quat_w[env_ids] = quats[torch.arange(n), pick]

    def update(self, dt_s: float) -> None:
        """Measure the error to the goal; where it is within tolerance, count the success and
        draw the next goal."""
        cube = self.env.scene.cube_quat_w
        self.error_rad = terms.quat_angle_rad(cube, self.quat_w)
        self.reached = self.error_rad < self.success_tolerance_rad
        self.successes += self.reached.long()
        self.steps_since_goal = torch.where(self.reached, 0, self.steps_since_goal + 1)
        ids = self.reached.nonzero().flatten()
        if len(ids) > 0:
            self.draw(ids, cube[ids])


def draw_first_goal(env, env_ids: torch.Tensor, command: str = 'goal') -> None:
    """Reset event (after the cube is placed): the episode's first goal, measured from the
    cube's start orientation."""
    info = env.scene.info
    p = info.object_qpos_adr
    quat = env.scene.backend.qpos[env_ids, p + 3:p + 7].float()
    env.command(command).draw(env_ids, quat)
