"""HIL plumbing for the quadruped: policy_node + sim_bridge over real DDS with a smoke policy.

An untrained policy cannot walk, so the faults are injected during the node's stand-up soft
start (armed, the same latch path as walking): every fault must end in damping (or the
driver's watchdog) within 2 control ticks with zero limit violations. The push (the base
dragged at 3 m/s) needs a robot that stands on its feet for leg odometry to read it: it is
judged with the shipped policy. Walking quality is judged with the shipped
policies/quadruped_flat.onnx and with the Isaac Lab run carried in checkpoints/il_full_s0.
"""

import json
from pathlib import Path
import subprocess
import sys

import pytest
import yaml

from sim2real.deploy.robots.quadruped.hil import PUSH_REASONS
from tests.system.hil_judged import assert_judged, judged_faults, skip_unless_judged
from tests.system.replay_check import assert_replays_exactly

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / 'policies' / 'quadruped_flat.onnx'
CONFIG = ROOT / 'config' / 'quadruped.yaml'
FAULTS = {'drop', 'delay', 'frozen_joint_states', 'frozen_imu', 'nan_joint_states', 'nan_imu',
          'latency_spike', 'command_loss', 'cmd_vel_loss'}
"""The faults injected during a smoke policy's stand-up (all but the push)."""


def _run_hil(policy: Path, params: Path, logs: Path, duration_s: float, scenario: dict,
             timeout_s: float, faults: str = 'all', record: Path | None = None) -> dict:
    """run_hil('quadruped', ...) in a fresh process (record: the flight recorder's
    folder); its result dict."""
    code = ('import json, sys; from sim2real.hil.runner import run_hil; '
            'print(json.dumps(run_hil("quadruped", sys.argv[1], duration_s=float(sys.argv[2]), '
            'params_file=sys.argv[3], log_dir=sys.argv[4], scenario=json.loads(sys.argv[5]), '
            'faults=sys.argv[6], record=sys.argv[7] or None)))')
    out = subprocess.run([sys.executable, '-c', code, str(policy), str(duration_s), str(params),
                          str(logs), json.dumps(scenario), faults, str(record or '')],
                         capture_output=True, text=True, timeout=timeout_s, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope='module')
def smoke_policy(tmp_path_factory):
    """A quadruped-flat policy from a 1-iteration, 16-env training run, exported."""
    run = tmp_path_factory.mktemp('qsmoke')
    for args in (['train', 'quadruped-flat', '--run-dir', str(run), '--num-envs', '16',
                  '--max-iterations', '1', '--no-progress'],
                 ['export', str(run), '--band-samples', '1024']):
        out = subprocess.run([sys.executable, '-m', 'sim2real.cli.main', *args],
                             capture_output=True, text=True, timeout=240, cwd=ROOT)
        assert out.returncode == 0, out.stderr[-3000:]
    return run / 'policy.onnx'


@pytest.fixture(scope='module')
def plumbing(smoke_policy, tmp_path_factory):
    """All faults injected 0.5 s into a 3 s stand-up (config/quadruped.yaml otherwise)."""
    folder = tmp_path_factory.mktemp('hilq')
    raw = yaml.safe_load(CONFIG.read_text())
    raw['policy_node']['ros__parameters']['soft_start_s'] = 3.0
    params = folder / 'quadruped.yaml'
    params.write_text(yaml.safe_dump(raw))
    return _run_hil(smoke_policy, params, folder, 1.0, {'fault_settle_s': 0.5, 'settle_s': 0.2},
                    timeout_s=180, faults=','.join(sorted(FAULTS)))


@pytest.mark.slow
def test_every_fault_ends_in_damping_within_two_ticks_without_violations(plumbing):
    """Each fault: recovered_safe, 0 <= ticks_to_safe <= 2, zero violations; latches damp."""
    assert set(plumbing['faults']) == FAULTS
    faults = judged_faults(plumbing)
    for name, outcome in faults.items():
        assert outcome['recovered_safe'], (name, outcome)
        assert 0 <= outcome['ticks_to_safe'] <= 2, (name, outcome)
        assert outcome['limit_violations'] == 0, (name, outcome)
    for name in set(faults) - {'drop', 'delay', 'command_loss'}:
        assert faults[name]['fallback'], (name, faults[name])
    assert plumbing['limit_violations'] == 0


@pytest.mark.slow
def test_the_node_keeps_its_rate_and_reports_timing(plumbing):
    """Ticks at >= 98 % of 50 Hz outside simulator stalls; period error and inference
    time reported."""
    # outside the simulated robot's stalls (runner.loop_figures): a VM that stops every
    # process stops the node's ticks too
    assert plumbing['achieved_rate_outside_stalls_hz'] >= 0.98 * plumbing[
        'target_rate_hz'], plumbing
    assert plumbing['inference_p99_us'] > 0 and plumbing['period_error_p99_ms'] >= 0
    assert {'fell', 'lin_vel_error_mps'} <= set(plumbing)


