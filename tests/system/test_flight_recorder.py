"""The flight recorder through the real node (issue 50): `sim2real hil --record DIR` makes
policy_node log what it received (ROS 2 CDR on its own topics) and decided (JSON), and
`sim2real replay` re-runs the log to the same commands and latches, fault scenarios too."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from sim2real.deploy.record.reader import decode, read_log
from tests.system.hil_judged import assert_judged
from tests.system.replay_check import assert_replays_exactly
from tests.system.test_cli import json_line, run_cli

ROOT = Path(__file__).resolve().parents[2]
POLICY = ROOT / 'policies' / 'quadrotor_hover.onnx'


@pytest.fixture(scope='module')
def flight(tmp_path_factory) -> Path:
    """A recorded HIL flight of the shipped hover policy: nominal, nan_imu, frozen_odom."""
    root = tmp_path_factory.mktemp('flight')
    proc = run_cli('hil', 'quadrotor', '--policy', POLICY, '--faults', 'nan_imu,frozen_odom',
                   '--duration', '3', '--record', root / 'rec', '--log-dir', root / 'logs',
                   '--json', cwd=root, expect=None)
    assert_judged(proc)
    result = json_line(proc.stdout)
    (record,) = result['records']
    assert [Path(p).parent.name for p in result['truth_records']] == ['sim_bridge']
    return Path(record)


@pytest.mark.slow
def test_the_bridge_records_the_ground_truth_and_every_fault(flight):
    """DIR/sim_bridge: the simulated robot's true position at 100 Hz over the flight, the
    bridge's parameters attached, and each injected fault's onset and first effect."""
    import yaml
    (path,) = list((flight.parent.parent / 'sim_bridge').glob('*.mcap'))
    log = read_log(path)
    assert log.damage is None
    assert log.metadata['sim2real_bridge']['robot'] == 'quadrotor'
    params = yaml.safe_load(log.attachments['bridge_params.yaml'])
    assert params['sim_bridge']['ros__parameters']['physics_rate_hz'] > 0
    truth = [decode(m, log) for m in log.messages if m.topic == '/sim2real/truth']
    span_s = truth[-1]['state_s'] - truth[0]['state_s']
    assert span_s > 8.0 and 90.0 < len(truth) / span_s < 110.0
    heights = [t['values']['pos_w']['array'][2] for t in truth]
    assert 0.3 < max(heights) < 3.0
    events = [decode(m, log) for m in log.messages if m.topic == '/sim2real/bridge_event']
    onsets = {e['fault'] for e in events if e['event'] == 'fault_on'}
    assert onsets >= {'nan_imu', 'frozen_odom'}
    assert {e['fault'] for e in events if e['event'] == 'fault_effect'} >= onsets


@pytest.mark.slow
def test_every_ros_message_decodes_and_the_log_names_what_ran(flight):
    """Odometry and IMU messages decode to their types with plausible values; the metadata
    holds the policy's SHA-256 and the attachments what a replay needs."""
    log = read_log(flight)
    assert log.damage is None
    assert log.metadata['sim2real']['policy_sha256'] == hashlib.sha256(
        POLICY.read_bytes()).hexdigest()
    assert set(log.attachments) == {'params.yaml', 'contract.json', 'policy.onnx',
                                    'robot.urdf'}
    counts = {}
    for message in log.messages:
        counts[message.topic] = counts.get(message.topic, 0) + 1
        if message.topic == '/odom':
            odom = decode(message, log)
            assert type(odom).__name__ == 'Odometry' and 0.0 < odom.pose.pose.position.z < 3.0
        elif message.topic == '/imu':
            assert type(decode(message, log)).__name__ == 'Imu'
    assert counts['/odom'] > 500 and counts['/imu'] > 500 and counts['/sim2real/tick'] > 1000


@pytest.mark.slow
def test_replay_decides_every_tick_again_exactly(flight, tmp_path):
    """`sim2real replay` of the recording: every command, action and observation equal, the
    nan_imu and stale latches at the same ticks; pass, exit 0."""
    proc = run_cli('replay', flight.parent, '--json', cwd=tmp_path)
    result = json_line(proc.stdout)
    assert result['same_policy'] and result['ticks'] > 1000
    assert result['max_abs_command_diff'] <= 1e-6 and result['max_abs_action_diff'] <= 1e-6
    assert result['first_state_mismatch_tick'] is None and result['call_mismatches'] == []
    assert 'verdict replay: pass: ' in proc.stderr


