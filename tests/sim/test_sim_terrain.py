"""Heightfield terrain: tile shapes by difficulty, bilinear lookup, spawn points, curriculum."""

import math

import mujoco
import numpy as np
import pytest
import torch

from sim2real.sim.terrain import (column_types, flat, generate, height_at, hfield_layout,
                                  TerrainCfg, TerrainCurriculum)


def cfg_of(proportions, num_levels=3, num_cols=1, **kwargs):
    """A small grid of 8 m tiles with a 1 m border of the given types."""
    return TerrainCfg(num_levels=num_levels, num_cols=num_cols, proportions=proportions,
                      border_m=1.0, **kwargs)


def centre_line(terrain, level, col):
    """Heights along x through the centre of tile (level, col), from its edge to its centre."""
    h = terrain.horizontal_scale_m
    border = round(-terrain.corner_w[0] / h)
    i0, px = border + level * 80, 80
    j = round((terrain.origins_w[level, col, 1] - terrain.corner_w[1]) / h)
    return terrain.heights_m[i0:i0 + px // 2 + 1, j].astype(np.float64)


def test_flat_terrain_is_zero():
    """flat(8) and a 3 x 2 all-flat grid are zero everywhere, origins at the tile centres."""
    terrain = generate(flat(8.0), seed=0)
    assert terrain.heights_m.shape == (81, 81) and terrain.heights_m.dtype == np.float32
    assert not terrain.heights_m.any()
    np.testing.assert_array_equal(terrain.origins_w, [[[4.0, 4.0, 0.0]]])
    grid = generate(cfg_of({'flat': 1.0}, num_cols=2), seed=3)
    assert not grid.heights_m.any()
    assert grid.size_m == pytest.approx((26.0, 18.0))   # 3 x 8 + 2 border, 2 x 8 + 2


def test_slope_tiles_reach_documented_angle():
    """Finite differences of float heights: max gradient tan(0.4) at d=1, tan(0.2) at d=0.5."""
    terrain = generate(cfg_of({'slope_up': 1.0}, vertical_scale_m=None), seed=0)
    h = terrain.horizontal_scale_m
    assert np.diff(centre_line(terrain, 0, 0)).max() == 0.0
    for level, angle in ((1, 0.2), (2, 0.4)):
        grad = np.abs(np.diff(terrain.heights_m, axis=0)[80 * level + 10:80 * level + 90]) / h
        assert grad.max() == pytest.approx(math.tan(angle), rel=1e-5)
    # platform of side 2 m: the slope rises over (8 - 2) / 2 = 3 m, to 3 tan 0.4 = 1.268 m
    assert terrain.origins_w[2, 0, 2] == pytest.approx(3 * math.tan(0.4), rel=1e-6)


def test_slope_down_and_quantized_heights():
    """slope_down at d=1 sinks to -round(3 tan 0.4 / 0.005) * 0.005 = -1.27 m, in 5 mm steps."""
    terrain = generate(cfg_of({'slope_down': 1.0}), seed=0)
    assert terrain.origins_w[2, 0, 2] == pytest.approx(-1.27, abs=1e-6)
    quanta = terrain.heights_m.astype(np.float64) / 0.005
    np.testing.assert_allclose(quanta, np.round(quanta), atol=1e-3)


def test_stairs_have_documented_step_height_and_width():
    """Stairs up: steps 0.05 m at d=0 and 0.23 m at d=1, treads 0.31 m, 9 steps to the top."""
    terrain = generate(cfg_of({'stairs_up': 1.0}, num_levels=2), seed=0)
    for level, step in ((0, 0.05), (1, 0.23)):
        line = centre_line(terrain, level, 0)
        jumps = np.flatnonzero(np.diff(line)) + 1
        np.testing.assert_allclose(np.diff(line)[jumps - 1], step, atol=1e-6)
        assert len(jumps) == 9                       # floor(3 m / 0.31 m)
        x_jump = jumps * 0.1                         # first sample at or past k * 0.31 m
        k = np.arange(1, 10)
        assert np.all((x_jump >= k * 0.31 - 1e-9) & (x_jump < k * 0.31 + 0.1))
    down = generate(cfg_of({'stairs_down': 1.0}, num_levels=2), seed=0)
    assert down.origins_w[1, 0, 2] == pytest.approx(-9 * 0.23, abs=1e-6)


def test_rough_noise_amplitude():
    """Rough tiles differ from their pyramid slope by at most 0.02 m at d=0 and 0.08 m at d=1."""
    cfg = cfg_of({'rough': 1.0}, vertical_scale_m=None)
    rough = generate(cfg, seed=0).heights_m
    slope = generate(cfg_of({'slope_up': 1.0}, vertical_scale_m=None), seed=0).heights_m
    noise = (rough - slope)[10:]
    for level, amplitude in ((0, 0.02), (2, 0.08)):
        tile = np.abs(noise[80 * level:80 * (level + 1)])
        assert amplitude * 0.8 < tile.max() <= amplitude + 1e-6


def test_height_at_by_hand():
    """Grid [[0, 1], [2, 3]] at 0.5 m from (-1, 2): corners, edge midpoints, centre, outside."""
    heights = np.array([[0.0, 1.0], [2.0, 3.0]])
    x = np.array([[-1.0, -0.5, -0.75], [-0.75, -1.0, -5.0], [10.0, -0.75, -0.5]])
    y = np.array([[2.0, 2.0, 2.25], [2.0, 2.25, 2.0], [10.0, 2.125, 2.5]])
    # rows: x along heights rows, y along columns; (-0.75, 2.125): 1.0 + 0.25 = 1.25
    expected = [[0.0, 2.0, 1.5], [1.0, 0.5, 0.0], [3.0, 1.25, 3.0]]
    for xp in (np, torch):
        out = height_at(xp.asarray(heights), xp.asarray(x), xp.asarray(y), (-1.0, 2.0), 0.5)
        np.testing.assert_allclose(np.asarray(out), expected, rtol=0, atol=1e-12)


def test_height_at_grid_points_and_torch_parity():
    """At grid points the lookup returns heights_m exactly; torch float32 matches numpy."""
    terrain = generate(cfg_of({'rough': 0.5, 'stairs_up': 0.5}, num_cols=2), seed=1)
    rng = np.random.default_rng(0)
    i = rng.integers(0, terrain.heights_m.shape[0], 500)
    j = rng.integers(0, terrain.heights_m.shape[1], 500)
    x = terrain.corner_w[0] + i * 0.1
    y = terrain.corner_w[1] + j * 0.1
    np.testing.assert_allclose(terrain.height_at(x, y), terrain.heights_m[i, j], atol=1e-6)
    xq, yq = rng.uniform(-3.0, 30.0, (2, 64, 17))
    ref = terrain.height_at(xq, yq)
    out = height_at(torch.from_numpy(terrain.heights_m), torch.from_numpy(xq).float(),
                    torch.from_numpy(yq).float(), terrain.corner_w, 0.1)
    assert out.shape == (64, 17)
    np.testing.assert_allclose(out.numpy(), ref, atol=1e-5)


def test_origins_lie_on_surface():
    """Every origin sits at the tile centre and on the ground: z == height_at(x, y)."""
    terrain = generate(cfg_of({'rough': 0.3, 'stairs_down': 0.3, 'obstacles': 0.4},
                              num_cols=3), seed=2)
    origins = terrain.origins_w
    assert origins.shape == (3, 3, 3)
    np.testing.assert_allclose(origins[:, :, 0], [[4.0] * 3, [12.0] * 3, [20.0] * 3])
    np.testing.assert_allclose(origins[:, :, 1], [[4.0, 12.0, 20.0]] * 3)
    ground = terrain.height_at(origins[..., 0].astype(np.float64), origins[..., 1])
    np.testing.assert_allclose(origins[..., 2], ground, atol=1e-6)


def test_same_seed_same_terrain():
    """Equal seeds give identical heights; another seed changes rough and obstacle tiles."""
    cfg = cfg_of({'rough': 0.5, 'obstacles': 0.5}, num_cols=2)
    a, b, c = generate(cfg, 7), generate(cfg, 7), generate(cfg, 8)
    np.testing.assert_array_equal(a.heights_m, b.heights_m)
    np.testing.assert_array_equal(a.origins_w, b.origins_w)
    assert not np.array_equal(a.heights_m, c.heights_m)


def test_column_types_follow_proportions():
    """10 columns at 0.2 / 0.3 / 0.5 give 2 slope_up, 3 rough, 5 stairs_up; unknown types raise."""
    cfg = TerrainCfg(num_cols=10, proportions={'slope_up': 0.2, 'rough': 0.3, 'stairs_up': 0.5})
    assert column_types(cfg) == ('slope_up',) * 2 + ('rough',) * 3 + ('stairs_up',) * 5
    with pytest.raises(ValueError, match='unknown terrain types'):
        column_types(TerrainCfg(proportions={'lava': 1.0}))
    with pytest.raises(ValueError, match='not a multiple'):
        generate(TerrainCfg(tile_size_m=(8.05, 8.0)), 0)


def test_mujoco_hfield_matches_lookup():
    """Rays onto the MuJoCo hfield built by hfield_layout hit height_at along grid lines."""
    terrain = generate(cfg_of({'stairs_up': 0.5, 'rough': 0.5}, num_levels=2, num_cols=2,
                              tile_size_m=(4.0, 4.0), platform_m=1.0), seed=0)
    layout = hfield_layout(terrain)
    spec = mujoco.MjSpec()
    spec.add_hfield(name='terrain', nrow=layout['nrow'], ncol=layout['ncol'],
                    size=layout['size'], userdata=layout['userdata'])
    spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_HFIELD, hfieldname='terrain',
                            pos=layout['pos'])
    model = spec.compile()
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    rng = np.random.default_rng(0)
    x = rng.integers(1, 99, 40) * 0.1 - 1.0 + np.r_[np.zeros(20), rng.uniform(0, 0.1, 20)]
    y = rng.integers(1, 99, 40) * 0.1 - 1.0
    y[20:], x[20:] = x[20:].copy(), y[20:].copy()    # half along x lines, half along y lines
    geom = np.zeros(1, np.int32)
    hit = [10.0 - mujoco.mj_ray(model, data, np.array([xi, yi, 10.0]), np.array([0, 0, -1.0]),
                                None, 1, -1, geom) for xi, yi in zip(x, y)]
    np.testing.assert_allclose(hit, terrain.height_at(x, y), atol=1e-5)


