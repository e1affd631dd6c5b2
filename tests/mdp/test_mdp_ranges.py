"""Randomization ranges: tuples draw as before, per-env ranges pin, config paths resolve."""

import pytest
import torch

from sim2real.mdp.events import sample_uniform
from sim2real.mdp.ranges import (
    bounds, EdgeRange, get_path, PerEnvRange, sample_int_range, sample_range, set_path)
from sim2real.tasks import make_env_cfg


class _Env:
    """What the samplers read from an env: its generator."""

    def __init__(self, seed=0):
        self.rng = torch.Generator().manual_seed(seed)


def test_tuple_range_draws_the_same_numbers_as_sample_uniform():
    """A tuple range takes the same numbers from the generator as sample_uniform did."""
    a = sample_range(_Env(), torch.arange(5), (0.8, 1.2), (5, 3))
    b = sample_uniform(_Env(), 0.8, 1.2, (5, 3))
    torch.testing.assert_close(a, b, rtol=0, atol=0)
    assert a.dtype == torch.float64 and bool(((a >= 0.8) & (a <= 1.2)).all())


def test_per_env_range_pins_rows_and_leaves_other_draws_alone():
    """Rows 1 and 3 pinned at 0.5 and 2.0; rows 0, 2 draw exactly what the tuple gives."""
    ids = torch.arange(4)
    pinned = PerEnvRange(torch.tensor([0.8, 0.5, 0.8, 2.0], dtype=torch.float64),
                         torch.tensor([1.2, 0.5, 1.2, 2.0], dtype=torch.float64))
    a = sample_range(_Env(), ids, pinned, (4, 2))
    b = sample_range(_Env(), ids, (0.8, 1.2), (4, 2))
    assert a[1].tolist() == [0.5, 0.5] and a[3].tolist() == [2.0, 2.0]
    torch.testing.assert_close(a[[0, 2]], b[[0, 2]], rtol=0, atol=0)
    # a subset of env ids reads its own rows
    sub = sample_range(_Env(), torch.tensor([3, 1]), pinned, (2,))
    assert sub.tolist() == [2.0, 0.5]


def test_per_env_int_range_draws_the_tuples_numbers_in_its_free_rows():
    """Delays: free rows (the trained 0-3) equal the tuple's draws; a pinned row holds 4."""
    ids = torch.arange(6)
    low = torch.tensor([0.0, 4.0, 0.0, 0.0, 2.0, 0.0], dtype=torch.float64)
    high = torch.tensor([3.0, 4.0, 3.0, 3.0, 2.0, 3.0], dtype=torch.float64)
    env_a, env_b = _Env(), _Env()
    a = sample_int_range(env_a, ids, PerEnvRange(low, high, trained=(0.0, 3.0)))
    b = sample_int_range(env_b, ids, (0, 3))
    free = torch.tensor([True, False, True, True, False, True])
    assert torch.equal(a[free], b[free]) and a[1] == 4 and a[4] == 2
    assert torch.equal(env_a.rng.get_state(), env_b.rng.get_state())


def test_int_ranges_cover_bounds_and_pin():
    """Whole numbers in [0, 3] hit every value; a pinned row returns its value."""
    env = _Env()
    draws = sample_int_range(env, torch.arange(4000), (0, 3))
    assert sorted(draws.unique().tolist()) == [0, 1, 2, 3]
    pinned = PerEnvRange(torch.tensor([0.0, 4.0, 0.0]), torch.tensor([3.0, 4.0, 3.0]))
    many = torch.stack([sample_int_range(env, torch.arange(3), pinned) for _ in range(500)])
    assert (many[:, 1] == 4).all()
    assert sorted(many[:, 0].unique().tolist()) == [0, 1, 2, 3]
    assert bounds(pinned) == (0.0, 4.0) and bounds((1, 2)) == (1.0, 2.0)


def test_per_env_range_refuses_inverted_bounds():
    """high < low is an error, not a silent swap."""
    with pytest.raises(ValueError, match='high bound is below'):
        PerEnvRange(torch.tensor([1.0]), torch.tensor([0.5]))


