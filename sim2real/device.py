"""Where torch tensors of the env and the learner live: the CPU, or a CUDA device.

With the ``mjwarp`` backend on CUDA the simulation state is already on the GPU; the env's
terms, the managers and the learner then allocate there too. Code creates tensors without
naming a device and runs inside ``device_scope``, which makes the device the default of
torch's factory functions (``torch.zeros``, ``torch.tensor``, ``torch.as_tensor``...).
On the CPU the scope does nothing (a torch function mode costs time on every op).
"""

from __future__ import annotations

import contextlib
import functools

import torch


def device_scope(device: str | torch.device):
    """A context in which device is the default device of torch's factory functions."""
    device = torch.device(device)
    if device.type == 'cpu':
        return contextlib.nullcontext()
    return device


def on_device(method):
    """Run a method of an object with a ``device`` attribute inside its device_scope."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        with device_scope(self.device):
            return method(self, *args, **kwargs)
    return wrapper


def generator(device: str | torch.device, seed: int) -> torch.Generator:
    """A seeded random generator on device (sampling requires generator and output to match)."""
    return torch.Generator(device=torch.device(device)).manual_seed(seed)


def get_rng_state(device: str | torch.device) -> torch.Tensor:
    """State of torch's global generator that samples on device (CPU or that CUDA device)."""
    device = torch.device(device)
    if device.type == 'cuda':
        return torch.cuda.get_rng_state(device)
    return torch.get_rng_state()


def set_rng_state(state: torch.Tensor, device: str | torch.device) -> None:
    """Restore the state get_rng_state returned for the same device."""
    device = torch.device(device)
    if device.type == 'cuda':
        torch.cuda.set_rng_state(state, device)
    else:
        torch.set_rng_state(state)


def tree_to(value, device: str | torch.device):
    """value with every tensor in its dicts, lists and tuples moved to device (no copy of
    those already there)."""
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, dict):
        return {key: tree_to(item, device) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(tree_to(item, device) for item in value)
    return value


def to_floats(values: dict[str, torch.Tensor | float]) -> dict[str, float]:
    """Python floats of scalar tensors (and floats), copied to the host in one transfer.

    Each .item() of a CUDA tensor waits for the device; a dict of episode statistics
    converted one value at a time waited once per entry.
    """
    tensors = {k: v for k, v in values.items() if isinstance(v, torch.Tensor)}
    if tensors:   # float64 holds every float32 exactly: the same Python floats as .item()
        stacked = torch.stack([v.reshape(()).to(torch.float64) for v in tensors.values()])
        tensors = dict(zip(tensors, stacked.tolist()))
    return {k: tensors.get(k, v) for k, v in values.items()}
