"""Rollout workers on Ray, decoupled from the learner (`sim2real train --workers N`).

Each worker is a Ray actor that owns a batched simulator and the acting half of the
algorithm (PPOExplorer, SACExplorer). A call carries a reference to the weights in the
object store, the policy version and a seed, and returns one T x N chunk tagged with
(worker, version, sequence): one round trip per chunk, never per step (a Ray actor round
trip costs about 1 ms; ../shared/research/distributed.md section 3.3).

Synchronous gathering (on-policy PPO): every worker's chunk of the current version, side by
side along the env axis, is what the algorithm ingests; a chunk of another version is
dropped and re-collected. Asynchronous gathering (off-policy SAC: its config has a
max_policy_lag): every worker always has a call in flight, re-issued with the newest
weights the moment its chunk arrives, so the workers sample while the learner updates; an
iteration ingests the first num_workers chunks to arrive (a slow worker does not hold the
learner up: a fast one delivers twice) whose weights are at most max_policy_lag updates
old; an older chunk is dropped and counted (`stale`).

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
import time
from typing import Callable

import numpy as np
import ray
import torch

from sim2real.rl.algorithms import build_explorer
from sim2real.rl.collector import explore, mean_by_key

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

    def node(self) -> str:
        """The id of the Ray node the worker runs on."""
        return ray.get_runtime_context().get_node_id()


def init_ray(address: str | None, num_cpus: int | None = None,
             object_store_bytes: int = 512 * 2 ** 20) -> None:
    """Connect to a Ray cluster (address 'auto' or host:port) or start a local one: no
    dashboard, a bounded object store, no auth token written under the home folder."""
    if ray.is_initialized():
        return
    if address is None:
        os.environ.setdefault('RAY_AUTH_MODE', 'disabled')
        # 'local': a new Ray of this process, never one a crashed run left behind
        ray.init(address='local', num_cpus=num_cpus, include_dashboard=False,
                 log_to_driver=False, object_store_memory=object_store_bytes)
    else:
        ray.init(address=address, log_to_driver=False)
    log.info('ray %s: %s CPUs', ray.__version__, ray.cluster_resources().get('CPU'))


class RaySampler:
    """K rollout workers of envs_per_worker envs each, gathered synchronously, or
    asynchronously where the algorithm's config has a max_policy_lag (off-policy)."""

    def __init__(self, make_env: Callable, num_workers: int, algo_cfg, steps: int,
                 seed: int, sample_timeout_s: float = 120.0, cpus_per_worker: float = 1.0,
                 address: str | None = None, restart_timeout_s: float = 300.0,
                 max_restarts_per_call: int = 3) -> None:
        """Connect to Ray and check it has the CPUs (make_env(seed) builds one worker's env,
        picklable); the workers start with start()."""
        if num_workers < 1:
            raise ValueError(f'num_workers must be >= 1, got {num_workers}')
        init_ray(address)
        available = ray.cluster_resources().get('CPU', 0.0)
        if available < num_workers * cpus_per_worker:
            raise ValueError(f'{num_workers} rollout workers of {cpus_per_worker:g} CPU need '
                             f'{num_workers * cpus_per_worker:g} CPUs; the Ray cluster has '
                             f'{available:g}')
        self.make_env, self.algo_cfg, self.steps, self.seed = make_env, algo_cfg, steps, seed
        self.num_workers, self.cpus_per_worker = num_workers, cpus_per_worker
        self.sample_timeout_s = sample_timeout_s
        """A call silent this long [s] gets its worker killed and restarted."""
        self.restart_timeout_s = restart_timeout_s
        """What a restart may add to a call [s] (building the env included)."""
        self.max_restarts_per_call = max_restarts_per_call
        """A call whose worker was restarted this often fails the run."""
        self.max_policy_lag: int | None = getattr(algo_cfg, 'max_policy_lag', None)
        """None: synchronous gathering; else asynchronous with this bound on the lag."""
        self.version = 0
        self.stale = 0
        """Chunks dropped by the asynchronous gathering: their weights lagged too far."""
        self.lags: dict[int, int] = {}
        """Accepted chunks by policy lag (updates between their weights and the learner's)."""
        self.hangs = 0
        """Workers replaced after a sample timeout."""
        self.dropped = 0
        """Chunks dropped: another version than the one asked for."""
        self.restarts_seen = 0
        """Chunks that came from a restarted worker."""
        self.workers: list = []
        self._inflight: dict = {}   # async: ObjectRef -> (worker, deadline [monotonic s])
        self._calls: dict[int, int] = {}   # async: calls issued to each worker
        self._restarts: dict[int, int] = {}   # async: restarts since a worker's last chunk

    def start(self, iteration: int = 0) -> None:
        """Start the workers, once, for a run at `iteration` (a resumed run draws new env
        and action seeds), and wait until every env is built."""
        self.version = max(self.version, iteration)
        if self.workers:
            return
        actor = ray.remote(RolloutWorker).options(
            num_cpus=self.cpus_per_worker, max_restarts=-1, max_task_retries=-1)
        self.workers = [actor.remote(k, self.make_env, self.algo_cfg,
                                     self.seed + 7919 * k + 1_000_003 * iteration,
                                     threads=max(1, int(self.cpus_per_worker)))
                        for k in range(self.num_workers)]
        ray.get([w.pid.remote() for w in self.workers], timeout=self.restart_timeout_s)

    def worker_pids(self) -> list[int]:
        """Process ids of the workers (for tests that kill one)."""
        return ray.get([w.pid.remote() for w in self.workers])

    def _call(self, k: int, weights) -> ray.ObjectRef:
        """Ask worker k for a chunk of the current version (asynchronous gathering: each
        call of a version to the same worker draws its own action noise)."""
        seed = self.seed + 1_000_003 * self.version + 7919 * k
        if self.max_policy_lag is not None:
            self._calls[k] = self._calls.get(k, 0) + 1
            seed += 15_485_863 * self._calls[k]
        return self.workers[k].sample.remote(weights, self.version, seed, self.steps)

    def _restart(self, k: int, restarts: dict[int, int]) -> None:
        """Kill a silent worker; Ray restarts it and retries its call there."""
        restarts[k] = restarts.get(k, 0) + 1
        if restarts[k] > self.max_restarts_per_call:
            raise RuntimeError(f'rollout worker {k} stayed silent through '
                               f'{self.max_restarts_per_call} restarts; giving up')
        log.warning('rollout worker %d sent nothing for %.0f s: restarting it', k,
                    self.sample_timeout_s)
        ray.kill(self.workers[k], no_restart=False)
        self.hangs += 1

    @staticmethod
    def _weights(algo) -> ray.ObjectRef:
        """The learner's weights and normalizer statistics in the object store."""
        state = algo.network.state_dict()
        return ray.put({k: v.detach().cpu().numpy() for k, v in state.items()})

    def _next_ready(self, pending: dict, restarts: dict[int, int]) -> tuple[int, dict]:
        """Wait for the first of the pending calls to answer, restarting the workers of
        calls past their deadline; pop it and return (worker, chunk)."""
        while True:
            wait_s = max(0.0, min(d for _, d in pending.values()) - time.monotonic())
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=wait_s)
            if ready:
                k, _ = pending.pop(ready[0])
                return k, ray.get(ready[0])
            now = time.monotonic()   # the calls past their deadline: restart their workers
            for ref, (k, deadline) in list(pending.items()):
                if deadline <= now:
                    self._restart(k, restarts)
                    pending[ref] = (k, now + self.restart_timeout_s + self.sample_timeout_s)

    def collect(self, algo) -> tuple[int, dict[str, float]]:
        """An iteration's chunks of the algorithm's policy, ingested; returns the env steps
        they hold and the episode statistics."""
        self.start()
        if self.max_policy_lag is not None:
            return self._collect_async(algo)
        self.version += 1
        weights = self._weights(algo)
        now = time.monotonic()
        pending = {self._call(k, weights): (k, now + self.sample_timeout_s)
                   for k in range(self.num_workers)}
        results: dict[int, dict] = {}
        restarts: dict[int, int] = {}
        while pending:
            k, result = self._next_ready(pending, restarts)
            if result['version'] != self.version:   # defensive: a call answers its own
                self.dropped += 1
                pending[self._call(k, weights)] = (k, time.monotonic() + self.sample_timeout_s)
                continue
            self.restarts_seen += int(result['restarted'])
            results[k] = result
        return self._ingest(algo, [results[k] for k in range(self.num_workers)])

    def _collect_async(self, algo) -> tuple[int, dict[str, float]]:
        """The first num_workers chunks to arrive within the policy lag bound; every worker
        is left with a call of the current weights in flight, sampling during the update."""
        weights = self._weights(algo)
        busy = {k for k, _ in self._inflight.values()}
        for k in range(self.num_workers):
            if k not in busy:
                self._inflight[self._call(k, weights)] = (k, time.monotonic()
                                                          + self.sample_timeout_s)
        accepted: list[dict] = []
        while len(accepted) < self.num_workers:   # restarts count across iterations
            k, result = self._next_ready(self._inflight, self._restarts)
            self._restarts.pop(k, None)
            self._inflight[self._call(k, weights)] = (k, time.monotonic()
                                                      + self.sample_timeout_s)
            lag = self.version - result['version']
            if lag > self.max_policy_lag:
                self.stale += 1
                continue
            self.lags[lag] = self.lags.get(lag, 0) + 1
            self.restarts_seen += int(result['restarted'])
            accepted.append(result)
        self.version += 1   # the update that follows makes the learner's weights newer
        return self._ingest(algo, accepted)

    @staticmethod
    def _ingest(algo, chunks: list[dict]) -> tuple[int, dict[str, float]]:
        """Hand the chunks' data to the algorithm; their env steps and episode statistics."""
        algo.ingest([{key: torch.from_numpy(v) for key, v in r['data'].items()}
                     for r in chunks])
        return sum(r['steps'] for r in chunks), mean_by_key([r['stats'] for r in chunks])

    def close(self) -> None:
        """Stop the workers (a chunk still in flight is dropped, never counted)."""
        for worker in self.workers:
            ray.kill(worker, no_restart=True)
        self.workers = []
        self._inflight, self._restarts = {}, {}
