"""PositionMetrics: success needs a time-out and the window error statistic within tolerance."""

import math

import pytest
import torch

from sim2real.tasks.quadrotor.metrics import PositionMetrics

WINDOW = 5   # policy steps in the judged window


def _quiet(cfg):
    """No randomization or start event, no action delay: the drone stays where it is put."""
    cfg.events = {}
    cfg.action.params['delay_ticks'] = (0, 0)


def _put(env, offsets, heights=None):
    """Place env i level and at rest at its target + offsets[i] [m] (or at heights[i])."""
    n = env.num_envs
    pos = env.command('target').pos_w.double() + torch.tensor(offsets, dtype=torch.float64)
    if heights is not None:
        for i, h in heights.items():
            pos[i, 2] = h
    quat = torch.tensor([[1.0, 0.0, 0.0, 0.0]]).repeat(n, 1)
    env.scene.backend.write_root_state(torch.arange(n), pos, quat, torch.zeros(n, 3),
                                       torch.zeros(n, 3))
    env.scene.refresh()


def _judge(env, statistic, errors_x, terminated):
    """Feed per-tick x errors (ticks, N) as the last ticks of an episode; finish all envs."""
    metrics = PositionMetrics(env, window_s=WINDOW * env.step_dt_s, tolerance_m=0.1,
                              statistic=statistic)
    assert metrics.window_steps == WINDOW
    n = env.num_envs
    ticks = len(errors_x)
    for k, row in enumerate(errors_x):
        env.episode_length[:] = env.max_episode_length - ticks + 1 + k
        _put(env, [[e, 0.0, 0.0] for e in row])
        metrics.update()
    log = metrics.finish(torch.arange(n), torch.tensor(terminated))
    return metrics, log


# tick 0 lies before the window (error 0.5 m everywhere, ignored); ticks 1-5 are judged
ERRORS = [[0.5] * 5] + [[0.05, 0.05, 0.0, 0.099, 0.101]] * 4 + [[0.05, 0.15, 0.0, 0.099, 0.101]]
TERMINATED = [False, False, True, False, False]


def test_max_statistic_by_hand(make_env):
    """max <= 0.1 m: envs 0 (0.05) and 3 (0.099) succeed; 1 (peak 0.15), 2 (crash), 4 fail."""
    env = make_env(num_envs=5, edit=_quiet)
    metrics, log = _judge(env, 'max', ERRORS, TERMINATED)
    assert metrics.last_success.tolist() == [True, False, False, True, False]
    # mean window errors: 0.05, (4 * 0.05 + 0.15) / 5 = 0.07, crash -> nan, 0.099, 0.101
    err = metrics.last_error_m
    assert math.isnan(err[2].item())
    torch.testing.assert_close(err[[0, 1, 3, 4]], torch.tensor([0.05, 0.07, 0.099, 0.101]),
                               rtol=0, atol=1e-6)
    assert log['episode/success'] == pytest.approx(2 / 5)
    # mean over the envs that ran to their time-out: (0.05 + 0.07 + 0.099 + 0.101) / 4 = 0.08
    assert log['episode/position_error_m'] == pytest.approx(0.08, abs=1e-6)
    assert metrics.finished.tolist() == [1] * 5


def test_mean_statistic_forgives_a_single_peak(make_env):
    """With 'mean', env 1 (mean 0.07 m despite a 0.15 m peak) succeeds; the crash still fails."""
    env = make_env(num_envs=5, edit=_quiet)
    metrics, _ = _judge(env, 'mean', ERRORS, TERMINATED)
    assert metrics.last_success.tolist() == [True, True, False, True, False]


def test_incomplete_window_is_no_success(make_env):
    """An episode judged after only 3 of its 5 window ticks does not succeed at 0 m error."""
    env = make_env(num_envs=2, edit=_quiet)
    metrics, log = _judge(env, 'max', [[0.0, 0.0]] * 3, [False, False])
    assert metrics.last_success.tolist() == [False, False]
    assert 'episode/position_error_m' not in log


def test_unknown_statistic_is_rejected(make_env):
    """statistic 'median' raises ValueError."""
    env = make_env(num_envs=2, edit=_quiet)
    with pytest.raises(ValueError, match='"median"'):
        PositionMetrics(env, window_s=0.1, tolerance_m=0.1, statistic='median')


def test_success_through_real_episodes(make_env):
    """10-step episodes: on-target and 5 cm hovering succeed; 15 cm off and a crash do not."""
    def short(cfg):
        _quiet(cfg)
        step_dt = cfg.physics_dt_s * cfg.decimation
        cfg.episode_length_s = 10 * step_dt
        cfg.metrics.params.update(window_s=WINDOW * step_dt, tolerance_m=0.1)
    env = make_env(num_envs=4, play=True, edit=short)
    assert env.max_episode_length == 10
    _put(env, [[0, 0, 0], [0.15, 0, 0], [0, 0.05, 0], [0, 0, 0]], heights={3: 0.02})
    zeros = torch.zeros(4, 4)
    for step in range(1, 11):
        _, _, terminated, truncated, extras = env.step(zeros)
        if step == 1:
            assert terminated.tolist() == [False, False, False, True]   # env 3 hit the floor
    # without a start event env 3 restarts on the floor (qpos0) and crashes every step
    assert truncated.tolist() == [True, True, True, False] and terminated[3]
    assert env.metrics.last_success.tolist() == [True, False, True, False]
    assert env.metrics.finished.tolist() == [1, 1, 1, 10]
    # hovering at exactly the nominal thrust, the drones barely move: errors 0, 0.15, 0.05
    torch.testing.assert_close(env.metrics.last_error_m[:3], torch.tensor([0.0, 0.15, 0.05]),
                               rtol=0, atol=1e-3)
    assert extras['log']['episode/success'] == pytest.approx(2 / 4)   # envs 0-3 ended
