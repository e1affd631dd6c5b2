"""bench.run checks its arguments before it starts minutes of benchmarks."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_unknown_train_task_is_refused_first():
    """A misspelt --train-tasks entry: exit 2 with a message naming it and the registered
    tasks, before any benchmark has run."""
    out = subprocess.run([sys.executable, '-m', 'bench.run', '--train-tasks',
                          'quadrotor-hover,quadrotor-trak'], cwd=ROOT, text=True,
                         capture_output=True, timeout=120)
    assert out.returncode == 2
    assert "unknown task(s) ['quadrotor-trak']" in out.stderr
    assert 'quadrotor-track' in out.stderr
    assert 'env_vs_raw' not in out.stdout + out.stderr
