"""Replay of a runtime log: the logged puts, ticks and calls fed to a fresh Runtime decide
exactly what the logged one decided (commands, actions, observations, latches), for a
quadrotor and a joint robot, through NaN and stale faults; another policy is compared."""

from __future__ import annotations

import numpy as np
import pytest

from sim2real.contract import TermBand
from sim2real.deploy.record.reader import read_log
from sim2real.deploy.record.replay import max_abs_diff, replay
from sim2real.deploy.record.runtime_log import RecordingRuntime
from sim2real.deploy.record.writer import Recorder, RecorderCfg
from sim2real.deploy.runtime import Runtime, Sample
from sim2real.export.observation_band import with_bands
from sim2real.export.onnx_policy import export_onnx
from tests.deploy.conftest import tiny_policy

pytestmark = pytest.mark.filterwarnings('ignore::DeprecationWarning')


def _quadrotor_flight(runtime, rng) -> None:
    """1.5 s at 100 Hz: odom and imu every tick with noise, armed at 0.05 s, a NaN imu at
    1.0 s (latch), re-enabled at 1.2 s, an estop at 1.4 s."""
    for k in range(150):
        t = 0.01 * k
        pos = np.array([0.0, 0.0, 1.5]) + rng.normal(0.0, 0.0005, 3)
        runtime.put('odom', Sample({'pos_w': pos, 'quat_wxyz': np.array([1.0, 0, 0, 0]),
                                    'lin_vel_b': rng.normal(0.0, 0.005, 3),
                                    'ang_vel_b': rng.normal(0.0, 0.05, 3)}, t, t + 0.002))
        gyro = np.array([np.nan, 0.0, 0.0]) if k == 100 else rng.normal(0.0, 0.05, 3)
        runtime.put('imu', Sample({'ang_vel_b': gyro, 'lin_acc_b': np.array([0, 0, 9.81])},
                                  t, t + 0.001))
        if k in (5, 120):
            runtime.enable(t + 0.003)
        if k == 140:
            runtime.estop(t + 0.004)
        runtime.step(t + 0.005)


def _joint_flight(runtime, rng) -> None:
    """1 s at 50 Hz of a 3-joint robot whose joint states come by name in another order,
    armed at 0.1 s; joint states stop after 0.7 s (stale latch)."""
    for k in range(50):
        t = 0.02 * k
        if k < 35:
            q = np.array([0.1, 0.2, -0.5]) + rng.normal(0.0, 0.01, 3)
            runtime.put('joint_state', Sample({'pos_rad': q, 'vel_rad_s': rng.normal(0, .1, 3),
                                               'names': np.array(['ankle', 'hip', 'knee'])},
                                              t, t))
        runtime.put('imu', Sample({'quat_wxyz': np.array([1.0, 0, 0, 0]),
                                   'ang_vel_b': rng.normal(0.0, 0.05, 3)}, t, t))
        if k == 5:
            runtime.enable(t)
        runtime.step(t + 0.001)


FLIGHTS = {'quadrotor': ('quad_params_file', _quadrotor_flight, 150),
           'joint robot': ('joint_params_file', _joint_flight, 50)}


def _record(tmp_path, params_file, flight):
    """Fly a recording runtime; the log read back."""
    recorder = Recorder(RecorderCfg(tmp_path))
    runtime = RecordingRuntime(Runtime.from_files(None, params_file), recorder)
    flight(runtime, np.random.default_rng(0))
    stats = recorder.close()
    assert stats.dropped == 0
    log = read_log(stats.files[0])
    assert log.damage is None
    return log


@pytest.mark.parametrize('robot', FLIGHTS)
def test_replay_of_the_same_policy_decides_exactly_the_same(robot, tmp_path, request):
    """Every command, action and observation equal to the last bit; the latches (NaN,
    stale, estop) at the same ticks; every enable answered the same."""
    fixture, flight, ticks = FLIGHTS[robot]
    params_file = request.getfixturevalue(fixture)
    log = _record(tmp_path, params_file, flight)
    result = replay(log, Runtime.from_files(None, params_file))
    assert result.ticks == ticks
    assert (result.max_abs_command_diff, result.max_abs_action_diff,
            result.max_abs_observation_diff) == (0.0, 0.0, 0.0)
    assert result.first_state_mismatch_tick is None and result.call_mismatches == []
    reasons = {reason.split(':')[0] for _, reason in result.states if reason}
    assert reasons >= ({'nan', 'estop'} if robot == 'quadrotor' else {'stale'})
    assert {'active', 'fallback'} <= {state for state, _ in result.states}


def test_replay_with_another_policy_shows_what_it_would_have_commanded(
        tmp_path, quad_params_file, quad_contract, write_params):
    """A policy with other weights on the same data: its commands differ while armed and
    are the same off and in the fallback (the safety chain's, not the policy's)."""
    log = _record(tmp_path, quad_params_file, _quadrotor_flight)
    other = export_onnx(tiny_policy(quad_contract.observation_size, quad_contract.action.size,
                                    seed=1), quad_contract, tmp_path / 'other.onnx')
    result = replay(log, Runtime.from_files(None, write_params({'policy_file': str(other)})))
    assert result.max_abs_command_diff > 1e-3 and result.max_abs_action_diff > 1e-3
    for (state, _), logged, replayed in zip(result.states, result.logged_commands,
                                            result.replayed_commands):
        if state == 'inactive':
            np.testing.assert_array_equal(logged, replayed)


