"""bench.env_throughput times the env against raw stepping of its own batch, after a warm-up."""

import math

from bench.env_throughput import env_vs_raw


def test_warm_up_puts_resets_into_the_timed_steps():
    """Zero actions (hover thrust, zero body rates): tilted starts crash within a second.

    Timed right after the synchronized start no drone has crashed yet (0 resets per step);
    after 1 s of simulated time the timed steps include resets, as training steps do.
    """
    fresh = env_vs_raw('quadrotor-hover', num_envs=64, num_threads=1, repeats=5, warmup_s=0.01)
    assert fresh['resets_per_step'] == 0.0
    settled = env_vs_raw('quadrotor-hover', num_envs=64, num_threads=1, repeats=10,
                         warmup_s=1.0)
    assert settled['resets_per_step'] > 0.0
    for out in (fresh, settled):
        assert out['env_steps_per_s'] > 0 and out['raw_policy_steps_per_s'] > 0
        assert math.isclose(out['ratio'],
                            out['env_steps_per_s'] / out['raw_policy_steps_per_s'])
        assert math.isclose(out['raw_physics_steps_per_s'], 2 * out['raw_policy_steps_per_s'])
