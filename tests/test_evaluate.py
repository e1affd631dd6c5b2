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
