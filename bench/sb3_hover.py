"""Stable-Baselines3 PPO on a Gymnasium-style wrapper of the same hover task, same budget."""

from __future__ import annotations

import time

import numpy as np
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecEnv

from bench.common import report
from bench.train_hover import PeriodicEval
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
    """Evaluates SB3's deterministic policy every few rollouts; stops at the target."""

    def __init__(self, check, every: int, deadline_s: float):
        """check: a PeriodicEval; every: rollouts between evaluations."""
        super().__init__()
        self.check, self.every, self.deadline_s = check, every, deadline_s
        self.rollouts = 0
        self.reached = False

    def _on_step(self) -> bool:
        """Continue until the wall-clock budget is spent."""
        return time.monotonic() - self.check.eval_s < self.deadline_s

    def _on_rollout_end(self) -> None:
        """Evaluate (not timed) and remember whether the target was reached."""
        self.rollouts += 1
        if self.rollouts % self.every:
            return
        entry = {'iteration': self.rollouts, 'env_steps': int(self.model.num_timesteps)}
        self.reached = self.reached or self.check(entry)
        if self.reached:
            self.model.stop_training = True


def sb3_time_to_success(budget_s: float, seed: int = 0, num_envs: int = 1024,
                        target: float = 0.9, eval_every: int = 10) -> dict:
    """SB3 PPO wall clock to target eval success on quadrotor-hover, capped at budget_s."""
    env = build_env('quadrotor-hover', seed=seed, num_envs=num_envs)
    venv = SB3VecEnv(env)
    model = PPO('MlpPolicy', venv, n_steps=32, batch_size=8192, n_epochs=5, gamma=0.995,
                learning_rate=3e-4, seed=seed, device='cpu', verbose=0,
                policy_kwargs={'net_arch': [64, 64]})

    def policy(obs):
        actions, _ = model.predict(obs.numpy(), deterministic=True)
        return torch.as_tensor(actions)
    check = PeriodicEval(lambda: policy, 1, target)
    start = time.monotonic()
    callback = _StopAtSuccess(check, eval_every, start + budget_s)
    model.learn(total_timesteps=10 ** 10, callback=callback)
    wall_s = time.monotonic() - start - check.eval_s
    last = check.checks[-1]['success_rate'] if check.checks else 0.0
    out = {'wall_s': wall_s, 'reached': callback.reached, 'env_steps': int(model.num_timesteps),
           'last_success': last, 'num_envs': num_envs, 'checks': check.checks}
    report('train_hover[sb3]', f"{'reached' if callback.reached else 'NOT reached'} "
           f'{target:.0%} eval success in {wall_s:.0f} s ({out["env_steps"]:,} steps, last '
           f'eval success {last:.3f})')
    return out
