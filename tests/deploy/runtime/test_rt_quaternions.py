"""The node's per-message quaternion arithmetic (scalar) against the training terms' array
formula: the same rotation to round-off, at any scale, and NaN for what is no rotation."""

import math

import numpy as np
import pytest

from sim2real import terms
from sim2real.deploy.runtime.sensors import quat_norm, rotmat_from_quat


@pytest.mark.parametrize('scale', [1.0, 3.7, 1e200, 1e-200])
def test_rotmat_matches_the_training_formula_at_any_scale(scale):
    """2000 random quaternions times scale: R equals terms.quat_to_rotmat of the unit
    quaternion to 4e-15, and norms equal numpy's to 1e-15 relative."""
    rng = np.random.default_rng(7)
    for q in rng.normal(size=(2000, 4)):
        unit = q / np.linalg.norm(q)
        assert np.abs(rotmat_from_quat(q * scale) - terms.quat_to_rotmat(unit)).max() < 4e-15
        assert quat_norm(q * scale) == pytest.approx(np.linalg.norm(q) * scale, rel=1e-15)


@pytest.mark.parametrize('bad', [[0, 0, 0, 0], [np.nan, 1, 0, 0], [np.inf, 0, 0, 0],
                                 [1, -np.inf, 0, 0]])
def test_what_is_no_rotation_gives_a_nan_matrix(bad):
    """Zero, NaN or infinite components: every entry NaN (the latch conditions fail)."""
    assert np.isnan(rotmat_from_quat(np.array(bad, dtype=float))).all()


def test_norm_of_the_extremes():
    """Zero 0, infinite inf, NaN NaN, no overflow at 1e300 nor underflow at 1e-300."""
    assert quat_norm(np.zeros(4)) == 0.0
    assert quat_norm(np.array([np.inf, 0, 0, 0])) == math.inf
    assert math.isnan(quat_norm(np.array([1, np.nan, 0, 0])))
    assert quat_norm(np.array([1e300, 1e300, 0, 0])) == pytest.approx(math.sqrt(2) * 1e300)
    assert quat_norm(np.array([1e-300, 0, 0, 0])) == 1e-300
