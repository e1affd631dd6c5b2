"""Heightfield terrain: a grid of tiles of rising difficulty, a height lookup, a curriculum.

The layout follows legged_gym (Rudin et al., "Learning to Walk in Minutes Using Massively
Parallel Deep RL", CoRL 2021): tile rows are difficulty levels along x, tile columns are
terrain types along y, a flat border surrounds the grid, and robots that walk well are
promoted to harder rows. Written here in numpy; the lookup is array-API (torch or numpy).

Frames and units: ``heights_m[i, j]`` is the ground height [m] at world
``x = corner_w[0] + i * h``, ``y = corner_w[1] + j * h`` (h: horizontal scale [m]); tile
(level l, column c) starts at world (l * Lx, c * Ly). Difficulty d = l / (levels - 1) in
[0, 1] maps to, per type:

- flat: zero height.
- slope_up / slope_down: a pyramid rising (falling) from the tile edges at an angle of
  ``d * slope_max_rad`` [rad] (0.4 rad, gradient tan 0.4 = 0.42, at d = 1) to a flat
  central platform of side ``platform_m``.
- rough: the upward pyramid slope plus uniform noise of amplitude 0.02 + 0.06 d [m] drawn on
  a ``rough_cell_m`` grid and interpolated bilinearly.
- stairs_up / stairs_down: pyramid stairs of step width ``step_width_m`` (0.31 m) and step
  height 0.05 + 0.18 d [m] (rounded to the vertical scale) rising (falling) to the platform.
- obstacles: ``num_obstacles`` random boxes of side 1-2 m and height +-(0.05 + 0.2 d) [m]
  (or half that), with the central platform kept flat.

Heights are rounded to multiples of ``vertical_scale_m`` when it is set.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from array_api_compat import array_namespace

from sim2real.sim.state import Stateful

TERRAIN_TYPES = ('flat', 'slope_up', 'slope_down', 'rough', 'stairs_up', 'stairs_down',
                 'obstacles')


def _default_proportions() -> dict[str, float]:
    return {'slope_up': 0.1, 'slope_down': 0.1, 'rough': 0.2, 'stairs_up': 0.25,
            'stairs_down': 0.25, 'obstacles': 0.1}


@dataclass
class TerrainCfg:
    """Grid of terrain tiles and the difficulty mapping of each terrain type."""

    tile_size_m: tuple[float, float] = (8.0, 8.0)
    """Tile length along x and width along y [m]; multiples of horizontal_scale_m."""
    horizontal_scale_m: float = 0.1
    """Spacing of the height samples [m]."""
    vertical_scale_m: float | None = 0.005
    """Height quantum [m]; None keeps float heights."""
    num_levels: int = 10
    """Tile rows (along x), difficulty 0 to 1."""
    num_cols: int = 20
    """Tile columns (along y), split among terrain types by proportions."""
    proportions: dict[str, float] = field(default_factory=_default_proportions)
    """Share of columns per terrain type (keys from TERRAIN_TYPES; normalized)."""
    border_m: float = 5.0
    """Width of the flat border around the grid [m]."""
    platform_m: float = 2.0
    """Side of the flat central platform of pyramid and obstacle tiles [m]."""
    slope_max_rad: float = 0.4
    """Slope angle at difficulty 1 [rad]."""
    step_height_m: tuple[float, float] = (0.05, 0.23)
    """Stair step height at difficulty 0 and 1 [m]."""
    step_width_m: float = 0.31
    """Stair tread depth [m]."""
    rough_amplitude_m: tuple[float, float] = (0.02, 0.08)
    """Half-range of the rough noise at difficulty 0 and 1 [m]."""
    rough_cell_m: float = 0.2
    """Spacing of the rough noise samples [m]."""
    obstacle_height_m: tuple[float, float] = (0.05, 0.25)
    """Obstacle height at difficulty 0 and 1 [m]."""
    obstacle_size_m: tuple[float, float] = (1.0, 2.0)
    """Range of obstacle sides [m]."""
    num_obstacles: int = 20
    """Obstacles per obstacle tile."""


def flat(size_m: float = 8.0) -> TerrainCfg:
    """One flat size_m x size_m tile with no border: a plane as a heightfield."""
    return TerrainCfg(tile_size_m=(size_m, size_m), num_levels=1, num_cols=1,
                      proportions={'flat': 1.0}, border_m=0.0)


@dataclass
class Terrain:
    """A generated heightfield and its spawn points."""

    heights_m: np.ndarray
    """Ground heights [m], (rows along x, cols along y), float32."""
    horizontal_scale_m: float
    """Spacing of the height samples [m]."""
    corner_w: tuple[float, float]
    """World (x, y) of heights_m[0, 0] [m]."""
    tile_size_m: tuple[float, float]
    """Tile length along x and width along y [m]."""
    origins_w: np.ndarray
    """Tile centres on the ground [m; world frame], (levels, cols, 3), float32."""
    column_types: tuple[str, ...]
    """Terrain type of each tile column."""
    difficulties: np.ndarray
    """Difficulty of each level, (levels,)."""

    @property
    def size_m(self) -> tuple[float, float]:
        """Extent of the heightfield along x and y [m]."""
        rows, cols = self.heights_m.shape
        return ((rows - 1) * self.horizontal_scale_m, (cols - 1) * self.horizontal_scale_m)

    def height_at(self, x_w, y_w):
        """Ground height [m] at world positions (any shape), border height outside."""
        return height_at(self.heights_m, x_w, y_w, self.corner_w, self.horizontal_scale_m)


def _bilinear(grid, u, v):
    """Bilinear interpolation of grid (R, C) at fractional indices u, v, clamped to the grid."""
    xp = array_namespace(grid, u, v)
    rows, cols = grid.shape
    u = xp.clip(u, 0.0, rows - 1.0)
    v = xp.clip(v, 0.0, cols - 1.0)
    i0 = xp.clip(xp.astype(xp.floor(u), xp.int64), 0, max(rows - 2, 0))
    j0 = xp.clip(xp.astype(xp.floor(v), xp.int64), 0, max(cols - 2, 0))
    i1 = xp.clip(i0 + 1, 0, rows - 1)
    j1 = xp.clip(j0 + 1, 0, cols - 1)
    fu = u - xp.astype(i0, u.dtype)
    fv = v - xp.astype(j0, v.dtype)
    low = grid[i0, j0] * (1.0 - fu) + grid[i1, j0] * fu
    high = grid[i0, j1] * (1.0 - fu) + grid[i1, j1] * fu
    return low * (1.0 - fv) + high * fv


def height_at(heights_m, x_w, y_w, corner_w: tuple[float, float], horizontal_scale_m: float):
    """Ground height [m] at world (x_w, y_w) [m] (same shape), bilinear between samples.

    heights_m (rows, cols) as torch or numpy; positions outside the grid read the height of
    its edge, i.e. the flat border.
    """
    u = (x_w - corner_w[0]) / horizontal_scale_m
    v = (y_w - corner_w[1]) / horizontal_scale_m
    return _bilinear(heights_m, u, v)


def column_types(cfg: TerrainCfg) -> tuple[str, ...]:
    """Terrain type of each column: column c takes the type covering (c + 0.5) / num_cols."""
    unknown = set(cfg.proportions) - set(TERRAIN_TYPES)
    if unknown:
        raise ValueError(f'unknown terrain types {sorted(unknown)}, expected {TERRAIN_TYPES}')
    names = list(cfg.proportions)
    shares = np.cumsum([cfg.proportions[n] for n in names], dtype=np.float64)
    shares /= shares[-1]
    choice = (np.arange(cfg.num_cols) + 0.5) / cfg.num_cols
    return tuple(names[int(np.searchsorted(shares, c, side='right'))] for c in choice)


def _lerp(bounds: tuple[float, float], difficulty: float) -> float:
    return bounds[0] + (bounds[1] - bounds[0]) * difficulty


def _edge_distance(x, y, cfg: TerrainCfg):
    """Distance to the nearest tile edge, capped at the central platform's edge [m]."""
    lx, ly = cfg.tile_size_m
    top = (min(lx, ly) - cfg.platform_m) / 2
    return np.minimum(np.minimum(np.minimum(x, lx - x), np.minimum(y, ly - y)), top)