def test_differences_count_nan_and_shape_changes():
    """NaN against NaN is no difference; NaN against a number, another shape or a missing
    array is an infinite one."""
    nan = float('nan')
    assert max_abs_diff(np.array([nan, 1.0]), np.array([nan, 1.5])) == 0.5
    assert max_abs_diff(np.array([nan]), np.array([0.0])) == float('inf')
    assert max_abs_diff(np.array([1.0, 2.0]), np.array([1.0])) == float('inf')
    assert max_abs_diff(None, np.array([1.0])) == float('inf')
    assert max_abs_diff(np.array([np.inf]), np.array([np.inf])) == 0.0


def _node_log(tmp_path, params_file):
    """A quadrotor flight recorded as the node records it (NodeRecorder), read back."""
    import dataclasses
    from sim2real.deploy.record.node_recorder import NodeRecorder
    runtime = Runtime.from_files(None, params_file)
    values = dataclasses.asdict(runtime.params)
    values['record_dir'] = str(tmp_path / 'flights')
    runtime.params.record_dir = values['record_dir']
    node = NodeRecorder(values, runtime, 'policy_node')
    _quadrotor_flight(node.runtime, np.random.default_rng(1))
    node.close()
    (path,) = (tmp_path / 'flights').glob('quadrotor_*.mcap')
    return read_log(path)


def test_the_node_log_rebuilds_its_runtime_from_its_attachments(tmp_path, quad_params_file):
    """Parameters, policy and URDF come back from the log alone and replay exactly; the
    metadata names the policy's and the URDF's SHA-256; an attached policy that does not
    hash to the logged digest is refused naming both."""
    import hashlib
    from sim2real.deploy.record.rebuild import rebuild_runtime
    log = _node_log(tmp_path, quad_params_file)
    meta = log.metadata['sim2real']
    assert set(log.attachments) == {'params.yaml', 'contract.json', 'policy.onnx',
                                    'robot.urdf'}
    assert meta['policy_sha256'] == hashlib.sha256(log.attachments['policy.onnx']).hexdigest()
    assert meta['urdf_sha256'] == hashlib.sha256(log.attachments['robot.urdf']).hexdigest()
    rebuilt = rebuild_runtime(log, tmp_path / 'work')
    assert rebuilt.same_policy
    result = replay(log, rebuilt.runtime)
    assert result.ticks == 150 and result.max_abs_command_diff == 0.0
    assert result.first_state_mismatch_tick is None
    log.attachments['policy.onnx'] += b'\0'
    altered = hashlib.sha256(log.attachments['policy.onnx']).hexdigest()
    with pytest.raises(ValueError, match=f'hashes to {altered}, the log says the node ran '
                                         f'{meta["policy_sha256"]}'):
        rebuild_runtime(log, tmp_path / 'work2')


def test_replay_reports_the_share_of_ticks_each_term_left_its_band(
        tmp_path, quad_params_file, quad_contract, write_params):
    """Bands set to the logged observations' own min and max flag nothing; with the first
    term's first element capped at its median, that term is flagged at the ticks above the
    median (their share, from the first of them), the others never."""
    log = _record(tmp_path, quad_params_file, _quadrotor_flight)
    first = replay(log, Runtime.from_files(None, quad_params_file))
    observed = np.array([o for o in first.observations if o is not None])
    bands, start = [], 0
    for term in quad_contract.observations:
        width = term.size * term.history_length
        values = observed[:, start:start + width].reshape(-1, term.size)
        start += width
        bands.append(TermBand(low=values.min(0).tolist(), high=values.max(0).tolist(),
                              mean=values.mean(0).tolist(), std=values.std(0).tolist(),
                              samples=len(values)))

    def replay_with(bands_used):
        banded = with_bands(quad_contract, bands_used)
        policy = export_onnx(tiny_policy(quad_contract.observation_size,
                                         quad_contract.action.size), banded,
                             tmp_path / f'banded{len(list(tmp_path.iterdir()))}.onnx')
        params = write_params({'policy_file': str(policy)})
        return replay(log, Runtime.from_files(None, params))

    inside = replay_with(bands)
    assert inside.max_abs_command_diff == 0.0
    assert set(inside.ood_share().values()) == {0.0} and inside.ood_first_tick == {}
    name = quad_contract.observations[0].name
    column = observed[:, 0]
    median = float(np.median(column))
    capped = [TermBand(**{**vars(bands[0]), 'high': [median, *bands[0].high[1:]]}),
              *bands[1:]]
    result = replay_with(capped)
    above = column > median * (1 + 1e-6) + 1e-6
    assert result.ood_share()[name] == pytest.approx(above.mean())
    assert 0.3 < result.ood_share()[name] < 0.7
    assert sum(result.ood_share().values()) == result.ood_share()[name]
    ticks_with_obs = [i for i, o in enumerate(first.observations) if o is not None]
    assert result.ood_first_tick == {name: ticks_with_obs[int(np.argmax(above))]}
    # timed from the policy's first tick, not from the log's idle ticks before the arm
    assert ticks_with_obs[0] > 0
    assert result.ood_first_s()[name] == pytest.approx(
        first.now_s[ticks_with_obs[int(np.argmax(above))]] - first.now_s[ticks_with_obs[0]])
    summary = result.summary()
    assert summary['ood_share'][name] == result.ood_share()[name]
    assert summary['policy_ticks'] == len(observed) and summary['ood_banded'] is True
