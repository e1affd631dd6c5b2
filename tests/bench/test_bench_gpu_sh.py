"""bench/gpu.sh refuses clearly, with distinct exit codes, what it cannot run on."""

import os
from pathlib import Path
import subprocess
import sys

SCRIPT = Path(__file__).resolve().parents[2] / 'bench' / 'gpu.sh'


def _run(**env) -> subprocess.CompletedProcess:
    """The script with extra environment variables, output captured."""
    return subprocess.run(['bash', str(SCRIPT)], env={**os.environ, **env}, text=True,
                          capture_output=True, timeout=120)


def test_missing_interpreter_exits_2():
    """No interpreter: exit 2 and a message naming it."""
    out = _run(PYTHON='/nonexistent/python3')
    assert out.returncode == 2
    assert "no Python interpreter '/nonexistent/python3'" in out.stderr


def test_no_cuda_device_exits_3():
    """Every package present (this venv) but torch sees no GPU: exit 3 before any bench."""
    out = _run(PYTHON=sys.executable, GPU_SH_DEVICE='cuda', CUDA_VISIBLE_DEVICES='')
    assert out.returncode == 3, out.stderr
    assert 'torch sees no CUDA device' in out.stderr
    assert 'env_vs_raw' not in out.stdout
