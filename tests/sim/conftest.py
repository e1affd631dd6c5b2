"""Shared fixtures of the simulation tests: one torch thread, the shipped quadrotor URDF."""

import pytest
import torch


@pytest.fixture(autouse=True, scope='module')
def single_torch_thread():
    """Run each test module on one intra-op thread (tiny tensors, 2-core CI), then restore."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


@pytest.fixture(scope='session')
def quad_urdf(repo_root):
    """Path of the shipped Crazyflie-class URDF."""
    return repo_root / 'urdf' / 'quadrotor.urdf'
