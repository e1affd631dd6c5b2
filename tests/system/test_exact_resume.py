"""A `sim2real train` run SIGKILLed at any moment and resumed ends bit-identical to the
uninterrupted run of the same seed: real CLI processes on a tiny quadrotor-hover run."""

from __future__ import annotations

import json
from pathlib import Path
import signal
import subprocess
import sys

import pytest
import torch

TIMEOUT_S = 300
DRIVER = Path(__file__).with_name('kill_driver.py')
ENVS, ITERATIONS, STEPS_PER_ENV = 16, 3, 24
# phase: the driver's call count at which it kills; each kill lands in iteration 2, after
# checkpoint 1: the 10th env step of its rollout, its PPO update after two minibatches, or
# halfway through writing checkpoint 2
KILLS = {'collect': STEPS_PER_ENV + 10, 'update': 2, 'save': 2}
WALL_KEYS = ('wall_s', 'steps_per_s', 'segments')


def train_args(run_dir: Path) -> list[str]:
    """The run every process of this test trains (each checkpoint kept)."""
    return ['train', 'quadrotor-hover', '--run-dir', str(run_dir), '--seed', '3',
            '--num-envs', str(ENVS), '--max-iterations', str(ITERATIONS),
            '--save-interval', '1', '--threads', '1', '--no-progress']


def start(command: list[str], cwd: Path) -> subprocess.Popen:
    """A background process with its output captured."""
    return subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def finish(proc: subprocess.Popen) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of a process, waited for."""
    out, err = proc.communicate(timeout=TIMEOUT_S)
    return proc.returncode, out, err


def tensors(value, where: str = '') -> dict[str, torch.Tensor]:
    """Every tensor of a nested checkpoint, by path."""
    if isinstance(value, torch.Tensor):
        return {where: value}
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(
        value, (list, tuple)) else ()
    out = {}
    for key, item in items:
        out.update(tensors(item, f'{where}/{key}'))
    return out


def bits(t: torch.Tensor) -> torch.Tensor:
    """The tensor's bytes, so that NaN equals NaN."""
    return t.reshape(-1).view(torch.uint8) if t.dtype != torch.bool else t


def training_figures(entries) -> list[dict]:
    """History entries without the wall-clock timings."""
    return [{k: v for k, v in e.items() if not k.startswith('perf/')} for e in entries]


@pytest.fixture(scope='module')
def runs(tmp_path_factory) -> dict:
    """The uninterrupted run and, per kill phase, a run killed there and resumed: their
    run dirs and the resumed processes' stderr. The four first runs go in parallel, then
    the three resumes."""
    root = tmp_path_factory.mktemp('exact_resume')
    dirs = {name: root / name for name in ('full', *KILLS)}
    procs = {'full': start([sys.executable, '-m', 'sim2real.cli.main',
                            *train_args(dirs['full'])], root)}
    for phase, n in KILLS.items():
        procs[phase] = start([sys.executable, str(DRIVER), phase, str(n),
                              *train_args(dirs[phase])], root)
    killed = {}
    for name, proc in procs.items():
        code, _, err = finish(proc)
        assert code == (0 if name == 'full' else -signal.SIGKILL), f'{name}: {code}\n{err}'
        killed[name] = sorted(p.name for p in (dirs[name] / 'checkpoints').iterdir())
    resumed = {phase: start([sys.executable, '-m', 'sim2real.cli.main',
                             *train_args(dirs[phase]), '--resume'], root) for phase in KILLS}
    stderr = {}
    for phase, proc in resumed.items():
        code, _, stderr[phase] = finish(proc)
        assert code == 0, f'{phase} resume: {code}\n{stderr[phase]}'
    return {'dirs': dirs, 'killed': killed, 'stderr': stderr}


@pytest.mark.slow
@pytest.mark.parametrize('phase', list(KILLS))
def test_killed_and_resumed_run_ends_bit_identical(runs, phase):
    """Killed during collection, during an update or during a save, then resumed: the final
    checkpoint equals the uninterrupted run's tensor for tensor (model, optimizer, RNG and
    env state), and history and summary agree on every training figure."""
    dirs = runs['dirs']
    left = runs['killed'][phase]
    if phase == 'save':   # the half-written checkpoint 2, never renamed into place
        assert len(left) == 2 and left[0].startswith('.model_000002.pt.'), left
    assert left[-1] == 'model_000001.pt' and len(left) == 1 + (phase == 'save'), left
    assert 'resumed from' in runs['stderr'][phase] and 'not end exactly' not in (
        runs['stderr'][phase])
    name = f'checkpoints/model_{ITERATIONS:06d}.pt'
    full = torch.load(dirs['full'] / name, map_location='cpu', weights_only=True)
    resumed = torch.load(dirs[phase] / name, map_location='cpu', weights_only=True)
    a, b = tensors(full), tensors(resumed)
    assert a.keys() == b.keys()
    differ = [k for k in a
              if a[k].dtype != b[k].dtype or not torch.equal(bits(a[k]), bits(b[k]))]
    assert [k for k in differ if k.startswith('/model/')] == []   # the policy first
    assert differ == []
    assert any(k.startswith('/env_state/scene/backend') for k in a)
    assert training_figures(full['history']) == training_figures(resumed['history'])
    assert not list(dirs[phase].rglob('*.tmp'))


@pytest.mark.slow
def test_summary_counts_the_wall_time_of_every_segment(runs):
    """The resumed run's summary.json sums wall_s over its two segments (0-1, killed; 1-3),
    gives steps_per_s over that total, and agrees with the uninterrupted run elsewhere."""
    dirs = runs['dirs']
    full = json.loads((dirs['full'] / 'summary.json').read_text())
    for phase in KILLS:
        summary = json.loads((dirs[phase] / 'summary.json').read_text())
        segments = summary['segments']
        assert [(s['start_iteration'], s['end_iteration']) for s in segments] == [(0, 1), (1, 3)]
        assert summary['wall_s'] == pytest.approx(sum(s['wall_s'] for s in segments))
        assert summary['steps_per_s'] == pytest.approx(
            ITERATIONS * ENVS * STEPS_PER_ENV / summary['wall_s'])
        assert all(s['wall_s'] > 0 for s in segments)
        assert {k: v for k, v in summary.items() if k not in WALL_KEYS} == {
            k: v for k, v in full.items() if k not in WALL_KEYS}
    assert [(s['start_iteration'], s['end_iteration']) for s in full['segments']] == [(0, 3)]
