"""sim2real.device: device scope, seeded generators and RNG state on the CPU."""

import pytest
import torch

from sim2real.device import device_scope, generator, get_rng_state, set_rng_state, to_floats
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


def test_to_floats_matches_item_and_keeps_order():
    """Scalar tensors of any float dtype become the floats .item() gives, in key order;
    plain floats pass through."""
    values = {'a': torch.tensor(0.1, dtype=torch.float32), 'b': 2.5,
              'c': torch.tensor([1.0 / 3.0], dtype=torch.float64), 'd': torch.tensor(7)}
    out = to_floats(values)
    assert list(out) == ['a', 'b', 'c', 'd']
    assert out == {'a': values['a'].item(), 'b': 2.5, 'c': 1.0 / 3.0, 'd': 7.0}
    assert out['a'] != 0.1   # the float32 value, not the decimal: nothing was rounded twice
    assert to_floats({}) == {} and to_floats({'x': 1.0}) == {'x': 1.0}
