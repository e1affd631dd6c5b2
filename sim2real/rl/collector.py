"""The rollout loop every algorithm shares: act, step the batched env, record, repeat."""

from __future__ import annotations

import contextlib
from collections import defaultdict

import torch

from sim2real.rl.algorithm import Algorithm
from sim2real.rl.env import VecEnv


def mean_by_key(entries: list[dict[str, float]]) -> dict[str, float]:
    """Per key, the mean over the entries that hold it (episode statistics of several steps
    or workers, each already a mean over the episodes that ended there)."""
    values: dict[str, list[float]] = defaultdict(list)
    for entry in entries:
        for key, value in entry.items():
            values[key].append(float(value))
    return {key: sum(v) / len(v) for key, v in values.items()}


@contextlib.contextmanager
def torch_threads(num_threads: int | None):
    """Run the body on num_threads torch intra-op threads (None: as set), then restore."""
    if num_threads is None:
        yield
        return
    previous = torch.get_num_threads()
    torch.set_num_threads(num_threads)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def explore(env: VecEnv, explorer, obs: dict[str, torch.Tensor], steps: int,
            generator: torch.Generator) -> tuple[dict, dict[str, torch.Tensor], dict]:
    """Step env `steps` times with an explorer (an algorithm's acting half, as a rollout
    worker runs it); return the last obs, the explorer's chunk and the episode stats."""
    logs = []
    for _ in range(steps):
        actions = explorer.act(obs, generator)
        obs, rewards, terminated, truncated, extras = env.step(actions)
        explorer.observe(obs, rewards, terminated, truncated, extras)
        logs.append(extras.get('log', {}))
    return obs, explorer.chunk(obs), mean_by_key(logs)


class Collector:
    """Steps a VecEnv with an algorithm's actions for one rollout at a time.

    act_threads: torch threads for the algorithm's forward passes (None: as set), so the
    simulation's own threads keep the cores while the env steps.
    """

    def __init__(self, env: VecEnv, act_threads: int | None = None) -> None:
        """Remember the env; its final observations are requested when an algorithm asks."""
        self.env = env
        self.act_threads = act_threads

    def collect(self, algo: Algorithm, obs: dict[str, torch.Tensor],
                ) -> tuple[dict[str, torch.Tensor], dict[str, float]]:
        """Run algo.rollout_steps env steps from obs; return the last obs and episode stats.

        Each extras['log'] entry is averaged over the steps that reported it (each step's value
        being already a mean over the episodes that ended in it).
        """
        if algo.final_observations:
            self._request_final_observations()
        logs = []
        for _ in range(algo.rollout_steps):
            with torch_threads(self.act_threads):
                actions = algo.act(obs)
            obs, rewards, terminated, truncated, extras = self.env.step(actions)
            algo.process_step(obs, rewards, terminated, truncated, extras)
            logs.append(extras.get('log', {}))
        algo.end_rollout(obs)
        return obs, mean_by_key(logs)

    def _request_final_observations(self) -> None:
        """Ask the env for every group's last observations of finished episodes."""
        if not hasattr(self.env, 'final_obs_groups'):
            raise TypeError(f'{type(self.env).__name__} cannot report the last observations '
                            'of finished episodes (final_obs_groups), which the algorithm '
                            'needs to bootstrap time-outs')
        self.env.final_obs_groups = tuple(self.env.obs_dims)