def _pyramid_slope(x, y, difficulty, rng, cfg):
    return math.tan(difficulty * cfg.slope_max_rad) * _edge_distance(x, y, cfg)


def _rough(x, y, difficulty, rng, cfg):
    amplitude = _lerp(cfg.rough_amplitude_m, difficulty)
    cell = cfg.rough_cell_m
    shape = (math.ceil(cfg.tile_size_m[0] / cell) + 1, math.ceil(cfg.tile_size_m[1] / cell) + 1)
    noise = rng.uniform(-amplitude, amplitude, shape)
    return _pyramid_slope(x, y, difficulty, rng, cfg) + _bilinear(noise, x / cell, y / cell)


def _step_height(difficulty, cfg):
    height = _lerp(cfg.step_height_m, difficulty)
    if cfg.vertical_scale_m:
        height = round(height / cfg.vertical_scale_m) * cfg.vertical_scale_m
    return height


def _pyramid_stairs(x, y, difficulty, rng, cfg):
    steps = np.floor(_edge_distance(x, y, cfg) / cfg.step_width_m + 1e-9)
    return _step_height(difficulty, cfg) * steps


def _obstacles(x, y, difficulty, rng, cfg):
    heights = np.zeros_like(x)
    top = _lerp(cfg.obstacle_height_m, difficulty)
    lx, ly = cfg.tile_size_m
    for _ in range(cfg.num_obstacles):
        sx, sy = rng.uniform(*cfg.obstacle_size_m, 2)
        x0, y0 = rng.uniform(0.0, lx - sx), rng.uniform(0.0, ly - sy)
        inside = (x >= x0) & (x < x0 + sx) & (y >= y0) & (y < y0 + sy)
        heights[inside] = rng.choice([-top, -top / 2, top / 2, top])
    half = cfg.platform_m / 2
    heights[(np.abs(x - lx / 2) < half) & (np.abs(y - ly / 2) < half)] = 0.0
    return heights


