"""HIL plumbing for the hand: policy_node + sim_bridge over real DDS with a smoke policy.

The bridge publishes joint states in servo-ID order (not the contract's), so every tick of
the node exercises its by-name matching. An untrained policy cannot turn the cube; the
faults are injected 0.5 s after enable (mid soft start, the same latch path as turning):
each must end safe (the hold fallback, or the servo bus's watchdog) within 2 control ticks
with zero limit violations.
"""

import json
from pathlib import Path
import subprocess
import sys

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / 'config' / 'hand.yaml'
FAULTS = {'drop', 'delay', 'frozen_joint_states', 'nan_joint_states', 'latency_spike',
          'command_loss'}


@pytest.fixture(scope='module')
def plumbing(tmp_path_factory):
    """A 1-iteration, 16-env hand-rotate policy through every fault (config/hand.yaml)."""
    run = tmp_path_factory.mktemp('hsmoke')
    for args in (['train', 'hand-rotate', '--run-dir', str(run), '--num-envs', '16',
                  '--max-iterations', '1', '--no-progress'], ['export', str(run)]):
        out = subprocess.run([sys.executable, '-m', 'sim2real.cli.main', *args],
                             capture_output=True, text=True, timeout=240, cwd=ROOT)
        assert out.returncode == 0, out.stderr[-3000:]
    code = ('import json, sys; from sim2real.hil.runner import run_hil; '
            'print(json.dumps(run_hil("hand", sys.argv[1], duration_s=2.0, '
            'params_file=sys.argv[2], log_dir=sys.argv[3], '
            'scenario={"fault_settle_s": 0.5, "settle_s": 0.2})))')
    out = subprocess.run([sys.executable, '-c', code, str(run / 'policy.onnx'), str(CONFIG),
                          str(run)], capture_output=True, text=True, timeout=240, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_every_fault_ends_safe_within_two_ticks_without_violations(plumbing):
    """Each fault: recovered_safe, 0 <= ticks_to_safe <= 2, zero violations; the stale, NaN
    and late joint states latch the node's hold fallback."""
    faults = plumbing['faults']
    assert set(faults) == FAULTS
    for name, outcome in faults.items():
        assert outcome['recovered_safe'], (name, outcome)
        assert 0 <= outcome['ticks_to_safe'] <= 2, (name, outcome)
        assert outcome['limit_violations'] == 0, (name, outcome)
    for name in FAULTS - {'drop', 'delay', 'command_loss'}:
        assert faults[name]['fallback'], (name, faults[name])
    assert plumbing['limit_violations'] == 0


@pytest.mark.slow
def test_the_node_keeps_20_hz_and_reports_the_cube(plumbing):
    """Ticks at >= 98 % of 20 Hz outside simulator stalls; the cube's rotation, drop and
    distance and the fingertip guard's closest pads are reported (the grasp: > 2 cm)."""
    assert plumbing['achieved_rate_outside_stalls_hz'] >= 0.98 * plumbing['target_rate_hz']
    assert plumbing['target_rate_hz'] == 20.0
    assert isinstance(plumbing['rotation_rad_per_10s'], float)
    assert isinstance(plumbing['dropped'], bool)
    assert plumbing['cube_distance_max_m'] >= 0.0
    assert plumbing['fingertip_distance_min_m'] > 0.02
