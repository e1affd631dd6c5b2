"""Replay memory: n-step targets computed by hand, the ring's overwrite order, sampling."""

from __future__ import annotations

import pytest
import torch

from sim2real.rl.replay import NStepWindow, ReplayBuffer, Transitions

GAMMA = 0.5


def _step(t: int, rewards, terminated, truncated) -> dict[str, torch.Tensor]:
    """A step of 3 envs whose observations encode the step index t (obs = t, next = t + 1;
    an ended episode's next observation is -(t + 1), its last one)."""
    terminated = torch.tensor(terminated)
    done = terminated | torch.tensor(truncated)
    nxt = torch.where(done, -(t + 1.0), t + 1.0)[:, None].repeat(1, 2)
    return {'obs_policy': torch.full((3, 2), float(t)), 'obs_critic': torch.full((3, 2), t),
            'actions': torch.full((3, 1), float(t)), 'rewards': torch.tensor(rewards),
            'terminated': terminated, 'done': done, 'next_policy': nxt, 'next_critic': nxt}


def test_three_step_targets_by_hand():
    """Env 0 runs on: R = 1 + 0.5 * 2 + 0.25 * 4 = 3, discount 0.125, s' after step 2.
    Env 1 terminates at step 1: R = 1 + 0.5 * 2 = 2, discount 0. Env 2 times out at step 0:
    R = 1, discount 0.5, s' its last observation (-1)."""
    window = NStepWindow(3, GAMMA)
    assert window.push(_step(0, [1.0, 1.0, 1.0], [False] * 3, [False, False, True])) is None
    assert window.push(_step(1, [2.0, 2.0, 8.0], [False, True, False], [False] * 3)) is None
    out = window.push(_step(2, [4.0, 16.0, 32.0], [False] * 3, [False] * 3))
    torch.testing.assert_close(out.returns, torch.tensor([3.0, 2.0, 1.0]))
    torch.testing.assert_close(out.discounts, torch.tensor([0.125, 0.0, 0.5]))
    torch.testing.assert_close(out.next_policy[:, 0], torch.tensor([3.0, -2.0, -1.0]))
    torch.testing.assert_close(out.obs_policy[:, 0], torch.zeros(3))
    # the next push completes the transitions that start at step 1
    out = window.push(_step(3, [1.0, 1.0, 1.0], [False] * 3, [False] * 3))
    torch.testing.assert_close(out.returns, torch.tensor([2.0 + 2.0 + 0.25, 2.0, 8 + 16 + 0.25]))
    torch.testing.assert_close(out.discounts, torch.tensor([0.125, 0.0, 0.125]))


def test_one_step_window_is_the_plain_target():
    """n = 1: R = r, discount gamma (0 when terminated), s' the step's next observation."""
    window = NStepWindow(1, GAMMA)
    out = window.push(_step(0, [1.0, 2.0, 3.0], [False, True, False], [False, False, True]))
    torch.testing.assert_close(out.returns, torch.tensor([1.0, 2.0, 3.0]))
    torch.testing.assert_close(out.discounts, torch.tensor([0.5, 0.0, 0.5]))
    torch.testing.assert_close(out.next_policy[:, 0], torch.tensor([1.0, -1.0, -1.0]))


def _batch(values) -> Transitions:
    """Transitions whose every field holds the given value per row."""
    v = torch.tensor(values, dtype=torch.float32)
    return Transitions(v[:, None], v[:, None].repeat(1, 2), v[:, None], v, v, v[:, None],
                       v[:, None].repeat(1, 2))


def test_ring_keeps_the_newest_and_samples_only_held_rows():
    """Capacity 5: after 3 + 4 transitions the buffer holds 2..6, sampling returns only them."""
    buffer = ReplayBuffer(5, 1, 2, 1)
    buffer.add(_batch([0, 1, 2]))
    assert buffer.size == 3
    sample = buffer.sample(200, torch.Generator().manual_seed(0))
    assert set(sample.returns.tolist()) == {0.0, 1.0, 2.0}
    buffer.add(_batch([3, 4, 5, 6]))
    assert (buffer.size, buffer.added) == (5, 7)
    sample = buffer.sample(500, torch.Generator().manual_seed(0))
    assert set(sample.returns.tolist()) == {2.0, 3.0, 4.0, 5.0, 6.0}
    torch.testing.assert_close(sample.obs_critic[:, 1], sample.returns)
    with pytest.raises(ValueError, match='exceeds the replay capacity'):
        buffer.add(_batch(list(range(6))))


def test_empty_buffer_refuses_to_sample():
    """Sampling before anything was added is an error, not zeros."""
    with pytest.raises(RuntimeError, match='empty'):
        ReplayBuffer(4, 1, 1, 1).sample(2, torch.Generator())
