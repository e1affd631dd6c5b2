"""Shared helpers of the benchmarks: timing, result lines, the JSON file."""

from __future__ import annotations

import json
import logging
import platform
import sys
import time
from pathlib import Path

import torch

log = logging.getLogger('bench')
OUT_DIR = Path(__file__).resolve().parent / 'out'


def timed(fn, repeats: int, warmup: bool = True) -> float:
    """Seconds per call of fn, over repeats calls (after one warm-up call unless told not)."""
    if warmup:
        fn()
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    return (time.perf_counter() - start) / repeats


def report(name: str, line: str) -> None:
    """Print one result line a reader can compare across runs."""
    sys.stdout.write(f'{name:28s} {line}\n')
    sys.stdout.flush()


def machine() -> dict:
    """What the figures were measured on."""
    return {'processor': platform.processor() or platform.machine(),
            'python': platform.python_version(), 'torch': torch.__version__,
            'torch_threads': torch.get_num_threads(), 'date': time.strftime('%Y-%m-%d')}


def write_results(results: dict, ratios: dict, path: Path | None = None) -> Path:
    """Write raw figures and the flat ratios map to bench/out/results.json."""
    path = path or OUT_DIR / 'results.json'
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {'machine': machine(), 'ratios': ratios, 'results': results}
    tmp = path.with_suffix('.tmp')
    tmp.write_text(json.dumps(payload, indent=2, sort_keys=True))
    tmp.replace(path)
    return path
