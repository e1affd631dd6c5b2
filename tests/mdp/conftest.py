"""Fixtures of the mdp tests: Gymnasium views of small real RLEnvs."""

import pytest

from sim2real.mdp.gym_env import GymVectorEnv

STEPS = 5
"""Policy steps per episode of the short envs."""


@pytest.fixture
def make_vec(make_env, request):
    """Factory of GymVectorEnvs over small RLEnvs (short: 5-step episodes); the batch size
    defaults to the test module's NUM_ENVS."""
    def build(task='quadrotor-hover', num_envs=None, seed=0, short=True, **kwargs):
        def edit(cfg):
            cfg.seed = seed
            if short:
                cfg.episode_length_s = STEPS * cfg.physics_dt_s * cfg.decimation
        num_envs = num_envs or getattr(request.module, 'NUM_ENVS')
        return GymVectorEnv(make_env(task, num_envs=num_envs, edit=edit), **kwargs)
    return build
