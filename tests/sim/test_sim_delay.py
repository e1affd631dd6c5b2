"""Per-env delay buffer: outputs lag pushes by the set number of ticks, resets fill history."""

from collections import deque

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from sim2real.sim.delay import DelayBuffer


def test_delays_zero_one_two():
    """With delays (0, 1, 2) env k reads the value pushed k ticks ago."""
    buf = DelayBuffer(3, (2,), 2, np, np.float64)
    buf.set_delay(np.arange(3), np.array([0, 1, 2]))
    for tick in range(1, 5):
        buf.push(np.full((3, 2), float(tick)))
        expected = [tick, max(tick - 1, 0), max(tick - 2, 0)]   # zeros before the first push
        np.testing.assert_array_equal(buf.delayed(), np.repeat(np.array(expected)[:, None], 2, 1))


def test_reset_fills_history_of_given_envs():
    """reset([1], 7) makes env 1 (delay 2) read 7 until its third push; env 0 is untouched."""
    buf = DelayBuffer(2, (), 2, np, np.float64)
    buf.set_delay(np.arange(2), 2)
    for tick in (1.0, 2.0, 3.0):
        buf.push(np.full(2, tick))
    buf.reset(np.array([1]), 7.0)
    np.testing.assert_array_equal(buf.delayed(), [1.0, 7.0])
    buf.push(np.full(2, 4.0))
    np.testing.assert_array_equal(buf.delayed(), [2.0, 7.0])
    buf.push(np.full(2, 5.0))
    np.testing.assert_array_equal(buf.delayed(), [3.0, 7.0])
    buf.push(np.full(2, 6.0))
    np.testing.assert_array_equal(buf.delayed(), [4.0, 4.0])


def test_reset_with_per_env_values():
    """reset(ids, values (len(ids), *shape)) fills each env's history with its own row."""
    buf = DelayBuffer(3, (2,), 1, torch, torch.float32)
    buf.set_delay(torch.arange(3), 1)
    buf.reset(torch.tensor([0, 2]), torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
    assert buf.delayed().tolist() == [[1.0, 2.0], [0.0, 0.0], [3.0, 4.0]]


def test_delay_out_of_range_raises():
    """A delay beyond max_delay_ticks or below zero is refused."""
    buf = DelayBuffer(2, (1,), 2, np, np.float32)
    with pytest.raises(ValueError, match=r'\[0, 2\]'):
        buf.set_delay(np.arange(2), 3)
    with pytest.raises(ValueError):
        buf.set_delay(np.array([0]), -1)


def test_zero_max_delay_is_passthrough():
    """max_delay_ticks 0: delayed() is the latest push, as a copy of the history."""
    buf = DelayBuffer(2, (3,), 0, torch, torch.float64)
    values = torch.rand(2, 3, dtype=torch.float64)
    buf.push(values)
    out = buf.delayed()
    assert torch.equal(out, values)
    out += 1.0
    assert torch.equal(buf.delayed(), values)


OPS = st.lists(st.one_of(
    st.tuples(st.just('push'), st.lists(st.integers(-50, 50), min_size=3, max_size=3)),
    st.tuples(st.just('delay'), st.integers(0, 2), st.integers(0, 3)),
    st.tuples(st.just('reset'), st.integers(0, 2), st.integers(-9, 9)),
), max_size=40)


@settings(max_examples=60, deadline=None)
@given(ops=OPS)
def test_matches_deque_reference(ops):
    """Random push / set_delay / reset sequences read as per-env deques do, numpy and torch."""
    max_delay = 3
    refs = [deque([0] * (max_delay + 1), maxlen=max_delay + 1) for _ in range(3)]
    delays = [0, 0, 0]
    bufs = [DelayBuffer(3, (), max_delay, np, np.int64),
            DelayBuffer(3, (), max_delay, torch, torch.int64)]
    for op in ops:
        if op[0] == 'push':
            for ref, value in zip(refs, op[1]):
                ref.append(value)
            for buf in bufs:
                buf.push(buf.xp.asarray(op[1], dtype=buf.xp.int64))
        elif op[0] == 'delay':
            delays[op[1]] = op[2]
            for buf in bufs:
                buf.set_delay(buf.xp.asarray([op[1]]), op[2])
        else:
            refs[op[1]].extend([op[2]] * (max_delay + 1))
            for buf in bufs:
                buf.reset(buf.xp.asarray([op[1]]), op[2])
        expected = [ref[-1 - d] for ref, d in zip(refs, delays)]
        for buf in bufs:
            assert np.asarray(buf.delayed()).tolist() == expected
