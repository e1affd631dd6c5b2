"""`replay --out`'s report from in-process recordings: markdown with the replay's figures
and events, and the robot's panels as PNGs (no band plot for a policy without bands)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from sim2real.deploy.record.replay import replay
from sim2real.deploy.record.report import write_report
from sim2real.deploy.record.series import flight_series, truth_folder
from sim2real.deploy.runtime import Runtime
from tests.deploy.record.test_replay import _joint_flight, _quadrotor_flight, _record

pytestmark = pytest.mark.filterwarnings('ignore::DeprecationWarning')


def _report(tmp_path, params_file, flight):
    """Record a flight, replay it, write its report; (paths, series, markdown)."""
    log = _record(tmp_path / 'log', params_file, flight)
    runtime = Runtime.from_files(None, params_file)
    result = replay(log, runtime)
    summary = {'log': 'x.mcap', 'same_policy': True, 'policy_sha256': 'ab' * 32,
               'damage': None, **result.summary()}
    series = flight_series(log, runtime.contract, dataclasses.asdict(runtime.params))
    paths = write_report(tmp_path / 'out', summary, series, result, 'pass: test')
    return paths, series, (tmp_path / 'out' / 'report.md').read_text()


def test_a_quadrotor_report_plots_position_and_lists_the_latches(tmp_path, quad_params_file):
    """150 ticks from 0.005 s; events: the enables 0.048 s and 1.198 s after the first tick,
    the NaN imu latch at 1.0 s, the estop at 1.399 s; a position plot; no band plot and a
    line saying why."""
    paths, series, text = _report(tmp_path, quad_params_file, _quadrotor_flight)
    assert [p.name for p in paths] == ['report.md', 'position_attitude.png']
    assert paths[1].read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'
    assert len(series.tick_t_s) == 150 and series.tick_t_s[0] == 0.0
    assert series.tick_t_s[-1] == pytest.approx(1.49)
    calls = [(e.text, round(e.t_s, 6)) for e in series.events
             if e.text in ('enable', 'estop')]
    assert calls == [('enable', 0.048), ('enable', 1.198), ('estop', 1.399)]
    assert any(e.text == 'state fallback:nan:imu' and e.t_s == pytest.approx(1.0)
               for e in series.events)
    assert '| ticks                     | 150     |' in text
    assert 'carries no training band' in text
    target = series.estimated('target_pos_w_m')[1]
    np.testing.assert_array_equal(target[-1], [0.0, 0.0, 1.5])


def test_a_joint_robot_report_plots_each_joint_against_its_target(tmp_path, joint_params_file):
    """A 3-joint robot (registered with the quadruped's folder): the joint plot is written,
    measured positions mapped by name into the contract's order (hip 0.2, knee -0.5 rad)."""
    paths, series, text = _report(tmp_path, joint_params_file, _joint_flight)
    assert [p.name for p in paths] == ['report.md', 'joints.png']
    assert 'state fallback:stale:joint_state' in text
    stream = series.puts['joint_state']
    assert len(stream.t_s) == 35


def test_the_truth_folder_is_found_beside_a_hil_node_recording(tmp_path):
    """DIR/policy_node (or a file in it) -> DIR/sim_bridge when it holds an .mcap."""
    (tmp_path / 'policy_node').mkdir()
    (tmp_path / 'sim_bridge').mkdir()
    assert truth_folder(tmp_path / 'policy_node') is None
    (tmp_path / 'sim_bridge' / 'a.mcap').write_bytes(b'')
    assert truth_folder(tmp_path / 'policy_node') == tmp_path / 'sim_bridge'
    assert truth_folder(tmp_path / 'policy_node' / 'x.mcap') == tmp_path / 'sim_bridge'
    assert truth_folder(tmp_path / 'elsewhere') is None