def test_config_paths_resolve_and_set():
    """Every declared box path of every task names a range that exists in its config."""
    for task in ('quadrotor-hover', 'quadrotor-track', 'quadruped-flat', 'quadruped-rough',
                 'hand-rotate', 'hand-reorient'):
        cfg = make_env_cfg(task)
        assert cfg.randomization, task
        for name, param in cfg.randomization.items():
            low, high = bounds(get_path(cfg, param.path))
            assert low <= param.nominal <= high, (task, name)
    cfg = make_env_cfg('quadrotor-hover')
    set_path(cfg, 'events.mass.value_range', (1.0, 1.0))
    assert cfg.events['mass'].params['value_range'] == (1.0, 1.0)
    set_path(cfg, 'observations.policy.delay_ticks', (1, 1))
    assert cfg.observations['policy'].delay_ticks == (1, 1)
    with pytest.raises(KeyError, match='no "nope"'):
        get_path(cfg, 'events.nope.value_range')


def test_quadrotor_physical_ranges_are_centred_on_the_urdf_values():
    """Mass, inertia, thrust and motor time constant: nominal in the middle of the range."""
    cfg = make_env_cfg('quadrotor-hover')
    for name in ('mass_scale', 'inertia_scale', 'thrust_scale', 'motor_tau_scale'):
        param = cfg.randomization[name]
        low, high = bounds(get_path(cfg, param.path))
        assert param.nominal - low == pytest.approx(high - param.nominal), name


def test_edge_range_draws_bounds_at_its_rate():
    """edge_prob 0.4: about 20 % of draws at each bound (+-3 %), the rest inside."""
    env = _Env()
    draws = sample_range(env, torch.arange(20000), EdgeRange(0.5, 1.5, 0.4), (20000,))
    assert abs(float((draws == 0.5).double().mean()) - 0.2) < 0.03
    assert abs(float((draws == 1.5).double().mean()) - 0.2) < 0.03
    assert bool(((draws >= 0.5) & (draws <= 1.5)).all())
    ticks = sample_int_range(env, torch.arange(20000), EdgeRange(0, 3, 0.4))
    # bounds: 0.4 / 2 + 0.6 / 4 = 0.35 each; inner values 0.15 each
    assert abs(float((ticks == 3).double().mean()) - 0.35) < 0.03
    assert abs(float((ticks == 1).double().mean()) - 0.15) < 0.03
    assert bounds(EdgeRange(0, 3, 0.4)) == (0.0, 3.0)


def test_per_env_edges_move_an_envs_joints_to_one_bound_together():
    """edge_prob 0.5 over 12 joints: per_env puts all 12 of an env at the same bound in about
    half the envs (+-3 %); independent draws put all 12 at one bound in about none."""
    n, joints = 20000, 12
    together = sample_range(_Env(), torch.arange(n), EdgeRange(0.9, 1.1, 0.5, per_env=True),
                            (n, joints))
    alone = sample_range(_Env(), torch.arange(n), EdgeRange(0.9, 1.1, 0.5), (n, joints))
    for draws, expected in ((together, 0.5), (alone, 2 * 0.25 ** joints)):
        low = (draws == 0.9).all(dim=1)
        high = (draws == 1.1).all(dim=1)
        assert abs(float((low | high).double().mean()) - expected) < 0.03
    rows = together[(together == 0.9).any(dim=1)]
    assert bool((rows == 0.9).all())   # a row at an edge is wholly at it


def test_quadruped_trains_its_corners_per_env():
    """quadruped-flat's train defaults bias the box per env; its box is fully addressable."""
    from sim2real.mdp.ranges import bias_edges
    from sim2real.tasks import get_task
    train = get_task('quadruped-flat').train
    assert train.edge_prob == 0.3 and train.edge_per_env is True
    cfg = make_env_cfg('quadruped-flat')
    bias_edges(cfg, train.edge_prob, train.edge_per_env)
    for p in cfg.randomization.values():
        value = get_path(cfg, p.path)
        assert isinstance(value, EdgeRange) and value.per_env