_TILES = {
    'flat': lambda x, y, d, rng, cfg: np.zeros_like(x),
    'slope_up': _pyramid_slope,
    'slope_down': lambda x, y, d, rng, cfg: -_pyramid_slope(x, y, d, rng, cfg),
    'rough': _rough,
    'stairs_up': _pyramid_stairs,
    'stairs_down': lambda x, y, d, rng, cfg: -_pyramid_stairs(x, y, d, rng, cfg),
    'obstacles': _obstacles,
}


def _pixels(length_m: float, scale_m: float) -> int:
    """length_m in samples; refuses a length that is not a whole number of samples."""
    count = round(length_m / scale_m)
    if abs(count * scale_m - length_m) > 1e-6 * max(1.0, length_m):
        raise ValueError(f'{length_m} m is not a multiple of the {scale_m} m horizontal scale')
    return count


def generate(cfg: TerrainCfg, seed: int) -> Terrain:
    """Heightfield of num_levels x num_cols tiles plus border; same seed, same terrain."""
    rng = np.random.default_rng(seed)
    h = cfg.horizontal_scale_m
    px, py = (_pixels(s, h) for s in cfg.tile_size_m)
    border = _pixels(cfg.border_m, h)
    heights = np.zeros((2 * border + cfg.num_levels * px + 1,
                        2 * border + cfg.num_cols * py + 1))
    x, y = np.meshgrid(np.arange(px) * h, np.arange(py) * h, indexing='ij')
    types = column_types(cfg)
    difficulties = np.arange(cfg.num_levels) / max(cfg.num_levels - 1, 1)
    for col, name in enumerate(types):
        for level, difficulty in enumerate(difficulties):
            i, j = border + level * px, border + col * py
            heights[i:i + px, j:j + py] = _TILES[name](x, y, float(difficulty), rng, cfg)
    if cfg.vertical_scale_m:
        heights = np.round(heights / cfg.vertical_scale_m) * cfg.vertical_scale_m
    heights = heights.astype(np.float32)
    corner = (-border * h, -border * h)
    centre_x = (np.arange(cfg.num_levels)[:, None] + 0.5) * cfg.tile_size_m[0]
    centre_y = (np.arange(cfg.num_cols)[None, :] + 0.5) * cfg.tile_size_m[1]
    centre_x, centre_y = np.broadcast_arrays(centre_x, centre_y)
    ground = height_at(heights, centre_x, centre_y, corner, h)
    origins = np.stack([centre_x, centre_y, ground], axis=-1).astype(np.float32)
    return Terrain(heights, h, corner, tuple(cfg.tile_size_m), origins, types, difficulties)


