"""Shared pytest configuration for the sim2real suite (markers live in setup.cfg)."""

from pathlib import Path

import pytest
import torch

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope='session')
def repo_root():
    """Return the root of the source checkout."""
    return REPO_ROOT


@pytest.fixture(autouse=True, scope='module')
def single_torch_thread():
    """Run each test module on one intra-op thread (tiny tensors, 2-core CI), then restore."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


@pytest.fixture
def make_env():
    """Factory of small single-threaded RLEnvs of a registered task: cfg edits via edit()."""
    from sim2real.mdp.env import RLEnv
    from sim2real.tasks import make_env_cfg

    def build(task='quadrotor-hover', num_envs=4, play=False, edit=None, **options):
        cfg = make_env_cfg(task, play=play, **options)
        cfg.num_envs = num_envs
        cfg.num_threads = 1
        if edit is not None:
            edit(cfg)
        return RLEnv(cfg)
    return build
