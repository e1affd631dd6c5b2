"""Training focus: a share of the envs held at a robustness report's weakest points."""

import json

import pytest
import torch

from sim2real.algo_cfg import TrainCfg
from sim2real.focus import focus_blocks, read_focus
from sim2real.mdp.serialize import to_plain
from sim2real.overrides import ConfigError
from sim2real.training import build_env

HEAVY = {'mass_scale': 1.2, 'thrust_scale': 0.85}
SLOW = {'motor_tau_scale': 1.4}


def _report(tmp_path, task='quadrotor-hover', points=None):
    """A robustness report with a failed corner, two passing points and a past-edge one."""
    points = points if points is not None else [
        {'kind': 'nominal', 'pins': {}, 'passed': True, 'termination_rate': 0.0,
         'success_rate': 0.99},
        {'kind': 'edge', 'pins': SLOW, 'passed': True, 'termination_rate': 0.05,
         'success_rate': 0.9},
        {'kind': 'edge', 'pins': {'mass_scale': 0.8}, 'passed': True,
         'termination_rate': 0.0, 'success_rate': 0.97},
        {'kind': 'past_edge', 'pins': {'mass_scale': 1.25}, 'passed': False,
         'termination_rate': 0.5, 'success_rate': 0.3},
        {'kind': 'corner', 'pins': HEAVY, 'passed': False, 'termination_rate': 0.2,
         'success_rate': 0.6},
    ]
    path = tmp_path / 'robustness.json'
    path.write_text(json.dumps({'task': task, 'points': points}))
    return str(path)


def test_points_failed_first_then_worst_passing_past_edge_skipped(tmp_path):
    """Two points asked: the failed corner, then the passing edge with most terminations;
    the failed past-edge point is not trained at."""
    cfg = TrainCfg(focus_report=_report(tmp_path), focus_share=0.25, focus_points=2)
    focus = read_focus(cfg)
    assert focus.task == 'quadrotor-hover' and focus.share == 0.25
    assert focus.points == (HEAVY, SLOW)
    assert [(b.start, b.stop) for b, _ in focus_blocks(focus, 40)] == [(0, 5), (5, 10)]


def test_focus_rows_hold_their_point_in_the_simulated_model(tmp_path):
    """40 envs, share 0.5 over two points: rows 0-9 fly at mass x1.2, rows 10-19 with a
    1.4x motor time constant, the rest draw the box; the stored config keeps the ranges."""
    focus = read_focus(TrainCfg(focus_report=_report(tmp_path), focus_share=0.5,
                                focus_points=2))
    env = build_env('quadrotor-hover', seed=3, num_envs=40, num_threads=1, focus=focus)
    env.reset()
    scene = env.scene
    mass = scene.backend.expand('body_mass')[:, 1] / scene.nominal_mass_kg
    tau = scene.actuator.time_constant_s[:, 0] / scene.rotors.time_constant_s
    torch.testing.assert_close(mass[:10], torch.full((10,), 1.2, dtype=mass.dtype))
    torch.testing.assert_close(tau[10:20], torch.full((10,), 1.4, dtype=tau.dtype))
    free = mass[10:]
    assert bool(((free >= 0.8 - 1e-9) & (free <= 1.2 + 1e-9)).all())
    assert float(free.std()) > 0.01
    assert to_plain(env.cfg.events['mass'].params['value_range']) == [0.8, 1.2]


def test_refused_reports(tmp_path):
    """Another task's report, a pin the task lacks, one outside the trained range, a share
    without a report and an unreadable file are refused by name."""
    def focus(path, **kw):
        return read_focus(TrainCfg(focus_report=path, focus_share=0.1, **kw))
    with pytest.raises(ConfigError, match='judged task "quadruped-flat"'):
        build_env('quadrotor-hover', seed=0, num_envs=8, num_threads=1,
                  focus=focus(_report(tmp_path, task='quadruped-flat')))
    odd = [{'kind': 'edge', 'pins': {'payload_kg': 3.0}, 'passed': False}]
    with pytest.raises(ConfigError, match="pins \\['payload_kg'\\], not box parameters"):
        build_env('quadrotor-hover', seed=0, num_envs=8, num_threads=1,
                  focus=focus(_report(tmp_path, points=odd)))
    wide = [{'kind': 'edge', 'pins': {'mass_scale': 1.5}, 'passed': False}]
    with pytest.raises(ConfigError, match='mass_scale=1.5, outside the trained range'):
        build_env('quadrotor-hover', seed=0, num_envs=8, num_threads=1,
                  focus=focus(_report(tmp_path, points=wide)))
    with pytest.raises(ConfigError, match='go together'):
        read_focus(TrainCfg(focus_share=0.1))
    with pytest.raises(ConfigError, match='not a readable robustness report'):
        focus(str(tmp_path / 'missing.json'))
