"""bench.ppo_update times both PPO updates on networks of the same shape."""

import math

from bench.ppo_update import ppo_update


def test_tiny_batch_measures_both_learners_on_the_same_network():
    """64 envs x 8 steps, one timed update each: rates, a finite ratio, equal parameter counts."""
    out = ppo_update(num_envs=64, repeats=1, num_steps_per_env=8)
    assert out['config']['samples_per_update'] == 64 * 8
    assert out['ours']['samples_per_s'] > 0 and out['rsl_rl']['samples_per_s'] > 0
    assert math.isfinite(out['ratio']) and out['ratio'] > 0
    ours, theirs = out['params']['ours'], out['params']['rsl_rl']
    assert ours == theirs
    assert ours['actor'] > 0 and ours['critic'] > 0
    # the same starting log-std: nearly the same mean entropy over the warm-up update
    assert math.isclose(out['ours']['warmup_losses']['entropy'],
                        out['rsl_rl']['warmup_losses']['entropy'], rel_tol=1e-2)
