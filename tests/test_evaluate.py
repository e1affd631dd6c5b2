"""Evaluation rollouts count each env's first episode of THIS call, even on a reused env."""

import torch

from sim2real.evaluate import rollout_episodes


def _short(cfg):
    """0.5 s episodes judged over their last 0.2 s."""
    cfg.episode_length_s = 0.5
    cfg.metrics.params['window_s'] = 0.2


def test_rollout_on_a_reused_env_ignores_earlier_episodes(make_env):
    """A second call judges new episodes: planted stale results (success, 123 m) are unused."""
    env = make_env(num_envs=4, edit=_short)

    def hold(obs):
        return torch.zeros(obs.shape[0], 4)
    first = rollout_episodes(env, hold)
    assert first['episodes'] == 4
    env.metrics.last_success[:] = True
    env.metrics.last_error_m[:] = 123.0
    second = rollout_episodes(env, hold)
    # holding hover thrust from tilted, spinning starts 1 m away never ends within 0.1 m
    assert second['success_rate'] == 0.0
    assert second['position_error_m'] is None or second['position_error_m'] < 123.0


def test_every_task_metrics_term_has_the_episode_metrics_interface():
    """evaluate and robustness read any task's metrics the same way (no per-task branch)."""
    from sim2real.mdp.metrics import EpisodeMetrics, quantile_name
    from sim2real.tasks import make_env_cfg, task_names
    from sim2real.training import build_env
    for task in task_names():
        env = build_env(task, seed=0, num_envs=2, num_threads=1)
        metrics = env.metrics
        assert isinstance(metrics, EpisodeMetrics), task
        assert set(metrics.quantiles) <= set(metrics.last_values), task
        assert all(v.shape == (2,) for v in metrics.last_values.values()), task
        assert make_env_cfg(task).metrics is not None
    assert quantile_name('position_error_m', 0.95) == 'position_error_p95_m'
    assert quantile_name('lin_vel_error_mps', 0.5) == 'lin_vel_error_p50_mps'
