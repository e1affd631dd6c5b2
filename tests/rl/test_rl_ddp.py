"""torchrun data-parallel learners (gloo, 2 ranks): identical replicas, pooled normalizer
statistics, a killed rank resumed bit-exactly by a relaunch and by torchrun's own restart."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from sim2real.rl.normalizer import EmpiricalNormalizer
from tests.mdp.test_mdp_env_state import assert_same_state

pytestmark = pytest.mark.slow

PROBE = Path(__file__).with_name('ddp_probe.py')
TIMEOUT_S = 240   # hard bound of every torchrun job (a hung collective must not hang CI)
ITERATIONS, ENVS_PER_RANK, STEPS_PER_ENV = 10, 128, 24   # rank 1 dies at 4 of them


def torchrun_env() -> dict:
    """Environment of a torchrun job in tests (no shared rendezvous store: restarts hang
    with it), with the source tree importable."""
    env = dict(os.environ, TORCH_DISABLE_SHARE_RDZV_TCP_STORE='1', OMP_NUM_THREADS='1')
    env['PYTHONPATH'] = os.pathsep.join(filter(None, [str(Path(__file__).parents[2]),
                                                      env.get('PYTHONPATH')]))
    return env


def torchrun(args: list[str], restarts: int = 0) -> list[str]:
    """The command line of a 2-rank torchrun job on this machine."""
    return [sys.executable, '-m', 'torch.distributed.run', '--standalone',
            '--nproc-per-node', '2', '--max-restarts', str(restarts), *args]


def train_cmd(run_dir: Path, *extra: str) -> list[str]:
    """`sim2real train` of quadrotor-hover as each rank runs it."""
    return ['-m', 'sim2real.cli.main', 'train', 'quadrotor-hover', '--run-dir', str(run_dir),
            '--seed', '0', '--num-envs', str(ENVS_PER_RANK), '--max-iterations',
            str(ITERATIONS), '--save-interval', '2', '--no-progress', '--threads', '1', *extra]


def start_job(cmd: list[str], out) -> subprocess.Popen:
    """Start a torchrun job in a process group of its own (so that it can be ended whole)."""
    return subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=torchrun_env(),
                            start_new_session=True)


def end_job(job: subprocess.Popen) -> None:
    """SIGKILL whatever is left of a job: torchrun and its ranks."""
    if job.poll() is None:
        os.killpg(job.pid, signal.SIGKILL)
        job.wait()


def run_job(cmd: list[str], log: Path) -> int:
    """Run a torchrun job to its end within TIMEOUT_S; its exit status."""
    with open(log, 'w') as out:
        job = start_job(cmd, out)
        try:
            return job.wait(timeout=TIMEOUT_S)
        finally:
            end_job(job)


def rank_pid(parent: int, rank: int) -> int | None:
    """The pid of a process below parent whose environment says RANK=rank."""
    for entry in Path('/proc').iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / 'stat').read_text()
            environ = (entry / 'environ').read_bytes().split(b'\0')
        except OSError:
            continue
        ppid = int(stat.rsplit(')', 1)[1].split()[1])
        if ppid == parent and f'RANK={rank}'.encode() in environ:
            return int(entry.name)
    return None


def kill_rank_after(cmd: list[str], run_dir: Path, log: Path, iteration: int) -> int:
    """Start a job, SIGKILL its rank 1 once the checkpoint of iteration exists, and return
    the job's exit status."""
    checkpoint = run_dir / 'checkpoints' / f'model_{iteration:06d}.pt'
    with open(log, 'w') as out:
        job = start_job(cmd, out)
        try:
            deadline = time.monotonic() + TIMEOUT_S
            while not checkpoint.exists():
                assert job.poll() is None, f'the job ended before {checkpoint.name}'
                assert time.monotonic() < deadline, f'no {checkpoint.name}'
                time.sleep(0.02)
            victim = rank_pid(job.pid, 1)
            assert victim is not None, 'rank 1 not found'
            os.kill(victim, signal.SIGKILL)
            return job.wait(timeout=TIMEOUT_S)
        finally:
            end_job(job)


