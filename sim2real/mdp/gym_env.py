"""Gymnasium vector-env API over an RLEnv, for users who bring their own algorithms.

Spaces: observations are the 'policy' group, float32 numpy arrays of shape (N, D) in an
unbounded Box; actions are a Box [-clip, clip]^A, clip being the action term's own clip
from its contract spec (1 for the quadrotor, 4 for the quadruped), so ClipAction and
RescaleAction keep the trained range.

Autoreset (``autoreset_mode``, https://farama.org/Vector-Autoreset-Mode):

- NEXT_STEP (Gymnasium's default; what NormalizeObservation, FlattenObservation and the
  other observation wrappers require): the step that ends an episode returns its last
  observation; the next step resets that env instead of stepping it (its action is ignored,
  reward 0, not done). The batched simulator steps every env together, so the reset envs
  are re-reset after that step: the observation returned is a fresh episode start. That
  hidden step is simulated, so the RLEnv's own bookkeeping sees it: should such an env end
  an episode within that one step (a fall on the first step), its metrics and the terrain
  curriculum count an episode the wrapper never reports, and the resets draw from the env's
  random stream; training through the RLEnv itself is unaffected.
- SAME_STEP: the step that ends an episode already returns the next one's first
  observation; infos['final_obs'] and infos['final_info'] hold the finished episode's.
- DISABLED: as NEXT_STEP, but finished envs wait for ``reset(options={'reset_mask': m})``;
  stepping one before is refused.

``reset(options={'reset_mask': m})`` (bool array (N,)) resets only the masked envs in every
mode; the others keep their state and their last observation. With a seed too, the seed
restarts the random stream the reset draws from; the startup randomization (masses,
friction, ...) is re-drawn only by a reset of all envs.

Infos follow the vector convention: per-env arrays, each with a ``_key`` mask. An ending
episode reports ``log``: 'episode/return', 'episode/length' [policy steps], 'reward/<term>'
(the term's sum over the episode), 'termination/<term>', and 'episode/success' where the
task's metrics judge success. NEXT_STEP and DISABLED put ``log`` in the infos of the step
that ends the episode, SAME_STEP under infos['final_info'] (as Gymnasium's SyncVectorEnv
does). The key 'episode' is left to RecordEpisodeStatistics.

Seeds: the batched simulator has one random stream. ``reset(seed=s)`` restarts it from s and
re-draws the startup randomization (RLEnv.reseed): envs built with different seeds then run
identical episodes. A list of N ints is mapped to one seed by numpy's SeedSequence: a
deterministic function of the whole list (equal lists, equal episodes; [s, s+1, ...] is not
the same as s); a list of None is no seed. ``np_random`` is seeded with the same seed.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import torch
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode

from sim2real.mdp.env import RLEnv
from sim2real.mdp.gym_info import episode_infos, one_seed, reset_mask


class GymVectorEnv(gym.vector.VectorEnv):
    """gymnasium.vector.VectorEnv view of a batched RLEnv (see the module docstring)."""

    def __init__(self, env: RLEnv,
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP):
        """Wrap env; the spaces come from its observation size and its action term."""
        try:
            mode = AutoresetMode(autoreset_mode)
        except ValueError:
            names = [m.value for m in AutoresetMode]
            raise ValueError(f'autoreset_mode {autoreset_mode!r} is not one of {names}') from None
        self.env = env
        env.record_final_obs = True
        self.num_envs = env.num_envs
        self.metadata = {'autoreset_mode': mode}
        obs_dim = env.obs_dims['policy']
        clip = float(env.action_term.spec().clip)
        self.single_observation_space = gym.spaces.Box(-np.inf, np.inf, (obs_dim,), np.float32)
        self.single_action_space = gym.spaces.Box(-clip, clip, (env.num_actions,), np.float32)
        self.observation_space = gym.vector.utils.batch_space(
            self.single_observation_space, self.num_envs)
        self.action_space = gym.vector.utils.batch_space(
            self.single_action_space, self.num_envs)
        self._pending = np.zeros(self.num_envs, dtype=bool)
        """Envs whose episode ended at the last step and that still await their reset."""
        self._last_obs = self._policy_obs(env.get_observations())

    @property
    def autoreset_mode(self) -> AutoresetMode:
        """The autoreset mode (also metadata['autoreset_mode'])."""
        return self.metadata['autoreset_mode']

    def reset(self, *, seed: int | list | None = None, options: dict | None = None):
        """Reset all sub-environments, or those of options['reset_mask']; (obs, infos)."""
        self._check_open()
        options = dict(options or {})
        mask = reset_mask(options.pop('reset_mask', None), self.num_envs)
        if options:
            raise ValueError(f'unknown reset option(s) {sorted(options)}; '
                             f"GymVectorEnv.reset knows 'reset_mask'")
        seed = one_seed(seed, self.num_envs)
        if seed is not None:
            self._np_random, self._np_random_seed = seeding.np_random(seed)
        if mask is None:
            obs = self.env.reseed(seed) if seed is not None else self.env.reset_envs(
                torch.arange(self.num_envs))
            self._last_obs = self._policy_obs(obs)
            self._pending[:] = False
        else:
            if seed is not None:   # a partial reset never re-draws the others' parameters
                self.env.rng.manual_seed(seed)
            self._reset_rows(mask)
        return self._last_obs.copy(), {}

    def step(self, actions):
        """Step all sub-environments: (obs, rewards, terminations, truncations, infos)."""
        self._check_open()
        mode = self.autoreset_mode
        if mode is AutoresetMode.DISABLED and self._pending.any():
            raise RuntimeError(
                f'sub-environments {np.flatnonzero(self._pending).tolist()} finished their '
                f"episodes: reset them with reset(options={{'reset_mask': mask}}) before "
                f'stepping (autoreset_mode DISABLED)')
        obs_t, rewards_t, terminated_t, truncated_t, extras = self.env.step(
            self._actions(actions))
        obs = self._policy_obs(obs_t)
        rewards, terminated, truncated = (
            t.cpu().numpy().copy() for t in (rewards_t, terminated_t, truncated_t))
        ended = terminated | truncated   # as the RLEnv saw it, resetting envs included
        resetting = self._pending.copy()   # NEXT_STEP: this step resets them
        for values in (rewards, terminated, truncated):
            values[resetting] = 0
        done = terminated | truncated
        infos = {}
        if done.any():
            episode = episode_infos(self.env, extras['final_episode'], ended, done)
            final = extras['final_obs'].cpu().numpy()
            if mode is AutoresetMode.SAME_STEP:
                infos['final_obs'] = np.full(self.num_envs, None, dtype=object)
                for i in np.flatnonzero(done):   # one row each (np.array would make it 2-D)
                    infos['final_obs'][i] = final[i].copy()
                infos['_final_obs'] = done.copy()
                infos['final_info'], infos['_final_info'] = episode, done.copy()
            else:
                obs[done] = final[done]
                infos.update(episode)
        self._last_obs = obs
        if resetting.any():
            self._reset_rows(resetting)
        if mode is not AutoresetMode.SAME_STEP:
            self._pending = done
        return self._last_obs.copy(), rewards, terminated, truncated, infos

    def close_extras(self, **kwargs) -> None:
        """Nothing to release: the RLEnv stays usable on its own; this view refuses calls."""

    def _check_open(self) -> None:
        """RuntimeError once close() was called."""
        if self.closed:
            raise RuntimeError('GymVectorEnv is closed: build a new one to step or reset')

    def _actions(self, actions) -> torch.Tensor:
        """The actions as a float32 tensor on the env's device; ValueError on a bad shape."""
        array = np.asarray(actions, dtype=np.float32)
        if array.shape != self.action_space.shape:
            raise ValueError(f'actions of shape {array.shape}; the action space is '
                             f'{self.action_space.shape}')
        return torch.as_tensor(array, device=self.env.device)

    def _reset_rows(self, mask: np.ndarray) -> None:
        """Reset the masked envs; their rows of the last observation become episode starts."""
        ids = torch.as_tensor(np.flatnonzero(mask), device=self.env.device)
        fresh = self._policy_obs(self.env.reset_envs(ids))
        self._last_obs[mask] = fresh[mask]
        self._pending[mask] = False

    @staticmethod
    def _policy_obs(obs: dict[str, torch.Tensor]) -> np.ndarray:
        """A fresh float32 numpy copy of the 'policy' group, (N, D)."""
        return obs['policy'].detach().cpu().numpy().astype(np.float32, copy=True)
