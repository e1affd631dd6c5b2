"""A 2-worker Ray sampler of quadrotor-hover and a PPO learner, for the Ray tests."""

from __future__ import annotations

import functools

import torch

from sim2real.algo_cfg import PolicyCfg, PPOCfg
from sim2real.rl.algorithms import build_algorithm
from sim2real.rl.env import EnvSpec
from sim2real.rl.ray_sampler import RaySampler
from sim2real.training import build_env

ENVS_PER_WORKER = 16
SMALL = PolicyCfg(actor_hidden_dims=(32, 32), critic_hidden_dims=(32, 32))


def sampler_and_algo(cfg, timeout_s: float = 120.0):
    """A started 2-worker sampler of quadrotor-hover and the learner cfg configures, sized
    for its chunks."""
    make_env = functools.partial(build_env, 'quadrotor-hover', num_envs=ENVS_PER_WORKER,
                                 num_threads=1)
    probe = build_env('quadrotor-hover', 0, 1, num_threads=1)
    spec = EnvSpec(2 * ENVS_PER_WORKER, probe.num_actions, dict(probe.obs_dims))
    algo = build_algorithm(cfg, spec, torch.Generator().manual_seed(0))
    sampler = RaySampler(make_env, 2, cfg, cfg.rollout_steps, seed=3,
                         sample_timeout_s=timeout_s)
    sampler.start(0)
    return sampler, algo


def sampler_and_ppo(steps: int, timeout_s: float = 120.0):
    """A 2-worker sampler of quadrotor-hover and a small PPO learner of T = steps."""
    return sampler_and_algo(PPOCfg(num_steps_per_env=steps, policy=SMALL), timeout_s)
