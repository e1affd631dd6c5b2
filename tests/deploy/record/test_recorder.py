"""The flight recorder's MCAP writer: ROS 2 messages that decode to their types, JSON ticks,
metadata and attachments in every file, rotation, drops counted never waited for, and a
file cut by SIGKILL read up to its last flushed chunk."""

from __future__ import annotations

import math
import os
from pathlib import Path
import signal
import subprocess
import sys
import time

import pytest
from rclpy.serialization import serialize_message

from sim2real.deploy.record.reader import decode, read_log
from sim2real.deploy.record.writer import json_channel, Recorder, RecorderCfg, ros2_channel

pytestmark = pytest.mark.filterwarnings('ignore::DeprecationWarning')


def _messages():
    """One each of the types the node receives, with values to check."""
    from geometry_msgs.msg import Twist
    from nav_msgs.msg import Odometry
    from sensor_msgs.msg import Imu, JointState
    odom = Odometry()
    odom.header.frame_id = 'world'
    odom.pose.pose.position.z = 1.5
    odom.twist.covariance[35] = 0.25
    imu = Imu()
    imu.angular_velocity.x = -0.75
    imu.header.stamp.sec, imu.header.stamp.nanosec = 12, 345
    joints = JointState()
    joints.name = ['FL_hip_joint', 'FL_thigh_joint']
    joints.position = [0.1, 0.8]
    twist = Twist()
    twist.linear.x = 0.5
    return {'/odom': ('nav_msgs/msg/Odometry', odom), '/imu': ('sensor_msgs/msg/Imu', imu),
            '/joint_states': ('sensor_msgs/msg/JointState', joints),
            '/cmd_vel': ('geometry_msgs/msg/Twist', twist)}


def test_ros_messages_and_json_ticks_round_trip_with_metadata(tmp_path):
    """Every ROS message decodes to its type with its values; JSON ticks come back equal;
    the metadata and attachments are in the file; log times are kept in order."""
    rec = Recorder(RecorderCfg(tmp_path), metadata={'sim2real': {'robot': 'quadrotor'}},
                   attachments={'contract.json': b'{"task": "quadrotor-hover"}'})
    sent = _messages()
    ids = {topic: rec.channel(ros2_channel(topic, ros_type))
           for topic, (ros_type, _) in sent.items()}
    tick = rec.channel(json_channel('/sim2real/tick', 'sim2real/Tick',
                                    {'now_s': {'type': 'number'}}))
    for i in range(50):
        for topic, (_, msg) in sent.items():
            assert rec.write(ids[topic], serialize_message(msg), 1_000_000 * i)
        assert rec.write_json(tick, {'now_s': 0.01 * i, 'obs': [math.pi, -1e-30]},
                              1_000_000 * i)
    stats = rec.close()
    assert (stats.written, stats.dropped, len(stats.files)) == (250, 0, 1)
    log = read_log(stats.files[0])
    assert log.damage is None
    assert log.metadata == {'sim2real': {'robot': 'quadrotor'}}
    assert log.attachments == {'contract.json': b'{"task": "quadrotor-hover"}'}
    by_topic = {}
    for m in log.messages:
        by_topic.setdefault(m.topic, []).append(m)
    expected = {**{t: 50 for t in sent}, '/sim2real/tick': 50}
    assert {t: len(v) for t, v in by_topic.items()} == expected
    odom = decode(by_topic['/odom'][-1], log)
    assert (odom.header.frame_id, odom.pose.pose.position.z) == ('world', 1.5)
    assert odom.twist.covariance[35] == 0.25
    imu = decode(by_topic['/imu'][7], log)
    assert (imu.angular_velocity.x, imu.header.stamp.sec, imu.header.stamp.nanosec) == (
        -0.75, 12, 345)
    joints = decode(by_topic['/joint_states'][0], log)
    assert list(joints.name) == ['FL_hip_joint', 'FL_thigh_joint']
    assert list(joints.position) == [0.1, 0.8]
    assert decode(by_topic['/cmd_vel'][3], log).linear.x == 0.5
    assert decode(by_topic['/sim2real/tick'][9], log) == {'now_s': 0.09,
                                                          'obs': [math.pi, -1e-30]}
    assert [m.log_time_ns for m in by_topic['/imu']] == [1_000_000 * i for i in range(50)]


