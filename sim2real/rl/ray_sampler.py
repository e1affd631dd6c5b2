"""Rollout workers on Ray, decoupled from the learner (`sim2real train --workers N`).

Each worker is a Ray actor that owns a batched simulator and the acting half of the
algorithm (PPOExplorer, SACExplorer). A call carries a reference to the weights in the
object store, the policy version and a seed, and returns one T x N chunk tagged with
(worker, version, sequence): one round trip per chunk, never per step (a Ray actor round
trip costs about 1 ms; ../shared/research/distributed.md section 3.3). Gathering is
synchronous: every worker's chunk of the current version, side by side along the env axis,
is what the algorithm ingests; a chunk of another version is dropped and re-collected.

Fault tolerance: the actors restart when their process dies (max_restarts=-1) and the call
in flight is retried on the restarted actor (max_task_retries=-1): sampling is idempotent,
as the weights, version and seed travel with the call. A worker silent for longer than
the sample timeout is killed and restarted the same way. Each accepted chunk counts once;
a chunk of a killed call is never returned. A restarted worker starts new episodes.

This module imports Ray; nothing imports it unless workers were asked for.
"""

from __future__ import annotations

import logging
import os
from collections import defaultdict
from typing import Callable

import numpy as np
import ray
import torch

from sim2real.rl.algorithms import build_explorer
from sim2real.rl.collector import explore

log = logging.getLogger(__name__)


class RolloutWorker:
    """A batched env and an algorithm's acting half, stepped T steps per call."""

    def __init__(self, index: int, make_env: Callable, algo_cfg, seed: int,
                 threads: int = 1) -> None:
        """Build the env (make_env(seed)) and the explorer; reset the episodes."""
        torch.set_num_threads(threads)
        self.index = index
        self.env = make_env(seed)
        self.explorer = build_explorer(algo_cfg, self.env.obs_dims, self.env.num_actions)
        if getattr(self.explorer, 'window', None) is not None:   # bootstraps time-outs
            self.env.final_obs_groups = tuple(self.env.obs_dims)
        self.obs = self.env.reset(seed=seed)
        self.version: int | None = None
        self.seq = 0
        self.restarted = ray.get_runtime_context().was_current_actor_reconstructed

    def sample(self, weights: dict[str, np.ndarray], version: int, seed: int,
               steps: int) -> dict:
        """Step the env `steps` times with the given policy version; one tagged chunk."""
        if version != self.version:
            self.explorer.load({k: torch.from_numpy(v) for k, v in weights.items()})
            self.version = version
        generator = torch.Generator().manual_seed(seed)
        self.obs, chunk, stats = explore(self.env, self.explorer, self.obs, steps, generator)
        self.seq += 1
        return {'worker': self.index, 'version': version, 'seq': self.seq,
                'restarted': self.restarted, 'steps': steps * self.env.num_envs,
                'data': {k: v.numpy() for k, v in chunk.items()}, 'stats': stats}

    def pid(self) -> int:
        """The worker's process id."""
        return os.getpid()


def init_ray(address: str | None, num_cpus: int | None = None,
             object_store_bytes: int = 512 * 2 ** 20) -> None:
    """Connect to a Ray cluster (address 'auto' or host:port) or start a local one: no
    dashboard, a bounded object store, no auth token written under the home folder."""
    if ray.is_initialized():
        return
    if address is None:
        os.environ.setdefault('RAY_AUTH_MODE', 'disabled')
        ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False,
                 object_store_memory=object_store_bytes)
    else:
        ray.init(address=address, log_to_driver=False)
    log.info('ray %s: %s CPUs', ray.__version__, ray.cluster_resources().get('CPU'))


class RaySampler:
    """K rollout workers of envs_per_worker envs each, gathered synchronously."""

    def __init__(self, make_env: Callable, num_workers: int, algo_cfg, steps: int,
                 seed: int, sample_timeout_s: float = 120.0, cpus_per_worker: float = 1.0,
                 address: str | None = None, restart_timeout_s: float = 300.0) -> None:
        """Start the workers (make_env(seed) builds one worker's env, picklable)."""
        if num_workers < 1:
            raise ValueError(f'num_workers must be >= 1, got {num_workers}')
        init_ray(address)
        self.steps, self.seed = steps, seed
        self.sample_timeout_s = sample_timeout_s
        """A worker silent this long [s] is killed and restarted."""
        self.restart_timeout_s = restart_timeout_s
        """How long a restart may take [s] (building the env included) before it fails."""
        self.version = 0
        self.hangs = 0
        """Workers replaced after a sample timeout."""
        self.dropped = 0
        """Chunks dropped: another version than the one asked for."""
        self.restarts_seen = 0
        """Chunks that came from a restarted worker."""
        actor = ray.remote(RolloutWorker).options(
            num_cpus=cpus_per_worker, max_restarts=-1, max_task_retries=-1)
        self.workers = [actor.remote(k, make_env, algo_cfg, seed + 7919 * k,
                                     threads=max(1, int(cpus_per_worker)))
                        for k in range(num_workers)]

    def worker_pids(self) -> list[int]:
        """Process ids of the workers (for tests that kill one)."""
        return ray.get([w.pid.remote() for w in self.workers])

    def _call(self, k: int, weights) -> ray.ObjectRef:
        """Ask worker k for a chunk of the current version."""
        seed = self.seed + 1_000_003 * self.version + 7919 * k
        return self.workers[k].sample.remote(weights, self.version, seed, self.steps)

    def _restart(self, k: int) -> None:
        """Kill a silent worker and wait until Ray has restarted it (its call in flight is
        retried there), so that its restart does not count against the sample timeout."""
        log.warning('rollout worker %d sent nothing for %.0f s: restarting it', k,
                    self.sample_timeout_s)
        ray.kill(self.workers[k], no_restart=False)
        self.hangs += 1
        ray.get(self.workers[k].pid.remote(), timeout=self.restart_timeout_s)

    def collect(self, algo) -> tuple[int, dict[str, float]]:
        """One chunk of the algorithm's current policy from every worker, ingested; returns
        the env steps they hold and the episode statistics."""
        self.version += 1
        state = algo.network.state_dict()
        weights = ray.put({k: v.detach().cpu().numpy() for k, v in state.items()})
        pending = {self._call(k, weights): k for k in range(len(self.workers))}
        results: dict[int, dict] = {}
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=self.sample_timeout_s)
            if not ready:
                for k in pending.values():   # silent too long: kill, Ray restarts and retries
                    self._restart(k)
                continue
            k = pending.pop(ready[0])
            result = ray.get(ready[0])
            if result['version'] != self.version:
                self.dropped += 1
                pending[self._call(k, weights)] = k
                continue
            self.restarts_seen += int(result['restarted'])
            results[k] = result
        ordered = [results[k] for k in range(len(self.workers))]
        algo.ingest([{key: torch.from_numpy(v) for key, v in r['data'].items()}
                     for r in ordered])
        return sum(r['steps'] for r in ordered), _mean_stats([r['stats'] for r in ordered])

    def close(self) -> None:
        """Stop the workers."""
        for worker in self.workers:
            ray.kill(worker, no_restart=True)
        self.workers = []


def _mean_stats(stats: list[dict[str, float]]) -> dict[str, float]:
    """Per key, the mean over the workers that reported it."""
    values: dict[str, list[float]] = defaultdict(list)
    for entry in stats:
        for key, value in entry.items():
            values[key].append(value)
    return {key: sum(v) / len(v) for key, v in values.items()}
