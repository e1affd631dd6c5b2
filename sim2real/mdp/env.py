"""The batched RL environment: a scene stepped by an action term, observed and rewarded by
managers. All tensors are torch, shape (num_envs, ...), on ``cfg.device`` (the CPU, or CUDA
with the mjwarp backend); see sim2real/device.py."""

from __future__ import annotations

import logging

import torch

from sim2real.device import generator, on_device, to_floats, tree_to
from sim2real.mdp.cfg import EnvCfg
from sim2real.mdp.managers import (
    EventManager, ObservationManager, RewardManager, TerminationManager)
from sim2real.sim.backends import check_backend_device
from sim2real.sim.state import Stateful, StateError

log = logging.getLogger(__name__)

ENV_STATE_FORMAT = 'sim2real.env_state/1'


class RLEnv(Stateful):
    """Vectorized environment with automatic reset (the rsl_rl-style VecEnv protocol).

    state_dict() captures everything that decides the coming steps (simulation and model
    fields of every env, term and manager state, timers, generator, the last observations);
    load_state_dict() into an env of the same configuration continues bit-identically where
    the backend is deterministic (mujoco; mjwarp on the CPU device, not on CUDA).
    """

    STATE = ('episode_length', 'episode_return', 'rng', '_obs')
    CHILDREN = ('scene', 'commands', 'action_term', 'observations', 'rewards',
                'terminations', 'events', 'metrics')
    NOT_STATE = ('corner_envs',)   # set by a reset, cleared by the next step

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
        self.corner_envs = torch.zeros(self.num_envs, dtype=torch.bool)
        """Envs whose draws take the whole box at its corners (cfg.corner_prob): set before
        the startup draws and by each reset, read by those draws, cleared by the next step,
        so that a resumed run draws exactly as an uninterrupted one (not env state)."""
        self.record_final_obs = False
        """When True, step() puts the finished episodes' last (undelayed) policy obs in
        extras['final_obs'] and their per-env statistics in extras['final_episode']."""
        self.final_obs_groups: tuple[str, ...] = ()
        """Observation groups whose last (undelayed) vectors step() reports, for every env, in
        extras['final_obs_groups'] when an episode ends (off-policy learners bootstrap a
        time-out from them); rows of envs whose episode goes on are the current ones."""
        self.events = EventManager(self, cfg.events)
        self.rewards = RewardManager(self, cfg.rewards, cfg.only_positive_rewards)
        self.terminations = TerminationManager(self, cfg.terminations)
        self.metrics = cfg.metrics.class_type(self, **cfg.metrics.params) if cfg.metrics else None
        self._draw_corners(torch.arange(self.num_envs))   # the startup draws' corners
        self.events.apply('startup')
        self._reset_idx(torch.arange(self.num_envs))
        self.observations = ObservationManager(self, cfg.observations)
        self.observations.reset(torch.arange(self.num_envs))
        self.obs_dims = dict(self.observations.group_dims)
        self._obs = self.observations.compute()

    def command(self, name: str):
        """The command term called name."""
        return self.commands[name]

    def get_observations(self) -> dict[str, torch.Tensor]:
        """The observations of the last reset or step, (N, D) per group."""
        return self._obs

    def state_dict(self) -> dict:
        """The env's full state as plain data (loadable with torch.load(weights_only=True))."""
        return {'format': ENV_STATE_FORMAT, 'task': self.cfg.task, 'num_envs': self.num_envs,
                **super().state_dict()}

    @on_device
    def load_state_dict(self, state: dict) -> None:
        """Continue from a state_dict() of an env of the same configuration; StateError
        names the component whose state does not fit."""
        state = dict(state)
        found = (state.pop('format', None), state.pop('task', None), state.pop('num_envs', None))
        expected = (ENV_STATE_FORMAT, self.cfg.task, self.num_envs)
        for what, saved, own in zip(('format', 'task', 'number of envs'), found, expected):
            if saved != own:
                raise StateError(f'the env state has {what} {saved!r}, this env {own!r}')
        super().load_state_dict(tree_to(state, self.device))

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
    def reset_envs(self, env_ids: torch.Tensor) -> dict[str, torch.Tensor]:
        """Reset only env_ids now, ending their episodes unlogged and unjudged (no episode
        statistics, no terrain-curriculum move); returns the observations, the other envs'
        rows as last returned. The other envs' physics is not touched; computing the batch's
        observations advances their observation delay lines and redraws their observation
        noise for this step, as a step would."""
        env_ids = torch.as_tensor(env_ids, dtype=torch.long, device=self.device)
        self.episode_length[env_ids] = 0   # the curriculum judges only episodes that ran
        self._reset_idx(env_ids)
        self.rewards.reset(env_ids)   # no episode sums carried into the next episode's log
        self.observations.reset(env_ids)
        fresh = self.observations.compute()
        mask = torch.zeros(self.num_envs, dtype=torch.bool)
        mask[env_ids] = True
        self._obs = {g: torch.where(mask[:, None], fresh[g], self._obs[g]) for g in fresh}
        return self._obs

    @on_device
    def reseed(self, seed: int) -> dict[str, torch.Tensor]:
        """Restart every env from seed alone: reseed, re-draw the startup events, reset.

        Envs of one config built with different seeds then run identical episodes (except
        what the scene fixed at construction: the rough terrain and its curriculum levels).
        Startup events draw relative to the model's defaults, so re-drawing never drifts.
        reset(seed), which the training runner calls, keeps the startup draws instead.
        """
        self.rng.manual_seed(seed)
        self._draw_corners(torch.arange(self.num_envs))
        self.events.apply('startup')
        return self.reset_envs(torch.arange(self.num_envs))

    @on_device
    def step(self, actions: torch.Tensor):
        """Advance one policy step: (obs, rewards, terminated, truncated, extras)."""
        actions = actions.to(self.device)   # no-op when already there
        self.corner_envs.zero_()
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
                extras['final_episode'] = self._final_episode(done_ids)
            if self.final_obs_groups:
                extras['final_obs_groups'] = {
                    g: self.observations.compute_group(g) for g in self.final_obs_groups}
            extras['log'] = self._episode_log(done_ids, terminated)
            self._reset_idx(done_ids)
            self.observations.reset(done_ids)
        self.events.step_intervals(self.step_dt_s)
        self._obs = self.observations.compute()
        return self._obs, rewards, terminated, truncated, extras

    def _final_episode(self, env_ids: torch.Tensor) -> dict[str, torch.Tensor]:
        """Per-env statistics of the episodes of env_ids that just ended, (len(env_ids),)
        each: return, length [policy steps], reward term sums, termination terms."""
        out = {'episode/return': self.episode_return[env_ids],
               'episode/length': self.episode_length[env_ids]}
        for name, value in self.rewards.episode_sums.items():
            out[f'reward/{name}'] = value[env_ids]
        for name, value in self.terminations.last.items():
            out[f'termination/{name}'] = value[env_ids]
        return out

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

    def _draw_corners(self, env_ids: torch.Tensor) -> None:
        """Which of env_ids draw the box at a corner in the draws that follow (reset events;
        at construction and reseed also the startup events, whose draws last the run)."""
        if self.cfg.corner_prob > 0.0:
            self.corner_envs[env_ids] = torch.rand(
                len(env_ids), generator=self.rng, device=self.device) < self.cfg.corner_prob

    def _reset_idx(self, env_ids: torch.Tensor) -> None:
        """Reset the given envs: corner draws, simulation, commands, reset events, action
        history."""
        self._draw_corners(env_ids)
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
