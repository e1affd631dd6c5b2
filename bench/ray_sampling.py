"""Ray rollout workers against in-process collection at the same total env count.

per_iteration: PPO on quadrotor-hover with the task's defaults, `num_envs` envs either
stepped in this process (the simulation on every core) or split over 2 Ray workers of one
core each (`sim2real train --workers 2`); the mean seconds per iteration (collection and
update) over `iterations` iterations after 2 warm-up ones, from the runner's history.

chunk_overhead: what a chunk's trip through Ray costs by its length. For T steps per env,
one PPO collection of 2 workers x `envs_per_worker` envs (weights into the object store,
two calls, the chunks back, ingested into the learner's storage) against the in-process
collector stepping the same 2 x `envs_per_worker` envs on every core with the same PPO;
the medians of `repeats` alternated collections, and the chunk's size in MB.
"""

from __future__ import annotations

import copy
import functools
import os
import statistics
import tempfile
import time

import torch

from bench.common import report
from sim2real.rl.algorithms import build_algorithm
from sim2real.rl.collector import Collector
from sim2real.rl.env import EnvSpec
from sim2real.rl.runner import Runner, RunnerCfg
from sim2real.tasks import get_task
from sim2real.training import build_env, edge_options

TASK = 'quadrotor-hover'
WORKERS = 2


def _seconds_per_iteration(runner: Runner, iterations: int) -> float:
    """Mean collection + update seconds of the iterations after 2 warm-up ones."""
    runner.learn(max_iterations=iterations + 2)
    entries = runner.history[2:]
    return statistics.mean(e['perf/collection_s'] + e['perf/learn_s'] for e in entries)


def per_iteration(num_envs: int = 2048, iterations: int = 10, seed: int = 0) -> dict:
    """Seconds per PPO iteration with Ray workers against in-process, same env count."""
    from sim2real.rl.ray_sampler import init_ray, RaySampler
    import ray
    train = copy.deepcopy(get_task(TASK).train)
    cfg = RunnerCfg(seed=seed, save_interval=10 ** 6, progress_bar=False,
                    learn_threads=train.learn_threads, act_threads=train.act_threads)
    out = {'task': TASK, 'num_envs': num_envs, 'workers': WORKERS, 'iterations': iterations}
    with tempfile.TemporaryDirectory() as run_dir:
        env = build_env(TASK, seed, num_envs, **edge_options(train))
        out['in_process_s'] = _seconds_per_iteration(
            Runner(env, train.algo_cfg, cfg, f'{run_dir}/local'), iterations)
    os.environ.setdefault('RAY_AUTH_MODE', 'disabled')
    init_ray(None, num_cpus=WORKERS)
    make_env = functools.partial(build_env, TASK, num_envs=num_envs // WORKERS,
                                 num_threads=1, **edge_options(train))
    sampler = RaySampler(make_env, WORKERS, train.algo_cfg, train.algo_cfg.rollout_steps,
                         seed)
    spec = EnvSpec(num_envs, env.num_actions, dict(env.obs_dims))
    try:
        with tempfile.TemporaryDirectory() as run_dir:
            out['ray_s'] = _seconds_per_iteration(
                Runner(spec, train.algo_cfg, cfg, run_dir, sampler=sampler), iterations)
    finally:
        sampler.close()
        ray.shutdown()
    out['ratio'] = out['ray_s'] / out['in_process_s']
    report('ray_vs_in_process', f"{out['ray_s']:.3f} s/iteration with {WORKERS} Ray workers, "
           f"{out['in_process_s']:.3f} s in-process ({num_envs} envs): "
           f"{out['ratio']:.3f}x (<= 1.1 wanted)")
    return out


def chunk_overhead(steps: tuple[int, ...] = (1, 4, 24, 96), envs_per_worker: int = 512,
                   repeats: int = 5, seed: int = 0) -> dict:
    """Seconds per collection through Ray against in-process, by chunk length."""
    from sim2real.rl.ray_sampler import init_ray, RaySampler
    import ray
    train = copy.deepcopy(get_task(TASK).train)
    num_envs = WORKERS * envs_per_worker
    env = build_env(TASK, seed, num_envs)
    spec = EnvSpec(num_envs, env.num_actions, dict(env.obs_dims))
    os.environ.setdefault('RAY_AUTH_MODE', 'disabled')
    init_ray(None, num_cpus=WORKERS)
    make_env = functools.partial(build_env, TASK, num_envs=envs_per_worker, num_threads=1)
    rows = []
    try:
        for t in steps:
            ppo_cfg = copy.deepcopy(train.ppo)
            ppo_cfg.num_steps_per_env = t
            ppo = build_algorithm(ppo_cfg, spec, torch.Generator().manual_seed(seed))
            sampler = RaySampler(make_env, WORKERS, ppo_cfg, t, seed)
            sampler.start(0)
            collector, obs = Collector(env), env.reset(seed=seed)
            local, remote = [], []
            for _ in range(repeats + 1):   # the first of each is a warm-up
                tic = time.perf_counter()
                obs, _ = collector.collect(ppo, obs)
                local.append(time.perf_counter() - tic)
                ppo.storage.clear()
                tic = time.perf_counter()
                sampler.collect(ppo)
                remote.append(time.perf_counter() - tic)
                ppo.storage.clear()
            sampler.close()
            # per step and env: both observation groups, actions, the Gaussian's mean and
            # std, value, log-probability, reward (float32), terminated, truncated (bool)
            floats = sum(env.obs_dims.values()) + 3 * env.num_actions + 3
            chunk_mb = t * num_envs * (4 * floats + 2) / 2 ** 20
            row = {'steps_per_env': t, 'chunk_mb': chunk_mb,
                   'in_process_s': statistics.median(local[1:]),
                   'ray_s': statistics.median(remote[1:])}
            row['overhead_ms'] = 1e3 * (row['ray_s'] - row['in_process_s'])
            row['ratio'] = row['ray_s'] / row['in_process_s']
            rows.append(row)
            report(f'ray_chunk[T={t}]', f"{row['ray_s'] * 1e3:.1f} ms through Ray, "
                   f"{row['in_process_s'] * 1e3:.1f} ms in-process ({num_envs} envs, "
                   f"{chunk_mb:.2f} MB): {row['ratio']:.2f}x")
    finally:
        ray.shutdown()
    return {'task': TASK, 'workers': WORKERS, 'envs_per_worker': envs_per_worker,
            'rows': rows}


if __name__ == '__main__':
    import json
    import logging
    import sys
    logging.basicConfig(level=logging.WARNING)
    torch.set_num_threads(1)
    result = {'per_iteration': per_iteration(), 'chunk_overhead': chunk_overhead()}
    sys.stdout.write(json.dumps(result) + '\n')