def curriculum(xp_origins, generator, num_envs=4, max_init_level=2):
    """A curriculum over 3 levels x 2 columns of origins (level * 10 + col, 0, 0)."""
    return TerrainCurriculum(xp_origins, num_envs, max_init_level, generator)


def origins_table(xp):
    """(3, 2, 3) origins whose x encodes the tile: 10 * level + col."""
    table = np.zeros((3, 2, 3))
    table[..., 0] = np.arange(3)[:, None] * 10 + np.arange(2)[None, :]
    return xp.asarray(table)


def test_curriculum_start_levels_and_columns():
    """Start levels lie in [0, max_init_level]; columns split the envs evenly (0, 0, 1, 1)."""
    cur = curriculum(origins_table(np), np.random.default_rng(0), num_envs=400,
                     max_init_level=1)
    assert set(cur.level.tolist()) == {0, 1}
    assert cur.col.tolist() == [0] * 200 + [1] * 200


def test_curriculum_promotion_and_demotion():
    """8 m tiles: walked 5 m -> up, 1 of 4 m -> down, 3 of 4 m -> stays, level 0 floors at 0."""
    for xp, gen in ((np, np.random.default_rng(0)), (torch, torch.Generator().manual_seed(0))):
        cur = curriculum(origins_table(xp), gen)
        cur.level[:] = xp.asarray([1, 1, 1, 0])
        walked = xp.asarray([5.0, 1.0, 3.0, 1.0])
        commanded = xp.asarray([4.0, 4.0, 4.0, 4.0])
        cur.update(xp.asarray([0, 1, 2, 3]), walked, commanded, tile_size_m=8.0)
        assert cur.level.tolist() == [2, 0, 1, 0]
        assert np.asarray(cur.origins(xp.asarray([0, 3])))[:, 0].tolist() == [20.0, 1.0]
        assert cur.mean_level() == 0.75


def test_curriculum_wraps_past_top_level():
    """Envs promoted past the top level restart on random levels in [0, 3); others untouched."""
    cur = curriculum(origins_table(torch), torch.Generator().manual_seed(0), num_envs=200)
    cur.level[:] = 2
    ids = torch.arange(100)
    cur.update(ids, torch.full((100,), 5.0), torch.zeros(100), tile_size_m=8.0)
    wrapped = cur.level[:100]
    assert wrapped.min() >= 0 and wrapped.max() <= 2 and len(set(wrapped.tolist())) == 3
    assert bool((cur.level[100:] == 2).all())
