"""Terrain wiring of the quadruped scene: the MuJoCo heightfield, ground heights, spawn points.

``sim2real.sim.terrain`` stores heights with rows along x and the grid's corner at
``corner_w``; ``legged_spec`` takes rows along y, centred on the origin. ``hfield_args``
transposes, and ``floor_pos_w`` moves the floor geom so that world coordinates agree with
``Terrain.height_at``.
"""

from __future__ import annotations

import numpy as np
import torch

from sim2real.sim.state import Stateful
from sim2real.sim.terrain import height_at, Terrain, TerrainCurriculum


def hfield_args(terrain: Terrain) -> tuple[np.ndarray, float, float]:
    """(heights rows along y, size_x_m, size_y_m) for legged_spec(hfield=...)."""
    size_x, size_y = terrain.size_m
    return terrain.heights_m.T, size_x, size_y


def floor_pos_w(terrain: Terrain) -> list[float]:
    """Floor geom position that puts heights_m[0, 0] at corner_w, lowest height at its z."""
    size_x, size_y = terrain.size_m
    return [terrain.corner_w[0] + size_x / 2, terrain.corner_w[1] + size_y / 2,
            float(terrain.heights_m.min())]


class GroundModel(Stateful):
    """Ground height [m; world z] under world (x, y), and the per-env spawn origins.

    Without a terrain the ground is the plane z = 0 and every env spawns at the origin:
    each env is its own MuJoCo simulation, so robots never meet and need no grid.
    With one, spawn origins are the centres of the tiles the curriculum assigns.
    """

    CHILDREN = ('curriculum',)
    NOT_STATE = ('_heights',)   # the terrain's

    def __init__(self, terrain: Terrain | None, num_envs: int, max_init_level: int,
                 generator: torch.Generator):
        """Terrain (None: flat plane), batch size, highest start level, the env's generator."""
        self.terrain = terrain
        self.num_envs = num_envs
        self.curriculum = None
        if terrain is not None:
            self._heights = torch.as_tensor(terrain.heights_m)
            origins = torch.as_tensor(terrain.origins_w)
            self.curriculum = TerrainCurriculum(origins, num_envs, max_init_level, generator)

    def height(self, x_w: torch.Tensor, y_w: torch.Tensor) -> torch.Tensor:
        """Ground height [m] at world positions (any shape, float32)."""
        if self.terrain is None:
            return torch.zeros_like(x_w)
        return height_at(self._heights, x_w.float(), y_w.float(), self.terrain.corner_w,
                         self.terrain.horizontal_scale_m)

    def origins(self, env_ids: torch.Tensor) -> torch.Tensor:
        """Spawn origins of env_ids on the ground [m; world frame], (len(env_ids), 3)."""
        if self.curriculum is None:
            return torch.zeros(len(env_ids), 3)
        return self.curriculum.origins(env_ids)

    def update_curriculum(self, env_ids: torch.Tensor, distance_m: torch.Tensor,
                          commanded_distance_m: torch.Tensor) -> None:
        """Move env_ids up or down a level by distance walked [m] (legged_gym's rule)."""
        if self.curriculum is not None and len(env_ids) > 0:
            self.curriculum.update(env_ids, distance_m, commanded_distance_m,
                                   self.terrain.tile_size_m[0])

    def mean_level(self) -> float:
        """Average terrain level of all envs (0 without a terrain)."""
        return 0.0 if self.curriculum is None else self.curriculum.mean_level()
