"""The pose tracker model: samples held between refreshes, taken latency_ticks late, with the
noise deviations asked for; the same code on numpy (the HIL bridge) and torch (training)."""

import math

import numpy as np
import pytest
import torch

from sim2real import terms
from sim2real.sim.pose_tracker import PoseTracker


def _poses(t, n):
    """Pose number t of n envs: position (t, env, 0) [m], a turn of 0.1 t rad about z."""
    pos = np.stack([np.full(n, float(t)), np.arange(n, dtype=float), np.zeros(n)], axis=1)
    half = 0.05 * t
    quat = np.tile([math.cos(half), 0.0, 0.0, math.sin(half)], (n, 1))
    return pos, quat


@pytest.mark.parametrize('xp', [np, torch])
def test_latency_and_refresh_in_ticks(xp):
    """Env 0: every tick, 2 late; env 1: every 3rd tick, on time; env 2: every 2nd, 1 late.
    After tick t (poses 1..t pushed over pose 0) each holds the pose its schedule gives, and
    fresh marks exactly the ticks a sample was taken."""
    n = 3
    tracker = PoseTracker(n, max_latency_ticks=2, xp=xp,
                          dtype=torch.float64 if xp is torch else np.float64)
    ids = xp.arange(n)
    asarray = (lambda a: torch.as_tensor(a)) if xp is torch else np.asarray
    tracker.configure(ids, asarray([1, 3, 2]), asarray([2, 0, 1]), 0.0, 0.0)
    pos0, quat0 = _poses(0, n)
    tracker.reset(ids, asarray(pos0), asarray(quat0))
    zeros = asarray(np.zeros((n, 3)))
    held = {0: [], 1: [], 2: []}
    fresh = []
    for t in range(1, 8):
        pos, quat = _poses(t, n)
        tracker.update(asarray(pos), asarray(quat), zeros, zeros)
        for env in range(n):
            held[env].append(float(tracker.pos_m[env, 0]))
        fresh.append([bool(f) for f in tracker.fresh])
    assert held[0] == [0, 0, 1, 2, 3, 4, 5]          # every tick, 2 ticks late
    assert held[1] == [0, 0, 3, 3, 3, 6, 6]          # every 3rd tick, on time
    assert held[2] == [0, 1, 1, 3, 3, 5, 5]          # every 2nd tick, 1 late
    assert [f[1] for f in fresh] == [False, False, True, False, False, True, False]
    # the orientation travels with its position: env 0 holds pose 5's 0.5 rad turn
    assert float(tracker.quat_wxyz[0, 3]) == pytest.approx(math.sin(0.25))


def test_noise_has_the_asked_deviations():
    """4096 envs at std 1 cm and 0.05 rad: position errors have std 0.01 m within 3 %, and
    the orientation error's angle is the norm of a 3-D normal (mean 0.05 sqrt(8/pi))."""
    n = 4096
    gen = torch.Generator().manual_seed(0)
    tracker = PoseTracker(n, 0, torch, torch.float64)
    ids = torch.arange(n)
    tracker.configure(ids, 1, 0, 0.01, 0.05)
    pos = torch.zeros(n, 3, dtype=torch.float64)
    quat = torch.tensor([[1.0, 0.0, 0.0, 0.0]], dtype=torch.float64).repeat(n, 1)
    tracker.reset(ids, pos, quat)
    tracker.update(pos, quat, torch.randn(n, 3, generator=gen, dtype=torch.float64),
                   torch.randn(n, 3, generator=gen, dtype=torch.float64))
    assert float(tracker.pos_m.std()) == pytest.approx(0.01, rel=0.03)
    angle = terms.quat_angle_rad(tracker.quat_wxyz, quat)
    assert float(angle.mean()) == pytest.approx(0.05 * math.sqrt(8 / math.pi), rel=0.03)
    norms = torch.linalg.vector_norm(tracker.quat_wxyz, dim=1)
    torch.testing.assert_close(norms, torch.ones(n, dtype=torch.float64))


def test_refresh_below_one_tick_is_refused():
    """A refresh period of 0 ticks is refused with the reason."""
    tracker = PoseTracker(2, 0, np, np.float64)
    with pytest.raises(ValueError, match='refresh_ticks >= 1'):
        tracker.configure(np.arange(2), 0, 0, 0.0, 0.0)


def test_quaternion_helpers_match_mujoco():
    """quat_mul, quat_from_rotvec and quat_angle_rad agree with MuJoCo's mju functions."""
    import mujoco
    rng = np.random.default_rng(0)
    for _ in range(20):
        a, b = (q / np.linalg.norm(q) for q in rng.normal(size=(2, 4)))
        expected = np.zeros(4)
        mujoco.mju_mulQuat(expected, a, b)
        np.testing.assert_allclose(terms.quat_mul(a, b), expected, atol=1e-12)
        rotvec = rng.normal(size=3) * rng.choice([1e-6, 1.0])
        angle = np.linalg.norm(rotvec)
        expected = np.zeros(4)
        mujoco.mju_axisAngle2Quat(expected, rotvec / angle, angle)
        np.testing.assert_allclose(terms.quat_from_rotvec(rotvec), expected, atol=1e-12)
        turned = terms.quat_mul(terms.quat_from_rotvec(rotvec), a)
        assert terms.quat_angle_rad(turned, a) == pytest.approx(min(angle, 2 * np.pi - angle))
        # q and -q are one orientation
        assert terms.quat_angle_rad(-a, a) == pytest.approx(0.0, abs=1e-7)