def final_checkpoint(run_dir: Path) -> dict:
    """The last checkpoint of a run, without what depends on wall clock."""
    state = torch.load(run_dir / 'checkpoints' / f'model_{ITERATIONS:06d}.pt',
                       weights_only=True)
    state.pop('segments')
    state['history'] = [{k: v for k, v in entry.items() if not k.startswith('perf/')}
                        for entry in state['history']]
    return state


def test_replicas_stay_identical_and_normalizers_pool_the_ranks(tmp_path):
    """Two ranks on differently seeded envs end PPO and SAC with equal parameters, optimizer
    moments and normalizers; merged statistics equal those of all the data in one place."""
    rc = run_job(torchrun([str(PROBE), str(tmp_path)]), tmp_path / 'probe.log')
    assert rc == 0, (tmp_path / 'probe.log').read_text()[-3000:]
    r0, r1 = (torch.load(tmp_path / f'rank{r}.pt', weights_only=True) for r in (0, 1))

    pooled = EmpiricalNormalizer(3)
    for b0, b1 in zip(r0['batches'], r1['batches']):
        pooled.update(torch.cat([b0, b1]))
    everything = torch.cat([*r0['batches'], *r1['batches']]).double()
    for r in (r0, r1):
        assert int(r['norm_count']) == 5 + 8 + 5 + 8
        torch.testing.assert_close(r['norm_mean'], pooled.mean, rtol=1e-6, atol=1e-7)
        torch.testing.assert_close(r['norm_var'], pooled.var, rtol=1e-6, atol=1e-7)
        torch.testing.assert_close(r['norm_mean'].double(), everything.mean(0), rtol=1e-6,
                                   atol=1e-7)
        torch.testing.assert_close(r['norm_var'].double(), everything.var(0, unbiased=False),
                                   rtol=1e-6, atol=1e-7)

    for algo in ('ppo', 'sac'):
        assert not torch.allclose(r0[f'{algo}_obs'], r1[f'{algo}_obs']), \
            'the ranks stepped the same envs: their seeds must differ'
        assert_same_state(r0[f'{algo}_state'], r1[f'{algo}_state'], algo)
    assert r0['ppo_env_steps'] == 2 * 16 * 24 * 3   # both ranks' steps counted
    assert r0['sac_env_steps'] == 2 * 16 * 1 * 12
    assert r0['sac_state']['gradient_steps'] > 0   # SAC did learn (learning_starts=64)


def test_a_killed_rank_resumes_bit_exactly(tmp_path):
    """Rank 1 SIGKILLed after checkpoint 4: the job fails; relaunched with --resume, and
    restarted by torchrun itself (--max-restarts 1), it ends with the checkpoint of the
    uninterrupted job: model, optimizer, normalizers, counters, every rank's RNG and env
    states."""
    ref = tmp_path / 'ref'
    assert run_job(torchrun(train_cmd(ref)), tmp_path / 'ref.log') == 0, \
        (tmp_path / 'ref.log').read_text()[-3000:]
    summary = json.loads((ref / 'summary.json').read_text())
    assert summary['ranks'] == 2 and summary['num_envs'] == 2 * ENVS_PER_RANK
    assert summary['env_steps'] == ITERATIONS * 2 * ENVS_PER_RANK * STEPS_PER_ENV
    expected = final_checkpoint(ref)
    assert len(expected['ranks']) == 2

    killed = tmp_path / 'killed'
    rc = kill_rank_after(torchrun(train_cmd(killed)), killed, tmp_path / 'killed.log', 4)
    assert rc != 0 and not (killed / 'summary.json').exists()
    assert not (killed / 'checkpoints' / f'model_{ITERATIONS:06d}.pt').exists()
    rc = run_job(torchrun(train_cmd(killed, '--resume')), tmp_path / 'resumed.log')
    assert rc == 0, (tmp_path / 'resumed.log').read_text()[-3000:]
    assert_same_state(expected, final_checkpoint(killed))

    restarted = tmp_path / 'restarted'
    rc = kill_rank_after(torchrun(train_cmd(restarted), restarts=1), restarted,
                         tmp_path / 'restarted.log', 4)
    log = (tmp_path / 'restarted.log').read_text()
    assert rc == 0, log[-3000:]
    assert 'resuming from the last checkpoint' in log
    assert_same_state(expected, final_checkpoint(restarted))
