"""The toy arm plug-in's tip velocity (what its HIL bounds) against hand-worked numbers and
finite differences of its tip position."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

_PATH = Path(__file__).resolve().parent / 'plugins' / 'toyarm' / 'kinematics.py'
_SPEC = importlib.util.spec_from_file_location('toyarm_kinematics_under_test', _PATH)
kinematics = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(kinematics)   # by path: the plug-in is not installed here
tip_pos_b, tip_vel_b = kinematics.tip_pos_b, kinematics.tip_vel_b

UPPER_M, FORE_M = 0.3, 0.25


def test_tip_velocity_by_hand():
    """Stretched along x, shoulder at 1 rad/s: 0.55 m/s along y; elbow at 90 deg turning at
    1 rad/s alone: the fore link's 0.25 m/s along -x."""
    v = tip_vel_b(np.array([0.0, 0.0]), np.array([1.0, 0.0]), UPPER_M, FORE_M)
    assert v == pytest.approx([0.0, 0.55], abs=1e-12)
    v = tip_vel_b(np.array([0.0, np.pi / 2]), np.array([0.0, 1.0]), UPPER_M, FORE_M)
    assert v == pytest.approx([-0.25, 0.0], abs=1e-12)


def test_tip_velocity_is_the_derivative_of_the_tip_position():
    """Central differences (1e-6 s) of tip_pos_b at 20 random states, batched: within 1e-6."""
    rng = np.random.default_rng(0)
    q, qd = rng.uniform(-2.6, 2.6, (20, 2)), rng.uniform(-6.0, 6.0, (20, 2))
    h_s = 1e-6
    numeric = (tip_pos_b(q + h_s * qd, UPPER_M, FORE_M)
               - tip_pos_b(q - h_s * qd, UPPER_M, FORE_M)) / (2 * h_s)
    assert np.abs(tip_vel_b(q, qd, UPPER_M, FORE_M) - numeric).max() < 1e-6