def hfield_layout(terrain: Terrain, base_m: float = 1.0) -> dict:
    """MuJoCo hfield arguments (nrow, ncol, size, userdata) and geom 'pos' for terrain.

    MuJoCo's hfield rows run along y and its columns along x, so the data is heights_m
    transposed, normalized to [0, 1] over the elevation range; the geom sits at the centre
    of the grid at the lowest height, and base_m [m] of solid extends below it.
    """
    heights = terrain.heights_m.astype(np.float64)
    low, high = float(heights.min()), float(heights.max())
    elevation = high - low
    data = (heights - low) / elevation if elevation > 0 else np.zeros_like(heights)
    half_x, half_y = (s / 2 for s in terrain.size_m)
    return {
        'nrow': heights.shape[1], 'ncol': heights.shape[0],
        'size': [half_x, half_y, max(elevation, 1e-3), base_m],
        'userdata': data.T.ravel().tolist(),
        'pos': [terrain.corner_w[0] + half_x, terrain.corner_w[1] + half_y, low],
    }


def _randint(generator, high: int, count: int):
    """count integers in [0, high) from a numpy Generator or a torch.Generator."""
    if isinstance(generator, np.random.Generator):
        return generator.integers(0, high, size=count)
    import torch   # the training side passes its torch.Generator; numpy users never get here
    return torch.randint(0, high, (count,), generator=generator, device=generator.device)


class TerrainCurriculum(Stateful):
    """Per-env terrain level (difficulty row) and column, moved by how far each env walked.

    legged_gym's game-inspired curriculum: an env that walked more than half a tile in its
    episode moves one level up, one that walked less than half its commanded distance moves
    one level down (not below 0), and one promoted past the top level restarts on a random
    level, so the hardest tiles never hoard the population.
    """

    STATE = ('level', '_generator')
    NOT_STATE = ('origins_w', 'col')   # fixed by the terrain and the batch size

    def __init__(self, origins_w, num_envs: int, max_init_level: int, generator):
        """Spawn points (levels, cols, 3) (torch or numpy), batch size, highest start level."""
        self.xp = xp = array_namespace(origins_w)
        self.origins_w = origins_w
        self.num_levels, self.num_cols = origins_w.shape[:2]
        self._generator = generator
        device = getattr(origins_w, 'device', None)
        kwargs = {} if device is None or isinstance(origins_w, np.ndarray) else {'device': device}
        start = _randint(generator, min(max_init_level, self.num_levels - 1) + 1, num_envs)
        self.level = xp.asarray(start, dtype=xp.int64, **kwargs)
        """Level of each env, (N,)."""
        # columns split evenly among envs, as in legged_gym
        self.col = (xp.arange(num_envs, dtype=xp.int64, **kwargs) * self.num_cols) // num_envs
        """Column (terrain type) of each env, (N,)."""

    def update(self, env_ids, distance_walked_m, commanded_distance_m, tile_size_m: float):
        """Promote or demote env_ids after an episode; distances [m] are (len(env_ids),)."""
        xp = self.xp
        move_up = distance_walked_m > tile_size_m / 2
        move_down = (distance_walked_m < 0.5 * commanded_distance_m) & ~move_up
        step = xp.astype(move_up, xp.int64) - xp.astype(move_down, xp.int64)
        level = xp.clip(self.level[env_ids] + step, 0, None)
        restart = xp.asarray(_randint(self._generator, self.num_levels, level.shape[0]),
                             dtype=xp.int64)
        self.level[env_ids] = xp.where(level >= self.num_levels, restart, level)

    def origins(self, env_ids):
        """Spawn points of env_ids on their tiles [m; world frame], (len(env_ids), 3)."""
        return self.origins_w[self.level[env_ids], self.col[env_ids]]

    def mean_level(self) -> float:
        """Average level over all envs (for logging)."""
        return float(self.xp.mean(self.xp.astype(self.level, self.xp.float64)))
