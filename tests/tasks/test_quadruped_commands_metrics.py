"""Quadruped velocity commands and tracking metrics, with hand-computed numbers."""

import math

import pytest
import torch

from sim2real.evaluate import rollout_episodes
from sim2real.tasks.quadruped.commands import UniformVelocityCommand
from sim2real.tasks.quadruped.metrics import VelocityMetrics


def _quiet(cfg):
    """No randomization, no pushes; bases and joints still reset to the standing pose."""
    cfg.events = {k: v for k, v in cfg.events.items() if k in ('reset_base', 'reset_joints')}


def test_commands_in_range_with_standing_share(make_env):
    """Over 4000 draws: vx, vy, yaw rate within +-1, +-0.5, +-1; about 10 % standing (zero);
    no moving command has a planar speed below 0.2 m/s."""
    env = make_env('quadruped-flat', num_envs=4000, edit=_quiet)
    command = env.command('base_velocity')
    value = command.command
    assert (value[:, 0].abs() <= 1.0).all() and (value[:, 1].abs() <= 0.5).all()
    assert (value[:, 2].abs() <= 1.0).all()
    assert abs(command.is_standing.float().mean().item() - 0.1) < 0.02
    assert (value[command.is_standing] == 0).all()
    speed = torch.linalg.vector_norm(value[:, :2], dim=1)
    assert ((speed == 0) | (speed >= 0.2)).all()
    assert (value[:, 0] > 0.5).any() and (value[:, 0] < -0.5).any()


def test_commands_resample_every_10_s_per_env(make_env):
    """update() redraws only envs whose 10 s ran out, and restarts their clocks."""
    env = make_env('quadruped-flat', num_envs=4, edit=_quiet)
    command = UniformVelocityCommand(env, standing_fraction=0.0, min_lin_vel_m_s=0.0)
    command.resample(torch.arange(4))
    before = command.command.clone()
    command.time_since_resample_s[:] = torch.tensor([9.0, 9.99, 5.0, 0.0])
    command.update(0.02)
    changed = (command.command != before).any(dim=1)
    assert changed.tolist() == [False, True, False, False]
    torch.testing.assert_close(command.time_since_resample_s,
                               torch.tensor([9.02, 0.0, 5.02, 0.02]))


def _put(env, yaw_rad, vel_w, yaw_rate_rad_s):
    """Level bases with headings yaw_rad, world velocities vel_w (N, 2), body z rates."""
    n = env.num_envs
    yaw = torch.tensor(yaw_rad, dtype=torch.float64)
    quat = torch.stack([(yaw / 2).cos(), torch.zeros(n, dtype=torch.float64),
                        torch.zeros(n, dtype=torch.float64), (yaw / 2).sin()], dim=1)
    lin = torch.zeros(n, 3, dtype=torch.float64)
    lin[:, :2] = torch.tensor(vel_w, dtype=torch.float64)
    ang = torch.zeros(n, 3, dtype=torch.float64)
    ang[:, 2] = torch.tensor(yaw_rate_rad_s, dtype=torch.float64)
    pos = torch.tensor([[0.0, 0.0, 0.4]] * n, dtype=torch.float64)
    env.scene.backend.write_root_state(torch.arange(n), pos, quat, lin, ang)
    env.scene.refresh()


def test_metrics_hand_numbers(make_env):
    """Env 0 faces +y moving +y at 0.5 m/s under a (0.6, 0, 0.5) command, turning at 0.3
    rad/s: errors 0.1 m/s and 0.2 rad/s, success at 0.15 m/s tolerance. Env 1 faces +x,
    moves (0.3, 0.4) m/s, told to stand, then falls: 0.5 m/s, 0 rad/s, a fall, no success.
    A step inside the 1 s settling time is not counted."""
    env = make_env('quadruped-flat', num_envs=2, edit=_quiet)
    command = env.command('base_velocity')
    command.command[:] = torch.tensor([[0.6, 0.0, 0.5], [0.0, 0.0, 0.0]])
    metrics = VelocityMetrics(env, tolerance_mps=0.15, settle_s=1.0)
    _put(env, [math.pi / 2, 0.0], [[0.0, 0.5], [0.3, 0.4]], [0.3, 0.0])
    command.time_since_resample_s[:] = 0.5   # settling: a big error here must not count
    command.command[0, 0] = 5.0
    metrics.update()
    command.command[0, 0] = 0.6
    command.time_since_resample_s[:] = 2.0
    metrics.update()
    metrics.update()
    log = metrics.finish(torch.arange(2), torch.tensor([False, True]))
    values = metrics.last_values
    torch.testing.assert_close(values['lin_vel_error_mps'], torch.tensor([0.1, 0.5]),
                               rtol=0, atol=1e-5)
    torch.testing.assert_close(values['yaw_rate_error_radps'], torch.tensor([0.2, 0.0]),
                               rtol=0, atol=1e-5)
    assert values['fall_rate'].tolist() == [0.0, 1.0]
    assert metrics.last_success.tolist() == [True, False]
    assert log['episode/success'] == 0.5 and log['episode/fall_rate'] == 0.5
    assert log['episode/lin_vel_error_mps'] == pytest.approx(0.3, abs=1e-5)


def test_metrics_unmeasured_episode_is_nan(make_env):
    """An episode that ends inside the settling time has NaN errors and no success."""
    env = make_env('quadruped-flat', num_envs=1, edit=_quiet)
    metrics = VelocityMetrics(env, settle_s=1.0)
    env.command('base_velocity').time_since_resample_s[:] = 0.2
    metrics.update()
    metrics.finish(torch.arange(1), torch.tensor([False]))
    assert math.isnan(metrics.last_values['lin_vel_error_mps'][0].item())
    assert not metrics.last_success[0]


def test_evaluation_reports_velocity_metrics(make_env):
    """rollout_episodes on a quadruped env reports lin_vel_error_mps, yaw_rate_error_radps and
    fall_rate (a standing policy: errors = the commanded speeds, no position keys)."""
    def short(cfg):
        _quiet(cfg)
        cfg.episode_length_s = 2.0

    env = make_env('quadruped-flat', num_envs=4, play=True, edit=short)
    result = rollout_episodes(env, lambda obs: torch.zeros(obs.shape[0], 12))
    assert result['episodes'] == 4
    assert 0.0 <= result['fall_rate'] <= 1.0
    assert result['fall_rate'] == result['termination_rate']
    assert result['lin_vel_error_mps'] >= 0.0 and result['yaw_rate_error_radps'] >= 0.0
    assert 'position_error_m' not in result
