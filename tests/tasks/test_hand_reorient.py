"""hand-reorient on real physics: goals at least 90 degrees from the cube, reached goals
counted and replaced, the goal timeout and the cap on successes, the metrics eval reports,
the tracker's latency in the policy's observation and the cube's relabelled start."""

import math

import pytest
import torch

from sim2real import terms
from sim2real.tasks.hand.reorient_mdp import CUBE_SYMMETRIES

DT_S = 0.05


def _pin_tracker(refresh, latency):
    """A cfg edit pinning the tracker's refresh period and latency [ticks], without the
    policy's observation delay."""
    def edit(cfg):
        cfg.observations['policy'].delay_ticks = (0, 0)
        cfg.scene.params['tracker_refresh_ticks'] = (refresh, refresh)
        cfg.scene.params['tracker_latency_ticks'] = (latency, latency)
    return edit


def test_goals_are_at_least_90_degrees_from_the_cube_and_spread(make_env):
    """256 envs: every first goal is >= pi/2 from the cube's start; redrawn for 256 random
    cube orientations, >= pi/2 too, and the goals' axes spread over the sphere (mean of
    the unit rotation axes within 0.15 of zero)."""
    env = make_env('hand-reorient', num_envs=256, play=True)
    env.reset(seed=3)
    goal = env.command('goal')
    start = terms.quat_angle_rad(env.scene.cube_quat_w, goal.quat_w)
    assert float(start.min()) >= math.pi / 2
    cube = torch.randn(256, 4, generator=torch.Generator().manual_seed(1))
    cube = cube / torch.linalg.vector_norm(cube, dim=1, keepdim=True)
    goal.draw(torch.arange(256), cube)
    assert float(terms.quat_angle_rad(cube, goal.quat_w).min()) >= math.pi / 2
    vec = goal.quat_w[:, 1:] * torch.sign(goal.quat_w[:, :1])
    axes = vec / torch.linalg.vector_norm(vec, dim=1, keepdim=True)
    assert float(torch.linalg.vector_norm(axes.mean(dim=0))) < 0.15


def test_a_reached_goal_is_counted_rewarded_and_replaced(make_env):
    """After 5 steps (the cube settles on the palm within 3), the goal set to the cube's
    orientation: the next step reaches it (error < 0.1 rad), counts one success, pays 250 x
    0.05 s on the goal term, and draws a goal >= pi/2 away."""
    env = make_env('hand-reorient', num_envs=4, play=True)
    env.reset(seed=0)
    for _ in range(5):
        env.step(torch.zeros(4, 16))
    goal = env.command('goal')
    goal.quat_w[:2] = env.scene.cube_quat_w[:2]
    env.step(torch.zeros(4, 16))
    assert goal.reached.tolist() == [True, True, False, False]
    assert goal.successes.tolist() == [1, 1, 0, 0]
    assert float(goal.error_rad[:2].max()) < 0.1
    sums = env.rewards.episode_sums['goal']
    assert sums[:2].tolist() == pytest.approx([250 * DT_S] * 2)
    assert sums[2:].tolist() == [0.0, 0.0]
    assert float(terms.quat_angle_rad(env.scene.cube_quat_w[:2], goal.quat_w[:2]).min()
                 ) >= math.pi / 2


def test_fifty_goals_end_the_episode_with_the_metrics(make_env):
    """5 steps to settle, then every step's goal set to the cube's orientation: the 50th
    success ends the episode as a truncation; eval's metrics read 50 consecutive successes in
    55 x 0.05 s = 1090.9 goals per minute, no drop, success."""
    env = make_env('hand-reorient', num_envs=2, play=True)
    env.reset(seed=0)
    for _ in range(5):
        env.step(torch.zeros(2, 16))
    goal = env.command('goal')
    for step in range(50):
        goal.quat_w[:] = env.scene.cube_quat_w
        _, _, terminated, truncated, extras = env.step(torch.zeros(2, 16))
        if step < 49:
            assert not truncated.any()
    assert truncated.all() and not terminated.any()
    values = env.metrics.last_values
    assert values['consecutive_successes'].tolist() == [50.0, 50.0]
    assert values['goals_per_minute'].tolist() == pytest.approx([60 * 50 / 2.75] * 2)
    assert values['drop_rate'].tolist() == [0.0, 0.0]
    assert env.metrics.last_success.all()
    assert extras['log']['termination/max_successes'] == 1.0


def test_eight_seconds_without_a_goal_end_the_episode(make_env):
    """The hand still and the goal far: 160 steps (8 s) end the episode as a truncation by
    the goal timeout with 0 goals per minute, not a success."""
    env = make_env('hand-reorient', num_envs=2, play=True)
    env.reset(seed=0)
    for step in range(160):
        _, _, terminated, truncated, extras = env.step(torch.zeros(2, 16))
        if step < 159:
            assert not (terminated | truncated).any()
    assert truncated.all()
    assert extras['log']['termination/goal_timeout'] == 1.0
    assert env.metrics.last_values['goals_per_minute'].tolist() == [0.0, 0.0]
    assert not env.metrics.last_success.any()


def test_the_policy_sees_the_cube_through_the_late_tracker(make_env):
    """Tracker pinned at every tick, 2 ticks late (play: no noise; no observation delay):
    the policy's tracked position (x 10) is the cube's exact position of 2 steps before; at
    every 2nd tick, on time, it changes only every second step."""
    env = make_env('hand-reorient', num_envs=2, play=True, edit=_pin_tracker(1, 2))
    env.reset(seed=0)
    scene = env.scene
    gen = torch.Generator().manual_seed(0)
    past = []
    for _ in range(6):
        obs = env.step(torch.rand(2, 16, generator=gen) * 2 - 1)[0]
        past.append(scene.cube_pos_rel_m().clone())
    torch.testing.assert_close(obs['policy'][:, 96:99], 10.0 * past[-3])
    assert not torch.allclose(past[-3], past[-1])
    env = make_env('hand-reorient', num_envs=2, play=True, edit=_pin_tracker(2, 0))
    env.reset(seed=0)
    seen = [env.step(torch.rand(2, 16, generator=gen) * 2 - 1)[0]['policy'][:, 96:99].clone()
            for _ in range(6)]
    changed = [not torch.equal(a, b) for a, b in zip(seen, seen[1:])]
    assert changed == [True, False, True, False, True]


def test_the_cube_starts_relabelled_by_its_symmetries(make_env):
    """64 resets: each cube's orientation is one of its 24 symmetries turned at most 0.2 rad
    about the palm normal (the geometry face-up as hand-rotate places it), and the starts
    cover at least 15 of the 24."""
    env = make_env('hand-reorient', num_envs=64, play=True)
    env.reset(seed=0)
    quat = env.scene.cube_quat_w.double()
    angles = terms.quat_angle_rad(quat[:, None, :], CUBE_SYMMETRIES[None, :, :].expand(64, 24, 4))
    nearest, label = angles.min(dim=1)
    # yaw within 0.2 rad, plus the cube settling on the palm for the reset's refresh
    assert float(nearest.max()) <= 0.2 + 0.02
    assert len(set(label.tolist())) >= 15
