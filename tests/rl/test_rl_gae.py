"""Tests of compute_gae against hand-worked examples and closed forms."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from sim2real.rl import compute_gae


def test_gae_hand_example_with_done_in_the_middle():
    """T=3, N=1, episode ends after t=1: advantages and returns equal the hand computation."""
    # gamma = lam = 0.5; r = [1, 2, 3]; V = [0.5, 1.0, 1.5]; d = [0, 1, 0]; V(s_3) = 2.0
    # t=2: delta = 3 + 0.5 * 2.0 - 1.5 = 2.5;            A_2 = 2.5
    # t=1: done, no bootstrap: delta = 2 - 1.0 = 1.0;    A_1 = 1.0 (A_2 is not carried over)
    # t=0: delta = 1 + 0.5 * 1.0 - 0.5 = 1.0;            A_0 = 1.0 + 0.5 * 0.5 * 1.0 = 1.25
    # R = A + V = [1.75, 2.0, 4.0]
    rewards = torch.tensor([[1.0], [2.0], [3.0]])
    values = torch.tensor([[0.5], [1.0], [1.5]])
    dones = torch.tensor([[0.0], [1.0], [0.0]])
    advantages, returns = compute_gae(rewards, values, dones, torch.tensor([2.0]), 0.5, 0.5)
    torch.testing.assert_close(advantages, torch.tensor([[1.25], [1.0], [2.5]]))
    torch.testing.assert_close(returns, torch.tensor([[1.75], [2.0], [4.0]]))


def test_gae_environments_are_independent_and_bool_dones_work():
    """Each env column is computed on its own; bool dones give the same result as floats."""
    # env 0 repeats the hand example above; env 1: gamma = lam = 0.5, r = [0, 0, 4], V = 0,
    # no done, V(s_3) = 0: A = [0.25^2 * 4, 0.25 * 4, 4] = [0.25, 1.0, 4.0]
    rewards = torch.tensor([[1.0, 0.0], [2.0, 0.0], [3.0, 4.0]])
    values = torch.tensor([[0.5, 0.0], [1.0, 0.0], [1.5, 0.0]])
    dones = torch.tensor([[False, False], [True, False], [False, False]])
    last_values = torch.tensor([2.0, 0.0])
    advantages, _ = compute_gae(rewards, values, dones, last_values, 0.5, 0.5)
    torch.testing.assert_close(advantages, torch.tensor([[1.25, 0.25], [1.0, 1.0], [2.5, 4.0]]))
    float_advantages, _ = compute_gae(rewards, values, dones.float(), last_values, 0.5, 0.5)
    torch.testing.assert_close(advantages, float_advantages)


@settings(max_examples=25, deadline=None)
@given(steps=st.integers(1, 8), gamma=st.floats(0.0, 1.0), seed=st.integers(0, 2**16))
def test_gae_lambda_one_is_discounted_return(steps, gamma, seed):
    """With lam=1 and no dones, returns are the discounted reward sum bootstrapped by V(s_T)."""
    gen = torch.Generator().manual_seed(seed)
    rewards = torch.randn(steps, 3, generator=gen, dtype=torch.float64)
    values = torch.randn(steps, 3, generator=gen, dtype=torch.float64)
    last_values = torch.randn(3, generator=gen, dtype=torch.float64)
    _, returns = compute_gae(rewards, values, torch.zeros(steps, 3), last_values, gamma, 1.0)
    # R_t = sum_{k=t}^{T-1} gamma^(k-t) r_k + gamma^(T-t) V(s_T)
    for t in range(steps):
        expected = gamma ** (steps - t) * last_values
        for k in range(t, steps):
            expected = expected + gamma ** (k - t) * rewards[k]
        torch.testing.assert_close(returns[t], expected)


def test_gae_lambda_zero_is_td_error():
    """With lam=0 the advantage is the one-step TD error r_t + gamma V(s_t+1) - V(s_t)."""
    rewards = torch.tensor([[1.0], [1.0]])
    values = torch.tensor([[2.0], [3.0]])
    # A_0 = 1 + 0.9 * 3 - 2 = 1.7; A_1 = 1 + 0.9 * 4 - 3 = 1.6
    advantages, _ = compute_gae(rewards, values, torch.zeros(2, 1), torch.tensor([4.0]), 0.9, 0.0)
    torch.testing.assert_close(advantages, torch.tensor([[1.7], [1.6]]))


def test_gae_rejects_mismatched_shapes():
    """Shape mistakes raise ValueError instead of broadcasting silently."""
    with pytest.raises(ValueError):
        compute_gae(torch.zeros(3, 2), torch.zeros(3, 2), torch.zeros(3, 1), torch.zeros(2),
                    0.99, 0.95)
    with pytest.raises(ValueError):
        compute_gae(torch.zeros(3, 2), torch.zeros(3, 2), torch.zeros(3, 2), torch.zeros(3),
                    0.99, 0.95)
