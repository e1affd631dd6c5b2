"""Gymnasium vector-env API over an RLEnv, for users who bring their own algorithms.

Observations are the 'policy' group as float32 numpy arrays; actions are clipped to the
action space [-1, 1]. Finished sub-environments reset automatically in the same step
(Gymnasium's SAME_STEP autoreset mode): the returned observation is the new episode's first,
and infos['final_obs'] holds the last one of the finished episode.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import torch
from gymnasium.vector import AutoresetMode

from sim2real.mdp.env import RLEnv


class GymVectorEnv(gym.vector.VectorEnv):
    """gymnasium.vector.VectorEnv view of a batched RLEnv."""

    metadata = {'autoreset_mode': AutoresetMode.SAME_STEP}

    def __init__(self, env: RLEnv):
        """Wrap env; the spaces come from its observation and action sizes."""
        self.env = env
        env.record_final_obs = True
        self.num_envs = env.num_envs
        obs_dim = env.obs_dims['policy']
        self.single_observation_space = gym.spaces.Box(-np.inf, np.inf, (obs_dim,), np.float32)
        self.single_action_space = gym.spaces.Box(-1.0, 1.0, (env.num_actions,), np.float32)
        self.observation_space = gym.vector.utils.batch_space(
            self.single_observation_space, self.num_envs)
        self.action_space = gym.vector.utils.batch_space(
            self.single_action_space, self.num_envs)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Reset all sub-environments; returns (obs, infos)."""
        obs = self.env.reset(seed=seed)
        return obs['policy'].cpu().numpy(), {}

    def step(self, actions):
        """Step all sub-environments: (obs, rewards, terminations, truncations, infos)."""
        act = torch.as_tensor(np.asarray(actions), dtype=torch.float32)
        obs, rewards, terminated, truncated, extras = self.env.step(act)
        infos = {'log': extras['log']}
        done = (terminated | truncated).cpu().numpy()
        if done.any():
            final = extras['final_obs'].cpu().numpy()
            # filled element by element: np.array(list, dtype=object) would turn a list of
            # equal-length rows (every env done) into a 2-D object array
            infos['final_obs'] = np.full(self.num_envs, None, dtype=object)
            for i in np.flatnonzero(done):
                infos['final_obs'][i] = final[i]
            infos['_final_obs'] = done
        return (obs['policy'].cpu().numpy(), rewards.cpu().numpy(), terminated.cpu().numpy(),
                truncated.cpu().numpy(), infos)
