"""The training band export measures: per term and element, percentiles, mean and std of
what the policy read, history slots pooled; shipped policies carry one."""

from pathlib import Path

import numpy as np
import pytest
import torch

from sim2real.contract import ActionSpec, Contract, ObservationTermSpec
from sim2real.contract_digest import contract_differences
from sim2real.deploy.runtime.ood import BandCheck
from sim2real.export.observation_band import (
    BAND_PERCENTILES, collect_observations, term_bands, with_bands)
from sim2real.onnx_io import read_contract
from sim2real.training import build_env

POLICY_DIR = Path(__file__).resolve().parents[2] / 'policies'


def _contract():
    """Term x (1 value, 2 history slots) then y (2 values): 4 values per observation."""
    return Contract(
        task='t', robot='r', urdf_sha256='0' * 64, policy_rate_hz=50.0, physics_rate_hz=500.0,
        joint_names=[], default_joint_pos_rad=[],
        observations=[ObservationTermSpec('x', 1, history_length=2),
                      ObservationTermSpec('y', 2)],
        action=ActionSpec('joint_position', 1))


def test_term_bands_pool_history_slots_and_give_the_figures():
    """x's two slots hold 0..9999 and 10000..19999: its band pools 20000 values (mean
    9999.5, the 0.01 / 99.99 percentiles 1.9999 and 19997.0001); y's elements are
    constant 3 and a uniform 0..9999 ramp."""
    n = 10000
    ramp = np.arange(n, dtype=float)
    obs = np.stack([ramp, ramp + n, np.full(n, 3.0), ramp], axis=1)
    x, y = term_bands(_contract(), obs)
    assert BAND_PERCENTILES == (0.01, 99.99)
    assert x.samples == 2 * n and y.samples == n
    assert x.low == [pytest.approx(1.9999)] and x.high == [pytest.approx(19997.0001)]
    assert x.mean == [9999.5] and x.std == [pytest.approx(5773.5022, rel=1e-6)]
    assert y.low == [3.0, pytest.approx(0.9999)] and y.high[0] == 3.0
    assert y.std[0] == 0.0


def test_term_bands_refuse_rows_of_another_layout():
    """Rows of 5 values for a 4-value contract name both sizes."""
    with pytest.raises(ValueError, match='5 values per row, the contract 4'):
        term_bands(_contract(), np.zeros((10, 5)))


def test_the_band_of_a_rollout_holds_what_the_policy_read():
    """Hover under training randomization driven by a zero policy: every collected vector
    lies inside the bands measured from it bar the 0.01 % tails, and the rollout is
    reproducible (same seed, same vectors)."""
    def zero(obs):
        return torch.zeros(obs.shape[0], 4)

    vectors = []
    for _ in range(2):
        env = build_env('quadrotor-hover', seed=3, num_envs=8, action='thrust_body_rates',
                        num_threads=1)
        vectors.append(collect_observations(env, zero, samples=800))
    assert vectors[0].shape == (800, 49)
    assert np.array_equal(vectors[0], vectors[1])
    contract = with_bands(read_contract(POLICY_DIR / 'quadrotor_hover.onnx'), [None] * 5)
    contract = with_bands(contract, term_bands(contract, vectors[0]))
    flagged = np.array([BandCheck(contract).outside(v) for v in vectors[0]])
    assert 0.0 < flagged.any(axis=1).mean() < 0.05


@pytest.mark.parametrize('name', ['quadrotor_hover', 'quadrotor_track', 'quadruped_flat',
                                  'hand_rotate'])
def test_shipped_policies_carry_a_band_per_term(name):
    """Each shipped file's contract has a band for every term, measured over 65536
    vectors x history slots, with low <= mean <= high per element."""
    contract = read_contract(POLICY_DIR / f'{name}.onnx')
    for term in contract.observations:
        band = term.band
        assert band is not None, term.name
        assert band.samples == 65536 * term.history_length
        assert all(lo <= m <= hi for lo, m, hi in zip(band.low, band.mean, band.high))


def test_bands_are_not_a_contract_difference():
    """A file's contract and the task's band-free one differ in nothing that matters."""
    contract = read_contract(POLICY_DIR / 'quadrotor_hover.onnx')
    bare = with_bands(contract, [None] * len(contract.observations))
    assert contract_differences(contract, bare) == []


def test_rebinding_measures_as_many_vectors_as_asked(tmp_path):
    """`export FILE --band-samples 100`: 100 vectors (history slots pooled: 3 x 100 for a
    3-slot term); 0: no band, the graph kept either way."""
    from sim2real.policy_io import rebind_onnx
    src = POLICY_DIR / 'quadrotor_hover.onnx'
    none, graph, _ = rebind_onnx(src, tmp_path / 'none.onnx', band_samples=0)
    assert [t.band for t in read_contract(none).observations] == [None] * 5
    few, again, _ = rebind_onnx(src, tmp_path / 'few.onnx', band_samples=100)
    samples = [t.band.samples for t in read_contract(few).observations]
    assert samples == [100, 100, 300, 400, 100]
    assert graph == again
