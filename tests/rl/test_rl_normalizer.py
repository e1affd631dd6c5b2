"""Tests of EmpiricalNormalizer statistics, clipping and freezing."""

import numpy as np
import torch

from sim2real.rl import EmpiricalNormalizer


def test_running_statistics_match_numpy_over_several_updates():
    """After batches of varying size, mean and variance equal numpy's over all samples."""
    rng = np.random.default_rng(0)
    norm = EmpiricalNormalizer(3)
    seen = []
    for size in (1, 7, 64, 3, 200):
        batch = rng.normal([1.0, -5.0, 100.0], [0.1, 2.0, 30.0], size=(size, 3))
        seen.append(batch)
        norm.update(torch.tensor(batch, dtype=torch.float32))
        data = np.concatenate(seen)
        np.testing.assert_allclose(norm.mean.numpy(), data.mean(axis=0), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(norm.var.numpy(), data.var(axis=0), rtol=1e-4, atol=1e-6)
        assert int(norm.count) == len(data)


def test_forward_standardizes_and_clips():
    """forward is (x - mean) / sqrt(var + eps), clipped to +-clip."""
    norm = EmpiricalNormalizer(2, eps=0.0, clip=3.0)
    norm.update(torch.tensor([[0.0, 10.0], [2.0, 30.0]]))
    # mean = [1, 20], var = [1, 100]
    out = norm(torch.tensor([[2.0, 0.0], [100.0, -1000.0]]))
    torch.testing.assert_close(out, torch.tensor([[1.0, -2.0], [3.0, -3.0]]))


def test_update_accepts_leading_dimensions():
    """A (T, N, D) batch counts as T * N samples."""
    norm = EmpiricalNormalizer(2)
    norm.update(torch.ones(4, 5, 2))
    assert int(norm.count) == 20
    torch.testing.assert_close(norm.mean, torch.ones(2))


def test_no_update_when_frozen_or_in_eval_mode():
    """freeze() and eval() both keep the statistics fixed; unfreeze() re-enables updates."""
    norm = EmpiricalNormalizer(2)
    norm.freeze()
    norm.update(torch.randn(10, 2))
    norm.unfreeze()
    norm.eval()
    norm.update(torch.randn(10, 2))
    assert int(norm.count) == 0
    torch.testing.assert_close(norm.mean, torch.zeros(2))
    norm.train()
    norm.update(torch.randn(10, 2))
    assert int(norm.count) == 10


def test_statistics_are_in_the_state_dict():
    """mean, var and count are buffers, saved and restored with the module."""
    norm = EmpiricalNormalizer(2)
    norm.update(torch.randn(10, 2) * 4.0 + 1.0)
    copy = EmpiricalNormalizer(2)
    copy.load_state_dict(norm.state_dict())
    assert set(norm.state_dict()) == {'mean', 'var', 'count'}
    x = torch.randn(5, 2)
    torch.testing.assert_close(copy(x), norm(x))