@pytest.mark.slow
def test_a_log_cut_short_replays_up_to_the_cut_and_says_where(flight, tmp_path):
    """The first 60 % of the file: read up to the damage (named), replayed exactly."""
    cut = tmp_path / 'cut.mcap'
    data = flight.read_bytes()
    cut.write_bytes(data[:int(0.6 * len(data))])
    proc = run_cli('replay', cut, '--json', cwd=tmp_path)
    result = json_line(proc.stdout)
    assert result['damage'] and 'read ' in result['damage']
    assert 'is damaged or cut short' in proc.stderr
    assert result['ticks'] > 100 and result['max_abs_command_diff'] <= 1e-6
    assert result['first_state_mismatch_tick'] is None


@pytest.mark.slow
def test_a_node_killed_with_sigkill_leaves_a_log_read_to_within_a_second(tmp_path):
    """policy_node recording the quadrotor bridge's odometry and IMU, killed with SIGKILL
    after about 4 s: its writer process finishes the file (it reads whole within 10 s of
    the kill), up to a message that arrived at most 1 s before the kill, and what it holds
    replays exactly. (Writer killed too: tests/deploy/record/test_recorder.py.)"""
    import os
    import signal
    import time
    from sim2real.hil.processes import (
        node_command, NodeProcess, private_domain_id, ros_environment)
    params = ROOT / 'config' / 'quadrotor.yaml'
    env = ros_environment(private_domain_id(os.getpid() + 17))
    record = tmp_path / 'rec'
    procs = [NodeProcess('sim_bridge', node_command('sim2real.deploy.sim_bridge', params, {}),
                         env, tmp_path / 'bridge.log'),
             NodeProcess('policy_node', node_command('sim2real.deploy.policy_node', params, {
                 'policy_file': str(POLICY), 'record_dir': str(record)}),
                 env, tmp_path / 'node.log')]
    try:
        deadline = time.monotonic() + 60.0
        while time.monotonic() < deadline and not any(
                p.stat().st_size > 200_000 for p in record.glob('*.mcap')):
            time.sleep(0.2)   # until the node has logged some seconds of sensor data
        time.sleep(1.0)
        killed_ns = time.time_ns()
        os.kill(procs[1].proc.pid, signal.SIGKILL)
        procs[1].proc.wait(timeout=10)
    finally:
        for proc in procs:
            proc.stop()
    (path,) = list(record.glob('*.mcap'))
    deadline = time.monotonic() + 10.0
    while read_log(path).damage and time.monotonic() < deadline:
        time.sleep(0.1)   # the orphaned writer finishing the file
    log = read_log(path)
    assert log.damage is None, log.damage
    sensor = [m for m in log.messages if m.topic in ('/odom', '/imu')]
    assert len(sensor) > 200
    assert killed_ns - sensor[-1].log_time_ns <= 1_000_000_000
    assert_replays_exactly(record)


@pytest.mark.slow
def test_replay_out_writes_a_report_with_bands_events_and_the_robots_panels(flight, tmp_path):
    """`replay --out DIR`: report.md with the replay's figures, a row per observation term
    with its share outside the training band, the faults the bridge injected and the
    node's latches as events; PNGs of the bands and the quadrotor's position and attitude
    (against the target the node logged each tick); --json names the files and gives
    ood_share per term."""
    proc = run_cli('replay', flight.parent, '--out', tmp_path / 'report', '--json',
                   cwd=tmp_path)
    result = json_line(proc.stdout)
    names = [Path(p).name for p in result['report']]
    assert names == ['report.md', 'observation_bands.png', 'position_attitude.png']
    for path in result['report'][1:]:
        assert Path(path).read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'
    terms = ['position_error_w', 'rotation_matrix', 'lin_vel_b', 'ang_vel_b',
             'action_history']
    assert sorted(result['ood_share']) == sorted(terms) and result['ood_banded']
    assert all(0.0 <= share <= 1.0 for share in result['ood_share'].values())
    text = (tmp_path / 'report' / 'report.md').read_text()
    for term in terms:
        assert f'| {term} ' in text
    assert '| robot    | fault_on nan_imu' in text and '| robot    | fault_on frozen_odom' in text
    assert 'state fallback:nan:imu' in text
    assert 'simulated robot (HIL): base_link 0.027 kg (nominal 0.027 kg)' in text
    log = read_log(flight)
    ticks = [decode(m, log) for m in log.messages if m.topic == '/sim2real/tick']
    assert ticks[-1]['estimates']['target_pos_w_m'] == [0.0, 0.0, 1.5]
    assert len(ticks[-1]['integrator']['action_history'][0]) == 4
    assert abs(ticks[-1]['period_error_s']) < 0.05
