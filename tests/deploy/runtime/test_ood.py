"""Out-of-distribution flags: a term is flagged at a tick when one of its values (any
history slot) leaves its training band; shares over a window of ticks."""

import math

import numpy as np
import pytest

from sim2real.contract import ActionSpec, Contract, ObservationTermSpec, TermBand
from sim2real.deploy.runtime.ood import BandCheck, OodWindow


def _band(low, high):
    """A band with these edges (mean and std do not matter to the flags)."""
    return TermBand(low=list(low), high=list(high), mean=[0.0] * len(low),
                    std=[1.0] * len(low), samples=100)


@pytest.fixture
def contract():
    """Terms a (2 values, 2 history slots, banded), b (1 value, no band), c (3 values,
    banded): an observation of 2*2 + 1 + 3 = 8 values."""
    return Contract(
        task='t', robot='r', urdf_sha256='0' * 64, policy_rate_hz=50.0, physics_rate_hz=500.0,
        joint_names=[], default_joint_pos_rad=[],
        observations=[
            ObservationTermSpec('a', 2, history_length=2, band=_band([-1.0, 0.0], [1.0, 2.0])),
            ObservationTermSpec('b', 1),
            ObservationTermSpec('c', 3, band=_band([0.0, 0.0, 0.0], [1.0, 1.0, 1.0]))],
        action=ActionSpec('joint_position', 1))


def test_flags_name_the_banded_terms_a_value_left(contract):
    """Inside: no flag; a's older slot at 2.5 (its element 1 allows [0, 2]): a flagged;
    c's last value at -0.1: c flagged; b has no band and is never judged."""
    check = BandCheck(contract)
    assert check.names == ['a', 'c']
    inside = np.array([0.0, 1.0, -1.0, 2.0, 99.0, 0.0, 0.5, 1.0])
    assert check.outside(inside).tolist() == [False, False]
    assert check.outside(inside.reshape(1, -1)).tolist() == [False, False]
    older = inside.copy()
    older[3] = 2.5
    assert check.outside(older).tolist() == [True, False]
    last = inside.copy()
    last[7] = -0.1
    assert check.outside(last).tolist() == [False, True]


def test_an_edge_value_passes_and_nan_is_outside(contract):
    """A value on an edge, or past it by 1e-7 (the band is stored to 7 digits), is inside;
    by 1e-5, outside; NaN is outside."""
    check = BandCheck(contract)
    base = np.array([1.0, 2.0, -1.0, 0.0, 0.0, 1.0, 1.0, 0.0])
    assert check.outside(base).tolist() == [False, False]
    assert check.outside(base + np.r_[1e-7, 0, 0, 0, 0, 0, 0, 0]).tolist() == [False, False]
    assert check.outside(base + np.r_[1e-5, 0, 0, 0, 0, 0, 0, 0]).tolist() == [True, False]
    nan = base.copy()
    nan[5] = math.nan
    assert check.outside(nan).tolist() == [False, True]


def test_the_window_share_counts_ticks_with_an_observation(contract):
    """A 4-tick window: after ticks [out, in, None, out, in, in] the last four observed
    ticks (in, out, in, in) give a 0.25; ticks without an observation are not counted."""
    window = OodWindow(BandCheck(contract), 4)
    assert window.shares() == {}
    inside = np.array([0.0, 1.0, -1.0, 2.0, 0.0, 0.0, 0.5, 1.0])
    out = inside.copy()
    out[0] = 5.0
    for obs in (out, inside, None, out, inside, inside):
        window.add(obs)
    assert window.shares() == {'a': 0.25, 'c': 0.0}


def test_a_contract_without_bands_flags_nothing(contract):
    """A policy exported before bands existed: no term judged, empty shares."""
    for term in contract.observations:
        term.band = None
    check = BandCheck(contract)
    assert check.names == [] and check.outside(np.zeros(8)).tolist() == []
    window = OodWindow(check, 10)
    window.add(np.zeros(8))
    assert window.shares() == {}
