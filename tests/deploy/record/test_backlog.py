"""The recorder's backlog: records queued by the tick, encoded in the loop's slack."""

import json
import math
import time

import pytest

from sim2real.deploy.record.reader import read_log
from sim2real.deploy.record.runtime_log import Backlog, RecordingRuntime, TICK_TOPIC
from sim2real.deploy.record.writer import Recorder, RecorderCfg
from sim2real.deploy.runtime import Runtime

pytestmark = pytest.mark.filterwarnings('ignore::DeprecationWarning')


def test_drain_encodes_in_order_until_the_deadline():
    """Five records: a deadline already past encodes none; then all five, oldest first."""
    done = []
    backlog = Backlog(on_drop=lambda: None)
    for k in range(5):
        backlog.add(done.append, k)
    assert backlog.drain(time.monotonic() - 1.0) == 0 and len(backlog) == 5
    assert backlog.drain() == 5 and done == [0, 1, 2, 3, 4] and len(backlog) == 0


def test_past_the_limit_a_record_is_dropped_and_counted_never_waited_for():
    """limit 3, five records: two dropped (counted), the first three kept."""
    dropped, done = [], []
    backlog = Backlog(on_drop=lambda: dropped.append(1), limit=3)
    for k in range(5):
        backlog.add(done.append, k)
    assert len(dropped) == 2
    backlog.drain(math.inf)
    assert done == [0, 1, 2]


def test_a_queued_tick_holds_what_the_tick_saw(tmp_path, quad_params_file):
    """A real runtime's tick, queued: its command array overwritten in place before the
    backlog is drained (a caller reusing it), the file still holds the tick's own command;
    the backlog drained, nothing is dropped."""
    recorder = Recorder(RecorderCfg(tmp_path))
    backlog = Backlog(recorder.count_dropped)
    runtime = RecordingRuntime(Runtime.from_files(None, quad_params_file), recorder, backlog)
    result = runtime.step(0.01)
    sent = result.command.tolist()
    result.command[:] = 7.0
    assert len(backlog) == 1
    backlog.drain()
    stats = recorder.close()
    assert stats.dropped == 0 and stats.written == 1
    log = read_log(stats.files[0])
    (tick,) = [json.loads(m.data) for m in log.messages if m.topic == TICK_TOPIC]
    assert tick['command'] == sent and 7.0 not in sent and tick['now_s'] == 0.01


def test_a_flight_whose_records_all_waited_replays_exactly(tmp_path, quad_params_file):
    """The quadrotor flight of test_replay (NaN latch, re-enable, estop) with every record
    left in the backlog until the end: the replay decides exactly what the flight did."""
    import numpy as np

    from sim2real.deploy.record.replay import replay
    from tests.deploy.record.test_replay import _quadrotor_flight
    recorder = Recorder(RecorderCfg(tmp_path))
    backlog = Backlog(recorder.count_dropped)
    runtime = RecordingRuntime(Runtime.from_files(None, quad_params_file), recorder, backlog)
    _quadrotor_flight(runtime, np.random.default_rng(0))
    assert len(backlog) == 150 * 3 + 3   # puts, ticks and the three calls, all waiting
    backlog.drain()
    stats = recorder.close()
    assert stats.dropped == 0
    result = replay(read_log(stats.files[0]), Runtime.from_files(None, quad_params_file))
    assert result.ticks == 150 and result.max_abs_command_diff == 0.0
    assert result.first_state_mismatch_tick is None and result.call_mismatches == []
