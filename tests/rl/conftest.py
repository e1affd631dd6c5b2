"""Shared fixtures of the RL tests."""

import pytest
import torch


@pytest.fixture(autouse=True, scope='module')
def single_torch_thread():
    """Run each test module on one intra-op thread (tiny networks, 2-core CI), then restore."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)