def test_a_full_file_is_finished_and_the_next_holds_the_same_channels(tmp_path):
    """Past max_file_bytes the recorder starts a new file; each reads whole on its own with
    its schemas, metadata and attachments; no message is lost or repeated."""
    cfg = RecorderCfg(tmp_path, max_file_bytes=20_000, flush_interval_s=0.02)
    rec = Recorder(cfg, metadata={'run': {'n': '1'}}, attachments={'a': b'x'})
    tick = rec.channel(json_channel('/t', 'T', {'i': {'type': 'integer'}}))
    for i in range(3000):
        rec.write_json(tick, {'i': i, 'pad': 'p' * 40}, i)
        if i % 100 == 0:
            time.sleep(0.03)   # let the writer flush and rotate
    stats = rec.close()
    assert stats.dropped == 0 and len(stats.files) >= 3
    seen = []
    for path in stats.files:
        log = read_log(path)
        assert log.damage is None and log.metadata == {'run': {'n': '1'}}
        assert log.attachments == {'a': b'x'}
        seen += [decode(m, log)['i'] for m in log.messages]
    assert seen == list(range(3000))


def test_a_writer_behind_drops_and_counts_never_blocks(tmp_path):
    """With room for one buffered byte, a 20 MB burst is partly dropped: write() returns at
    once, every record is either written or counted as dropped; after close() all are
    dropped."""
    rec = Recorder(RecorderCfg(tmp_path, queue_bytes=1))
    tick = rec.channel(json_channel('/t', 'T', {}))
    pad = 'p' * 1000
    tic = time.perf_counter()
    accepted = sum(rec.write_json(tick, {'i': i, 'pad': pad}, i) for i in range(20_000))
    burst_s = time.perf_counter() - tic
    stats = rec.close()
    written, dropped = stats.written, stats.dropped
    assert dropped > 0 and written + dropped == 20_000
    assert written == accepted and burst_s < 5.0
    assert not rec.write_json(tick, {'i': -1}, 0) and rec.stats.dropped == dropped + 1


KILLED_WRITER = """
import sys, time
from pathlib import Path
from sim2real.deploy.record.writer import json_channel, Recorder, RecorderCfg
rec = Recorder(RecorderCfg(Path(sys.argv[1]), flush_interval_s=0.5))
tick = rec.channel(json_channel('/tick', 'Tick', {}))
print('started', flush=True)
while True:
    rec.write_json(tick, {'t': time.time()}, time.time_ns())
    time.sleep(0.002)
"""


@pytest.mark.parametrize('with_writer', [False, True], ids=['node', 'node_and_writer'])
def test_a_node_killed_mid_run_leaves_a_file_read_to_within_one_second(tmp_path,
                                                                       with_writer):
    """SIGKILL after about 2.5 s of writing at 500 Hz. The node alone: its writer process
    finishes the file (it reads whole) up to the records of the last send interval. The
    node and its writer: the file reads up to its last flushed chunk, and says where reading
    stopped. Either way the last message read was logged at most 1 s before the kill."""
    proc = subprocess.Popen([sys.executable, '-c', KILLED_WRITER, str(tmp_path)],
                            stdout=subprocess.PIPE, text=True, start_new_session=True)
    assert proc.stdout.readline().strip() == 'started'
    time.sleep(2.5)
    killed_ns = time.time_ns()
    (writer,) = Path(f'/proc/{proc.pid}/task/{proc.pid}/children').read_text().split()
    os.kill(proc.pid, signal.SIGKILL)
    if with_writer:
        os.kill(int(writer), signal.SIGKILL)
    proc.wait(timeout=10)
    (path,) = list(Path(tmp_path).glob('*.mcap'))
    deadline = time.monotonic() + 10.0
    while not with_writer and read_log(path).damage and time.monotonic() < deadline:
        time.sleep(0.05)   # the orphaned writer is finishing the file
    log = read_log(path)
    assert (log.damage is not None and 'read ' in log.damage) == with_writer, log.damage
    assert len(log.messages) > 500
    # the node alone loses what it had not yet handed to the pipe: one send interval
    lag_ns = 1_000_000_000 if with_writer else int(3 * RecorderCfg.send_interval_s * 1e9)
    assert killed_ns - log.messages[-1].log_time_ns <= lag_ns, log.damage


def test_a_file_that_is_not_mcap_is_refused_by_name(tmp_path):
    """Bytes that are not MCAP: ValueError naming the file."""
    path = tmp_path / 'x.mcap'
    path.write_bytes(b'not an mcap file at all')
    with pytest.raises(ValueError, match='x.mcap: not an MCAP file'):
        read_log(path)


def test_records_queued_before_close_are_written_and_later_ones_counted(tmp_path):
    """5000 records written in a burst then close(): all 5000 in the file; a write after
    close is refused and counted as dropped."""
    from sim2real.deploy.record.reader import read_log
    from sim2real.deploy.record.writer import json_channel, Recorder, RecorderCfg
    recorder = Recorder(RecorderCfg(tmp_path))
    channel = recorder.channel(json_channel('/x', 'X', {'k': {'type': 'integer'}}))
    for k in range(5000):
        assert recorder.write_json(channel, {'k': k}, k)
    stats = recorder.close()
    assert stats.written == 5000 and stats.dropped == 0
    assert not recorder.write_json(channel, {'k': -1}, 0)
    assert recorder.stats.dropped == 1
    log = read_log(stats.files[0])
    assert [m.log_time_ns for m in log.messages] == list(range(5000))


