"""A flight log as identification reads it (sim2real.sysid.flight): each stream's samples on
the steady clock by their stamps plus the median receive delay, the commands at their ticks,
and the spans in which the policy was in control."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from sim2real.deploy.runtime import Runtime
from sim2real.sysid.flight import load_flight
from tests.deploy.record.test_replay import _quadrotor_flight

pytestmark = pytest.mark.filterwarnings('ignore::DeprecationWarning')


def _node_log(tmp_path, params_file):
    """A quadrotor flight (1.5 s at 100 Hz) recorded as the node records it; its folder."""
    from sim2real.deploy.record.node_recorder import NodeRecorder
    runtime = Runtime.from_files(None, params_file)
    values = dataclasses.asdict(runtime.params)
    values['record_dir'] = runtime.params.record_dir = str(tmp_path / 'flights')
    node = NodeRecorder(values, runtime, 'policy_node')
    _quadrotor_flight(node.runtime, np.random.default_rng(1))
    node.close()
    return tmp_path / 'flights'


def test_a_node_log_becomes_streams_commands_and_active_spans(tmp_path, quad_params_file):
    """150 odom and imu samples each, stamped t and received 2 and 1 ms later: on the steady
    clock at t + 2 ms and t + 1 ms (offsets exactly those), values as put; 150 commands at
    the ticks' times t + 5 ms; in control ('active') from the end of the 0.2 s soft start
    after the enable at 0.05 s to the NaN latch at 1.0 s (the re-enable at 1.2 s is still
    in its soft start at the estop at 1.4 s)."""
    flight = load_flight(_node_log(tmp_path, quad_params_file))
    t = 0.01 * np.arange(150)
    assert flight.clock_offset_s == pytest.approx({'odom': 0.002, 'imu': 0.001})
    np.testing.assert_allclose(flight.streams['odom'].t_s, t + 0.002, atol=1e-12)
    np.testing.assert_allclose(flight.streams['imu'].t_s, t + 0.001, atol=1e-12)
    odom = flight.streams['odom'].values
    assert odom['pos_w'].shape == (150, 3) and odom['quat_wxyz'].shape == (150, 4)
    assert odom['pos_w'][:, 2] == pytest.approx(1.5, abs=0.01)
    assert np.isnan(flight.streams['imu'].values['ang_vel_b'][100, 0])
    np.testing.assert_allclose(flight.tick_t_s, t + 0.005, atol=1e-12)
    assert flight.commands.shape == (150, 4) and flight.tick_s == 0.01
    (span,) = flight.active_spans()
    assert span == pytest.approx((0.255, 1.005), abs=0.0101)
    assert {'soft_start', 'fallback', 'inactive'} <= set(flight.states)
    assert flight.active_spans(min_s=0.8) == []


def test_a_log_without_a_contract_is_refused(tmp_path):
    """A file that is no node log: refused naming what is missing."""
    from sim2real.deploy.record.writer import Recorder, RecorderCfg
    stats = Recorder(RecorderCfg(tmp_path)).close()
    with pytest.raises(ValueError, match='no contract attached'):
        load_flight(stats.files[0])
