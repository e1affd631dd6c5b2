"""Stable-Baselines3 PPO on a Gymnasium-style wrapper of the same hover task, same budget."""

from __future__ import annotations

import time

import numpy as np
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecEnv

from bench.common import report
from sim2real.training import build_env


class SB3VecEnv(VecEnv):
    """stable_baselines3 VecEnv over the batched RLEnv (policy observations, numpy)."""

    def __init__(self, env):
        """Wrap env; SB3 reads observation and action spaces of one sub-environment."""
        import gymnasium as gym
        self.env = env
        env.record_final_obs = True
        obs_space = gym.spaces.Box(-np.inf, np.inf, (env.obs_dims['policy'],), np.float32)
        act_space = gym.spaces.Box(-1.0, 1.0, (env.num_actions,), np.float32)
        super().__init__(env.num_envs, obs_space, act_space)
        self._actions = None
        self.successes: list[float] = []

    def reset(self):
        """Reset all envs; returns the observations."""
        return self.env.reset()['policy'].numpy()

    def step_async(self, actions):
        """Remember the actions for step_wait."""
        self._actions = torch.as_tensor(actions, dtype=torch.float32)

    def step_wait(self):
        """Step; SB3's infos carry terminal observations and time-limit truncation."""
        obs, rewards, terminated, truncated, extras = self.env.step(self._actions)
        done = (terminated | truncated).numpy()
        infos = [{} for _ in range(self.num_envs)]
        if done.any():
            final = extras['final_obs'].numpy()
            for i in np.flatnonzero(done):
                infos[i] = {'terminal_observation': final[i],
                            'TimeLimit.truncated': bool(truncated[i])}
            if 'episode/success' in extras['log']:
                self.successes.append(extras['log']['episode/success'])
        return obs['policy'].numpy(), rewards.numpy(), done, infos

    def close(self):
        """Nothing to release."""

    def get_attr(self, attr_name, indices=None):
        """Attributes of sub-environments (not supported beyond render_mode)."""
        return [None for _ in self._get_indices(indices)]

    def set_attr(self, attr_name, value, indices=None):
        """Not supported: the batched env has no per-env Python objects."""

    def env_method(self, method_name, *args, indices=None, **kwargs):
        """Not supported: the batched env has no per-env Python objects."""
        return [None for _ in self._get_indices(indices)]

    def env_is_wrapped(self, wrapper_class, indices=None):
        """No Gymnasium wrappers inside."""
        return [False for _ in self._get_indices(indices)]


class _StopAtSuccess(BaseCallback):
    """Stops SB3 training once the recent success rate reaches the target or time runs out."""

    def __init__(self, venv: SB3VecEnv, target: float, deadline_s: float):
        super().__init__()
        self.venv, self.target, self.deadline_s = venv, target, deadline_s
        self.reached_at_s = None

    def _on_step(self) -> bool:
        recent = self.venv.successes[-20:]
        if len(recent) == 20 and np.mean(recent) >= self.target:
            self.reached_at_s = time.monotonic()
            return False
        return time.monotonic() < self.deadline_s


def sb3_time_to_success(budget_s: float, seed: int = 0, num_envs: int = 1024,
                        target: float = 0.9) -> dict:
    """SB3 PPO wall clock to target success on quadrotor-hover, capped at budget_s."""
    env = build_env('quadrotor-hover', seed=seed, num_envs=num_envs)
    venv = SB3VecEnv(env)
    model = PPO('MlpPolicy', venv, n_steps=32, batch_size=8192, n_epochs=5, gamma=0.99,
                learning_rate=3e-4, seed=seed, device='cpu', verbose=0,
                policy_kwargs={'net_arch': [64, 64]})
    start = time.monotonic()
    callback = _StopAtSuccess(venv, target, start + budget_s)
    model.learn(total_timesteps=10 ** 10, callback=callback)
    wall_s = time.monotonic() - start
    reached = callback.reached_at_s is not None
    out = {'wall_s': wall_s, 'reached': reached, 'env_steps': int(model.num_timesteps),
           'last_success': float(np.mean(venv.successes[-20:])) if venv.successes else 0.0,
           'num_envs': num_envs}
    report('train_hover[sb3]', f"{'reached' if reached else 'NOT reached'} {target:.0%} "
           f"success in {wall_s:.0f} s ({out['env_steps']:,} steps, last success "
           f"{out['last_success']:.3f})")
    return out
