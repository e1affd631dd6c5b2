"""`sim2real hil ROBOT --variant FILE.yaml --scenario identify` (issue 51): the simulated robot
takes physical parameters by their randomization box names and flies the identification run
with them, the ground truth records them, and a name or value the twin cannot take is
refused before any node starts."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from sim2real.deploy.record.json_values import untyped
from tests.system.hil_judged import assert_judged, skip_unless_judged
from tests.system.test_cli import json_line, run_cli

ROOT = Path(__file__).resolve().parents[2]
POLICY = ROOT / 'policies' / 'quadrotor_hover.onnx'


def _variant(tmp_path: Path, text: str) -> Path:
    """A variant file."""
    path = tmp_path / 'variant.yaml'
    path.write_text(text)
    return path


@pytest.mark.slow
def test_a_heavier_weaker_later_quadrotor_flies_its_identification_run(tmp_path):
    """mass x1.15, thrust x0.9, 2 ticks of action delay (inside the box): the 50 s
    identification run passes (no fallback, no crash, no limit violation); the vehicle went
    +-0.4 m from its target on every axis; the truth log's metadata holds each value and the
    true mass 0.027 x 1.15 kg. `sim2real gap` of the node's log: the nominal simulator
    misses it (gap > 0.3), the variant's parameters match it (gap < 0.05, 10x smaller)."""
    variant = _variant(tmp_path, 'mass_scale: 1.15\nthrust_scale: 0.9\naction_delay_ticks: 2\n')
    proc = run_cli('hil', 'quadrotor', '--policy', POLICY, '--scenario', 'identify',
                   '--variant', variant, '--record', tmp_path / 'rec', '--json',
                   cwd=tmp_path, expect=None)
    assert_judged(proc)
    result = json_line(proc.stdout)
    assert result['scenario'] == 'identify' and result['excitation_s'] >= 50.0
    skip_unless_judged(result, 'identify')
    from sim2real.deploy.record.rebuild import read_logs
    meta = read_logs(tmp_path / 'rec' / 'sim_bridge').metadata['sim2real_bridge']
    assert {k: float(v) for k, v in meta.items() if k.startswith('variant.')} == {
        'variant.mass_scale': 1.15, 'variant.thrust_scale': 0.9,
        'variant.action_delay_ticks': 2.0}
    assert float(meta['physical.true_mass_kg']) == pytest.approx(0.027 * 1.15)
    truth = read_logs(tmp_path / 'rec' / 'sim_bridge')
    pos = np.array([untyped(json.loads(m.data)['values']['pos_w']) for m in truth.messages
                    if m.topic == '/sim2real/truth'])
    reach = pos.max(axis=0) - pos.min(axis=0)
    assert (reach > 0.7).all(), reach
    nominal = json_line(run_cli('gap', tmp_path / 'rec' / 'policy_node', '--json',
                                cwd=tmp_path).stdout)
    true = json_line(run_cli('gap', tmp_path / 'rec' / 'policy_node', '--params', variant,
                             '--json', cwd=tmp_path).stdout)
    assert nominal['gap'] > 0.3 and true['gap'] < 0.05, (nominal, true)
    assert true['gap'] < nominal['gap'] / 10 and true['windows'] == 40


@pytest.mark.parametrize('text, message', [
    ('thrust_scal: 0.8\n', 'variant thrust_scal: not a box parameter of the quadrotor; did '
                           'you mean "thrust_scale"?'),
    ('observation_dropout: 0.3\n', 'the quadrotor twin does not model it'),
    ('mass_scale: -1\n', 'mass_scale=-1: must be a finite number > 0'),
    ('[1, 2]\n', 'expected a mapping'),
    ('mass_scale: 0.5\naction_delay_ticks: 0.5\n', 'action_delay_ticks=0.5: must be a whole'),
])
def test_a_variant_the_twin_cannot_take_is_refused_before_it_starts(tmp_path, text, message):
    """Exit 2 with the reason on stderr, no node started."""
    proc = run_cli('hil', 'quadrotor', '--policy', POLICY, '--variant',
                   _variant(tmp_path, text), cwd=tmp_path, expect=2)
    assert message in proc.stderr, proc.stderr


def test_identify_refuses_options_it_would_ignore(tmp_path):
    """--scenario identify with --faults or --expect: exit 2, saying to leave them out."""
    proc = run_cli('hil', 'quadrotor', '--policy', POLICY, '--scenario', 'identify',
                   '--faults', 'drop', cwd=tmp_path, expect=2)
    assert 'leave out --faults and --expect' in proc.stderr, proc.stderr


def test_a_payload_that_leaves_the_quadruped_no_trunk_is_refused_before_it_starts(tmp_path):
    """payload_kg -100: the twin's model refuses it (exit 2, the mass named)."""
    proc = run_cli('hil', 'quadruped', '--policy', ROOT / 'policies' / 'quadruped_flat.onnx',
                   '--variant', _variant(tmp_path, 'payload_kg: -100\n'), cwd=tmp_path,
                   expect=2)
    assert 'variant payload_kg=-100: leaves the trunk' in proc.stderr, proc.stderr
