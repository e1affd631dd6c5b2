"""sim2real.device: device scope, seeded generators and RNG state on the CPU."""

import pytest
import torch

from sim2real.device import device_scope, generator, get_rng_state, set_rng_state
from sim2real.training import build_env


def test_cpu_scope_changes_nothing():
    """On the CPU the scope is a no-op: factories keep allocating on the CPU."""
    with device_scope('cpu'):
        assert torch.zeros(2).device.type == 'cpu'


def test_generator_is_seeded_on_its_device():
    """Two generators with one seed draw the same numbers, on the device asked for."""
    a, b = generator('cpu', 7), generator('cpu', 7)
    assert a.device.type == 'cpu'
    assert torch.equal(torch.rand(5, generator=a), torch.rand(5, generator=b))


def test_rng_state_round_trip():
    """set_rng_state(get_rng_state()) replays the global generator's draws."""
    state = get_rng_state('cpu')
    first = torch.randn(4)
    set_rng_state(state, 'cpu')
    assert torch.equal(torch.randn(4), first)


def test_cuda_with_the_cpu_backend_is_refused():
    """--device cuda with backend mujoco names the backend to use instead."""
    with pytest.raises(ValueError, match='use --backend mjwarp'):
        build_env('quadrotor-hover', seed=0, num_envs=2, backend='mujoco', device='cuda')


@pytest.mark.skipif(torch.cuda.is_available(), reason='this machine has a CUDA device')
def test_cuda_without_a_gpu_is_refused():
    """--backend mjwarp --device cuda on a machine without CUDA: one clear error."""
    with pytest.raises(ValueError, match='torch sees no CUDA device'):
        build_env('quadrotor-hover', seed=0, num_envs=2, backend='mjwarp', device='cuda')