def test_a_0d_array_and_nan_are_encoded_exactly():
    """fast(): a 0-d array and an array holding NaN reach JSON as numbers and strings."""
    import json
    import numpy as np
    import orjson
    from sim2real.deploy.record.json_values import array, fast
    text = orjson.dumps({'a': fast(np.array(1.5)), 'b': fast(np.array([1.0, np.nan])),
                         'c': fast(np.arange(3))}, option=orjson.OPT_SERIALIZE_NUMPY)
    back = json.loads(text)
    assert back == {'a': 1.5, 'b': [1.0, 'NaN'], 'c': [0, 1, 2]}
    assert np.isnan(array(back['b'])[1])


def test_a_writer_that_caught_up_takes_records_again(tmp_path):
    """A burst fills the pipe and a 64 KiB buffer (records dropped); once the writer has
    drained them, every later record is accepted and written."""
    rec = Recorder(RecorderCfg(tmp_path, queue_bytes=64 * 1024))
    tick = rec.channel(json_channel('/t', 'T', {}))
    pad = 'p' * 1000
    burst = sum(rec.write_json(tick, {'pad': pad}, i) for i in range(20_000))
    assert burst < 20_000
    time.sleep(1.0)
    later = [rec.write_json(tick, {'i': i}, i) for i in range(200)]
    stats = rec.close()
    assert all(later) and stats.written == burst + 200
    assert stats.dropped == 20_000 - burst


PAUSED_WRITER = """
import sys, time
from pathlib import Path
from sim2real.deploy.record.writer import json_channel, Recorder, RecorderCfg
rec = Recorder(RecorderCfg(Path(sys.argv[1])))
tick = rec.channel(json_channel('/tick', 'Tick', {}))
rec.write_json(tick, {'k': 'first'}, 1)
rec.write_json(tick, {'k': 'estop'}, 2)
print('written', flush=True)
time.sleep(60)
"""


def test_a_record_before_a_pause_reaches_the_file_without_a_later_write(tmp_path):
    """Two records 0 ms apart, then nothing: the recorder hands the second over within a
    send interval on its own, so a SIGKILL 0.5 s later leaves both in the file."""
    proc = subprocess.Popen([sys.executable, '-c', PAUSED_WRITER, str(tmp_path)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == 'written'
    time.sleep(0.5)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    (path,) = list(Path(tmp_path).glob('*.mcap'))
    deadline = time.monotonic() + 10.0
    while read_log(path).damage and time.monotonic() < deadline:
        time.sleep(0.05)
    log = read_log(path)
    assert [decode(m, log)['k'] for m in log.messages] == ['first', 'estop']


def test_a_recorder_dropped_unclosed_still_finishes_its_file(tmp_path):
    """A Recorder garbage-collected without close(): its writer gets the buffered records,
    finishes the file (it reads whole) and exits."""
    import gc
    rec = Recorder(RecorderCfg(tmp_path))
    tick = rec.channel(json_channel('/t', 'T', {}))
    for i in range(100):
        rec.write_json(tick, {'i': i}, i)
    proc = rec._proc
    del rec, tick
    gc.collect()
    proc.wait(timeout=10)
    (path,) = list(Path(tmp_path).glob('*.mcap'))
    log = read_log(path)
    assert log.damage is None and len(log.messages) == 100


FIFO_PARENT = """
import os, sys
from pathlib import Path
from sim2real.deploy.record.writer import Recorder, RecorderCfg
try:
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
except OSError:
    pass
rec = Recorder(RecorderCfg(Path(sys.argv[1])))
print(os.sched_getscheduler(0) == os.SCHED_FIFO, rec._proc.pid, flush=True)
sys.stdin.readline()
rec.close()
"""


def test_the_writer_process_runs_only_on_idle_cores_even_under_a_real_time_node(tmp_path):
    """The writer leaves the scheduling class of the node that starts it: SCHED_IDLE (it only
    has to keep up on average), also when the node runs SCHED_FIFO as the HIL runs it."""
    proc = subprocess.Popen([sys.executable, '-c', FIFO_PARENT, str(tmp_path)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        _, writer = proc.stdout.readline().split()
        deadline = time.monotonic() + 10.0
        while (os.sched_getscheduler(int(writer)) != os.SCHED_IDLE
               and time.monotonic() < deadline):
            time.sleep(0.05)   # the writer sets its class as it starts
        assert os.sched_getscheduler(int(writer)) == os.SCHED_IDLE
    finally:
        proc.communicate('\n', timeout=20)
    assert proc.returncode == 0
