"""Rollout workers on a real local Ray: tagged chunks, exact step accounting, a worker killed
mid-rollout and a hung one replaced, SAC's asynchronous gathering; and the default path
never imports Ray."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest
import torch

ray = pytest.importorskip('ray')

from ray_setup import ENVS_PER_WORKER, sampler_and_algo, sampler_and_ppo, SMALL  # noqa: E402
from sim2real.algo_cfg import SACCfg  # noqa: E402
from sim2real.rl.ray_sampler import init_ray  # noqa: E402
from sim2real.tasks import get_task  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture(scope='module')
def local_ray():
    """One local Ray for the module: 2 CPUs, no dashboard, 256 MB object store."""
    os.environ.setdefault('RAY_AUTH_MODE', 'disabled')
    init_ray(None, num_cpus=2, object_store_bytes=256 * 2 ** 20)
    yield
    ray.shutdown()


def test_chunks_are_tagged_and_every_step_counted_once(local_ray):
    """Two iterations: each returns 2 x 16 envs x 8 steps, fills PPO's storage, and the
    update learns from it; the workers act with the weights of the version sent."""
    sampler, ppo = sampler_and_ppo(steps=8)
    try:
        for version in (1, 2):
            steps, stats = sampler.collect(ppo)
            assert steps == 2 * ENVS_PER_WORKER * 8
            assert sampler.version == version and ppo.storage.full
            before = ppo.actor_critic.actor[0].weight.clone()
            metrics = ppo.update()
            assert metrics['approx_kl'] >= 0.0
            assert not torch.equal(before, ppo.actor_critic.actor[0].weight)
        assert (sampler.dropped, sampler.hangs, sampler.restarts_seen) == (0, 0, 0)
        assert ppo.actor_critic.policy_normalizer.count == 2 * 2 * ENVS_PER_WORKER * 8
    finally:
        sampler.close()


def test_worker_killed_mid_rollout_is_restarted_and_its_chunk_recollected(local_ray):
    """SIGKILL one worker 0.5 s into a chunk of several seconds: Ray restarts it and
    retries the call; the iteration still holds exactly 2 x 16 x 3000 steps, one chunk of
    them from the restart."""
    sampler, ppo = sampler_and_ppo(steps=3000)
    try:
        victim = sampler.worker_pids()[0]
        threading.Timer(0.5, os.kill, (victim, signal.SIGKILL)).start()
        start = time.monotonic()
        steps, _ = sampler.collect(ppo)
        assert steps == 2 * ENVS_PER_WORKER * 3000
        assert sampler.restarts_seen == 1
        assert sampler.worker_pids()[0] != victim
        assert time.monotonic() - start < 60.0
        ppo.update()
        steps, _ = sampler.collect(ppo)   # the restarted worker serves the next version
        assert steps == 2 * ENVS_PER_WORKER * 3000 and sampler.version == 2
    finally:
        sampler.close()


def test_hung_worker_is_detected_by_the_sample_timeout_and_replaced(local_ray):
    """SIGSTOP one worker: after the 5 s sample timeout it is killed and restarted, its
    call retried; the chunk counts once."""
    sampler, ppo = sampler_and_ppo(steps=8, timeout_s=5.0)
    try:
        victim = sampler.worker_pids()[1]
        os.kill(victim, signal.SIGSTOP)
        steps, _ = sampler.collect(ppo)
        assert steps == 2 * ENVS_PER_WORKER * 8
        assert sampler.hangs == 1 and sampler.restarts_seen == 1
        assert sampler.worker_pids()[1] != victim
    finally:
        sampler.close()


def test_sac_gathers_asynchronously_within_the_policy_lag_bound(local_ray):
    """SAC's workers sample while the learner updates. With worker 1 stopped (SIGSTOP)
    worker 0 alone delivers both chunks of each iteration, so the learner is not held up;
    worker 1's chunk, sampled versions back, is dropped as stale once it arrives; every
    accepted chunk lags at most max_policy_lag = 1 update and counts once."""
    cfg = SACCfg(steps_per_env=4, batch_size=64, buffer_size=20_000, learning_starts=256,
                 policy=SMALL, max_policy_lag=1)
    sampler, sac = sampler_and_algo(cfg)
    chunk = 4 * ENVS_PER_WORKER
    total = 0
    try:
        for _ in range(3):
            steps, _ = sampler.collect(sac)
            sac.update()
            total += steps
        victim = sampler.worker_pids()[1]
        os.kill(victim, signal.SIGSTOP)
        start = time.monotonic()
        for _ in range(6):   # worker 1's call in flight now lags more with each iteration
            steps, _ = sampler.collect(sac)
            sac.update()
            assert steps == 2 * chunk
            total += steps
        assert time.monotonic() - start < 60.0, 'the learner waited for the stopped worker'
        stale = sampler.stale   # (a loaded machine may have let a chunk lag 2 before)
        os.kill(victim, signal.SIGCONT)
        deadline = time.monotonic() + 60.0
        while sampler.stale == stale and time.monotonic() < deadline:
            steps, _ = sampler.collect(sac)
            sac.update()
            total += steps
        assert sampler.stale > stale, 'the old chunk of the stopped worker was not dropped'
        assert max(sampler.lags) <= 1
        accepted = sum(sampler.lags.values())
        assert total == accepted * chunk == sac.buffer.added
        assert sac.gradient_steps > 0
        assert (sampler.hangs, sampler.restarts_seen) == (0, 0)
    finally:
        sampler.close()


def test_default_training_never_imports_ray(tmp_path):
    """A whole in-process train (no --workers) runs without Ray in sys.modules."""
    code = ('import sys\n'
            'from sim2real.cli.main import main\n'
            f"main(['train', 'quadrotor-hover', '--run-dir', {str(tmp_path)!r}, '--num-envs',"
            " '16', '--max-iterations', '1', '--threads', '1', '--no-progress'])\n"
            "assert 'ray' not in sys.modules, 'ray was imported'\n"
            "print('no ray')\n")
    proc = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert 'no ray' in proc.stdout


def test_train_with_workers_from_the_command_line(tmp_path):
    """`train --workers 2` (a local Ray of its own) trains, records workers and algo, and
    counts exactly iterations x envs x T steps; the run exports like any other."""
    env = dict(os.environ, RAY_AUTH_MODE='disabled')
    run = tmp_path / 'run'
    train = [sys.executable, '-m', 'sim2real.cli.main', 'train', 'quadrotor-hover',
             '--run-dir', str(run), '--workers', '2', '--num-envs', '32',
             '--max-iterations', '2', '--no-progress', '--json']
    proc = subprocess.run(train, capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    rollout = get_task('quadrotor-hover').train.ppo.num_steps_per_env
    assert (summary['workers'], summary['algo']) == (2, 'ppo')
    assert summary['env_steps'] == 2 * 32 * rollout
    proc = subprocess.run([sys.executable, '-m', 'sim2real.cli.main', 'export', str(run),
                           '--band-samples', '512', '--json'],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    odd_args = [str(tmp_path / 'odd') if arg == str(run) else arg for arg in train[:-6]]
    odd = subprocess.run(odd_args + ['--num-envs', '33', '--max-iterations', '1'],
                         capture_output=True, text=True, timeout=300, env=env)
    assert odd.returncode == 2 and 'do not split over 2 workers' in odd.stderr
