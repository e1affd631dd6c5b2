"""The batched RL environment: a scene stepped by an action term, observed and rewarded by
managers. All tensors are torch, shape (num_envs, ...), on ``cfg.device`` (the CPU, or CUDA
with the mjwarp backend); see sim2real/device.py."""

from __future__ import annotations

import logging

import torch

from sim2real.device import generator, on_device, to_floats
from sim2real.mdp.cfg import EnvCfg
from sim2real.mdp.managers import (
    EventManager, ObservationManager, RewardManager, TerminationManager)
from sim2real.sim.backend import check_backend_device

log = logging.getLogger(__name__)


class RLEnv:
    """Vectorized environment with automatic reset (the rsl_rl-style VecEnv protocol)."""

    def __init__(self, cfg: EnvCfg):
        """Build scene, commands, action term and managers; apply startup events; reset."""
        check_backend_device(cfg.backend, cfg.device)   # before anything allocates there
        self.device = torch.device('cuda:0' if cfg.device == 'cuda' else cfg.device)
        self._build(cfg)

    @on_device
    def _build(self, cfg: EnvCfg) -> None:
        """The body of __init__, run with the env's device as torch's default."""
        self.cfg = cfg
        self.num_envs = cfg.num_envs
        self.step_dt_s = cfg.step_dt_s
        self.max_episode_length = round(cfg.episode_length_s / self.step_dt_s)
        self.rng = generator(self.device, cfg.seed)
        self.scene = cfg.scene.class_type(self, **cfg.scene.params)
        self.commands = {n: c.class_type(self, **c.params) for n, c in cfg.commands.items()}
        self.action_term = cfg.action.class_type(self, **cfg.action.params)
        self.num_actions = self.action_term.size
        self.episode_length = torch.zeros(self.num_envs, dtype=torch.long)
        self.episode_return = torch.zeros(self.num_envs)
        self.record_final_obs = False
        """When True, step() puts the finished episodes' last policy obs in extras."""
        self.events = EventManager(self, cfg.events)
        self.rewards = RewardManager(self, cfg.rewards, cfg.only_positive_rewards)
        self.terminations = TerminationManager(self, cfg.terminations)
        self.metrics = cfg.metrics.class_type(self, **cfg.metrics.params) if cfg.metrics else None
        self.events.apply('startup')
        self._reset_idx(torch.arange(self.num_envs))
        self.observations = ObservationManager(self, cfg.observations)
        self.observations.reset(torch.arange(self.num_envs))
        self.obs_dims = dict(self.observations.group_dims)
        self._obs = self.observations.compute()

    def command(self, name: str):
        """The command term called name."""
        return self.commands[name]

    @property
    def episode_time_s(self) -> torch.Tensor:
        """Time since each env's last reset [s], (N,)."""
        return self.episode_length * self.step_dt_s

    @on_device
    def reset(self, seed: int | None = None) -> dict[str, torch.Tensor]:
        """Reset every env (reseeding first when seed is given); returns observations."""
        if seed is not None:
            self.rng.manual_seed(seed)
        ids = torch.arange(self.num_envs)
        self._reset_idx(ids)
        self.observations.reset(ids)
        self._obs = self.observations.compute()
        return self._obs

    @on_device
    def step(self, actions: torch.Tensor):
        """Advance one policy step: (obs, rewards, terminated, truncated, extras)."""
        actions = actions.to(self.device)   # no-op when already there
        self.action_term.process(actions)
        self.scene.simulate(self.cfg.decimation, self.action_term.apply)
        self.scene.refresh()
        self.episode_length += 1
        for command in self.commands.values():
            command.update(self.step_dt_s)
        terminated, truncated = self.terminations.compute()
        diverged = ~self.scene.finite
        terminated |= diverged
        truncated &= ~diverged
        rewards = torch.where(diverged, 0.0, self.rewards.compute(self.step_dt_s))
        self.episode_return += rewards
        if self.metrics is not None:
            self.metrics.update()
        done_ids = (terminated | truncated).nonzero().flatten()
        extras = {'log': {}}
        if len(done_ids) > 0:
            if self.record_final_obs:
                extras['final_obs'] = self.observations.compute_group('policy')
            extras['log'] = self._episode_log(done_ids, terminated)
            self._reset_idx(done_ids)
            self.observations.reset(done_ids)
        self.events.step_intervals(self.step_dt_s)
        self._obs = self.observations.compute()
        return self._obs, rewards, terminated, truncated, extras

    def _episode_log(self, env_ids: torch.Tensor, terminated: torch.Tensor) -> dict:
        """Statistics of the episodes that just ended."""
        out = {'episode/return': self.episode_return[env_ids].mean(),
               'episode/length_s': self.episode_time_s[env_ids].float().mean()}
        out.update(self.rewards.reset(env_ids))
        for name, value in self.terminations.last.items():
            out[f'termination/{name}'] = value[env_ids].float().mean()
        out = to_floats(out)   # one host transfer for all of them
        if self.metrics is not None:
            out.update(self.metrics.finish(env_ids, terminated[env_ids]))
        return out

    def _reset_idx(self, env_ids: torch.Tensor) -> None:
        """Reset the given envs: simulation, commands, reset events, action history."""
        self.scene.reset(env_ids)
        for command in self.commands.values():
            command.resample(env_ids)
        self.events.apply('reset', env_ids)
        self.action_term.reset(env_ids)
        self.episode_length[env_ids] = 0
        self.episode_return[env_ids] = 0.0
        if self.metrics is not None:
            self.metrics.reset(env_ids)
        self.scene.refresh(env_ids)