def test_bias_edges_wraps_every_box_range():
    """bias_edges makes every box range an EdgeRange of the same bounds."""
    from sim2real.mdp.ranges import bias_edges
    cfg = make_env_cfg('quadrotor-hover')
    before = {p.path: bounds(get_path(cfg, p.path)) for p in cfg.randomization.values()}
    bias_edges(cfg, 0.3)
    for path, span in before.items():
        value = get_path(cfg, path)
        assert isinstance(value, EdgeRange) and bounds(value) == span and value.edge_prob == 0.3


def test_edge_bias_is_a_training_default_not_part_of_the_task():
    """quadrotor-hover trains with edge_prob 0.5 (its train defaults): build_env with it
    draws the box's bounds that often; the task's own config (eval, robustness) draws
    uniformly."""
    from sim2real.tasks import get_task
    from sim2real.training import build_env
    edge = get_task('quadrotor-hover').train.edge_prob
    assert edge == 0.5
    trained = build_env('quadrotor-hover', seed=0, num_envs=2, edge_prob=edge, num_threads=1)
    evaluated = build_env('quadrotor-hover', seed=0, num_envs=2, num_threads=1)
    for param in trained.cfg.randomization.values():
        value = get_path(trained.cfg, param.path)
        assert isinstance(value, EdgeRange) and value.edge_prob == 0.5, param.path
        assert not isinstance(get_path(evaluated.cfg, param.path), EdgeRange), param.path


def test_corner_envs_draw_every_box_parameter_at_a_bound():
    """corner_prob 0.5 with no edge bias: the corner envs of a real quadrotor env hold mass,
    motor lag and action delay at a bound at once, the other envs inside their ranges;
    about half the envs are corner envs (+-10 %); a reset redraws them, a step clears them
    (they are not env state: a resumed run draws as an uninterrupted one)."""
    from sim2real.training import build_env
    env = build_env('quadrotor-hover', seed=3, num_envs=200, num_threads=1, corner_prob=0.5)
    corner = env.corner_envs.clone()
    assert abs(float(corner.double().mean()) - 0.5) < 0.1
    mass = env.scene.backend.expand('body_mass')[:, 1].double() / env.scene.nominal_mass_kg
    tau = (env.scene.actuator.time_constant_s[:, 0].double()
           / env.scene.rotors.time_constant_s)
    delay = env.action_term.delay.double()

    def at_bound(x, low, high):
        return (torch.isclose(x, torch.full_like(x, low))
                | torch.isclose(x, torch.full_like(x, high)))
    for values, low, high in ((mass, 0.8, 1.2), (tau, 0.6, 1.4), (delay, 0.0, 2.0)):
        assert bool(at_bound(values, low, high)[corner].all())
    assert not bool(at_bound(mass, 0.8, 1.2)[~corner].any())
    assert not bool(at_bound(tau, 0.6, 1.4)[~corner].any())
    plain = build_env('quadrotor-hover', seed=3, num_envs=200, num_threads=1)
    assert not bool(plain.corner_envs.any())
    env.reset_envs(torch.arange(200))
    assert not torch.equal(env.corner_envs, corner)
    env.step(torch.zeros(200, 4))
    assert not bool(env.corner_envs.any())


def test_corner_draws_reach_the_startup_events():
    """The quadruped's payload is a startup draw (once per run): with corner_prob 0.5 about
    half the envs hold it at -1 or +3 kg, the others strictly inside."""
    from sim2real.training import build_env
    env = build_env('quadruped-flat', seed=2, num_envs=64, num_threads=1, corner_prob=0.5)
    base = env.scene.info.base_body_id
    payload = (env.scene.backend.expand('body_mass')[:, base].double()
               - float(env.scene.model.body_mass[base]))
    at_bound = (payload - (-1.0)).abs().lt(1e-9) | (payload - 3.0).abs().lt(1e-9)
    assert 0.3 < float(at_bound.double().mean()) < 0.7
    plain = build_env('quadruped-flat', seed=2, num_envs=64, num_threads=1)
    plain_payload = (plain.scene.backend.expand('body_mass')[:, base].double()
                     - float(plain.scene.model.body_mass[base]))
    assert not bool(((plain_payload + 1.0).abs().lt(1e-9)
                     | (plain_payload - 3.0).abs().lt(1e-9)).any())