@pytest.mark.slow
def test_shipped_policy_walks_at_half_a_metre_per_second(tmp_path):
    """policies/quadruped_flat.onnx walks 10 s at 0.5 m/s: no fall, lin_vel_error <= 0.15,
    the node's leg odometry within 0.1 m/s of the true forward velocity on average (0.047
    measured); the base dragged at 3 m/s trips the 'leg_odometry' latch (or, where the robot
    stumbles first, the 'tilt' one) within PUSH_TICKS. The flight,
    recorded, replays to the same commands and latches (`sim2real replay`)."""
    if not SHIPPED.is_file():
        pytest.skip(f'{SHIPPED.name} is not shipped yet: an untrained policy cannot walk')
    result = _run_hil(SHIPPED, CONFIG, tmp_path, 10.0, {}, timeout_s=400,
                      record=tmp_path / 'rec')
    assert_replays_exactly(tmp_path / 'rec' / 'policy_node')
    skip_unless_judged(result, 'nominal')
    assert not result['fell'], result
    assert result['lin_vel_error_mps'] <= 0.15, result
    assert result['leg_odometry_vx_error_m_s'] <= 0.1, result
    assert result['limit_violations'] == 0, result
    faults = judged_faults(result)
    for name, outcome in faults.items():
        assert outcome['recovered_safe'], (name, outcome)
        assert outcome['ticks_to_safe'] <= outcome['max_ticks'], (name, outcome)
    if 'push' in faults:
        assert faults['push']['fallback_reason'] in PUSH_REASONS, result


@pytest.mark.slow
def test_the_carried_isaac_lab_run_walks_through_node_and_bridge(tmp_path):
    """The README's two commands on the Isaac Lab run carried in checkpoints/il_full_s0
    (trained there, 27.5 M steps): imported, it walks 10 s at 0.5 m/s through node and
    bridge with its stated quality (--expect lin_vel_error_mps<=0.25; exit status 0): no fall,
    at least 2.5 m covered, zero limit violations. (Its runs here: 0.173-0.181 m/s, and
    0.204 once inside the loaded suite.)"""
    carried = ROOT / 'checkpoints' / 'il_full_s0'
    policy = tmp_path / 'il.onnx'
    runs = (['import-isaaclab', str(carried), '--task', 'quadruped-flat', '--out', str(policy)],
            ['hil', 'quadruped', '--policy', str(policy), '--faults', 'none', '--expect',
             'lin_vel_error_mps<=0.25', '--log-dir', str(tmp_path), '--json'])
    for args in runs:
        out = subprocess.run([sys.executable, '-m', 'sim2real.cli.main', *args],
                             capture_output=True, text=True, timeout=300, cwd=ROOT)
        if args[0] == 'hil':
            assert_judged(out)
        else:
            assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    skip_unless_judged(result, 'nominal')
    assert not result['fell'] and result['limit_violations'] == 0, result
    assert result['lin_vel_error_mps'] <= 0.25 and result['distance_m'] >= 2.5, result


@pytest.mark.slow
def test_an_imported_isaac_lab_policy_goes_through_node_and_bridge(tmp_path):
    """The Isaac Lab fixture run (1 iteration) imported with `sim2real import-isaaclab`:
    the node runs it at 50 Hz with lin_vel_b from leg odometry, and every fault during the
    stand-up ends in damping within 2 ticks with zero violations (walking needs a trained
    Isaac Lab run)."""
    from sim2real.interop.isaaclab_import import import_isaaclab_run
    fixture = ROOT / 'tests' / 'interop' / 'fixtures' / 'isaaclab_go2class_flat'
    policy = import_isaaclab_run(fixture, 'quadruped-flat', out=tmp_path / 'isaaclab.onnx',
                                 urdf=ROOT / 'urdf' / 'quadruped.urdf').path
    raw = yaml.safe_load(CONFIG.read_text())
    raw['policy_node']['ros__parameters']['soft_start_s'] = 3.0
    params = tmp_path / 'quadruped.yaml'
    params.write_text(yaml.safe_dump(raw))
    result = _run_hil(policy, params, tmp_path, 1.0, {'fault_settle_s': 0.5, 'settle_s': 0.2},
                      timeout_s=180, faults=','.join(sorted(FAULTS)))
    assert set(result['faults']) == FAULTS
    for name, outcome in result['faults'].items():
        assert outcome['recovered_safe'] and 0 <= outcome['ticks_to_safe'] <= 2, (name, outcome)
        assert outcome['limit_violations'] == 0, (name, outcome)
    assert result['limit_violations'] == 0
    assert result['achieved_rate_outside_stalls_hz'] >= 0.98 * result['target_rate_hz']
