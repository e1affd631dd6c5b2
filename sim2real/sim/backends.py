"""The simulation backends by name, and which device each runs on.

A module of its own above `backend.py` and `mjwarp.py`, so that neither imports the other.
"""

from __future__ import annotations

import mujoco
import torch

from sim2real.sim.backend import FloatingBaseBackend, MujocoBatchBackend
from sim2real.sim.mjwarp import MjwarpBackend

BACKENDS = ('mujoco', 'mjwarp')
"""Backend names, as `--backend` takes them."""


def check_backend_device(backend: str, device: str) -> None:
    """Raise ValueError, saying what to use instead, if backend cannot run on device."""
    if backend not in BACKENDS:
        raise ValueError(f'unknown backend "{backend}", expected one of {BACKENDS}')
    kind = torch.device(device).type
    if backend == 'mujoco' and kind != 'cpu':
        raise ValueError(f'backend "mujoco" runs on the CPU, not on "{device}"; '
                         'use --backend mjwarp for a GPU')
    if kind == 'cuda' and not torch.cuda.is_available():
        raise ValueError(f'device "{device}": torch sees no CUDA device')


def make_backend(model: mujoco.MjModel, num_envs: int, backend: str = 'mujoco',
                 device: str = 'cpu', num_threads: int = 0) -> FloatingBaseBackend:
    """The simulation backend called backend ('mujoco' or 'mjwarp') on device."""
    check_backend_device(backend, device)
    if backend == 'mujoco':
        return MujocoBatchBackend(model, num_envs, num_threads)
    return MjwarpBackend(model, num_envs, device)
