"""The recorder's writer: MCAP files written by a process of their own, never by the caller.

The control thread calls `Recorder.write` (or `write_packed`, whose JSON the writer process
encodes: the node's interpreter lock is spent on it only for one ``marshal`` call), which
appends a framed record to a buffer and
hands the buffer to a non-blocking pipe once it is `send_interval_s` old or `send_bytes`
big (one system call); a helper thread hands over what no later write sent, every
`send_interval_s`, and reads the writer's reports. The writer process (writer_process.py)
builds the MCAP chunks, compresses and writes them: a writer thread in the node's own
interpreter would take the interpreter lock from the control loop for every record. When
the pipe is full the buffer grows; past `queue_bytes` records are dropped and counted,
never waited for, until the writer has caught up.

The writer process finishes a chunk at least every `flush_interval_s` and starts a new
file (with the same schemas, channels, metadata and attachments) when one passes
`max_file_bytes`. A node killed with SIGKILL closes the pipe: the writer writes what it
received and finishes the file; killed too, it leaves a file that a reader reads up to its
last finished chunk. It runs in a process group of its own and ignores SIGINT and SIGTERM:
the node's close(), the recorder's collection or the node's exit ends it.
"""

from __future__ import annotations

import collections
from dataclasses import asdict, dataclass, field
import json
import logging
import marshal
import os
from pathlib import Path
import pickle
import select
import struct
import subprocess
import sys
import threading
import time
import weakref

from sim2real.deploy.record.json_values import encode

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RecorderCfg:
    """Where and how the recorder writes."""

    folder: Path
    """Folder of the files (created)."""
    prefix: str = 'flight'
    """File names: <prefix>_<UTC start>_<index>.mcap."""
    max_file_bytes: int = 512 * 1024 * 1024
    """A file past this size is finished and a new one started."""
    flush_interval_s: float = 0.5
    """Longest time a record waits in memory before its chunk is written to the file."""
    queue_bytes: int = 64 * 1024 * 1024
    """Bytes waiting in this process for the pipe at most; more records are dropped (and
    counted)."""
    send_interval_s: float = 0.1
    """Time after which buffered records are handed to the pipe (by the next write, or by the
    helper thread within another interval)."""
    send_bytes: int = 256 * 1024
    """Buffered bytes handed to the pipe at once, whatever the time."""
    chunk_bytes: int = 256 * 1024
    """Uncompressed size at which a chunk is finished early."""

    def __post_init__(self):
        """Positive sizes and intervals."""
        for name in ('max_file_bytes', 'flush_interval_s', 'queue_bytes', 'chunk_bytes',
                     'send_interval_s', 'send_bytes'):
            if not getattr(self, name) > 0:
                raise ValueError(f'recorder {name} must be positive, got {getattr(self, name)}')


@dataclass(frozen=True)
class ChannelSpec:
    """A channel and its schema, as MCAP registers them."""

    topic: str
    message_encoding: str
    """'cdr' (ROS 2 messages) or 'json'."""
    schema_name: str
    schema_encoding: str
    """'ros2msg' or 'jsonschema'."""
    schema_data: bytes


def ros2_channel(topic: str, ros_type: str) -> ChannelSpec:
    """A channel of CDR-encoded ROS 2 messages of ros_type ('sensor_msgs/msg/Imu')."""
    from sim2real.deploy.record.msgdefs import concatenated
    return ChannelSpec(topic, 'cdr', ros_type, 'ros2msg', concatenated(ros_type).encode())


def json_channel(topic: str, schema_name: str, properties: dict) -> ChannelSpec:
    """A channel of JSON objects with the given JSON-schema properties."""
    schema = {'type': 'object', 'title': schema_name, 'properties': properties}
    return ChannelSpec(topic, 'json', schema_name, 'jsonschema',
                       json.dumps(schema, sort_keys=True).encode())


@dataclass
class RecorderStats:
    """What the recorder did: records written and dropped, files started."""

    written: int = 0
    dropped: int = 0
    files: list[str] = field(default_factory=list)
    error: str = ''
    """Why the writer stopped, if it did (a full disk): later records are dropped."""


FRAME = struct.Struct('<BIqqI')
"""A record on the pipe: kind, channel key, log time [ns], publish time [ns], data size."""
INIT, CHANNEL, MESSAGE, PACKED = 0, 1, 2, 3
"""Frame kinds: the recorder's configuration (pickled), a channel (pickled ChannelSpec), a
message, a message the writer process encodes as JSON (json_values.pack, marshalled)."""
PIPE_BYTES = 1024 * 1024
"""Pipe capacity asked of the kernel (Linux F_SETPIPE_SZ; 64 KiB where refused)."""
CLOSE_TIMEOUT_S = 10.0
"""Longest wait for the writer process to take the last records and finish its file [s]."""


def frame(kind: int, channel: int, log_ns: int, publish_ns: int, data: bytes) -> bytes:
    """One record as the writer process reads it."""
    return FRAME.pack(kind, channel, log_ns, publish_ns, len(data)) + data


class Recorder:
    """MCAP files written by a writer process from a pipe (see the module docstring)."""

    def __init__(self, cfg: RecorderCfg, metadata: dict[str, dict[str, str]] | None = None,
                 attachments: dict[str, bytes] | None = None, profile: str = 'ros2'):
        """Start the writer process; metadata and attachments go into every file."""
        self.cfg = cfg
        self.stats = RecorderStats()
        self._lock = threading.Lock()
        self._out = _Outbox()
        self._channels = 0
        self._closed = False
        self._child_dropped = 0
        cfg.folder.mkdir(parents=True, exist_ok=True)
        # a process group of its own: a Ctrl-C to the node's group never reaches the writer
        # (not even before it has set its handlers); the node's close() or exit ends it
        self._proc = subprocess.Popen(
            [sys.executable, '-m', 'sim2real.deploy.record.writer_process'],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, close_fds=True, process_group=0)
        self._fd = self._proc.stdin.fileno()
        _grow_pipe(self._fd)
        init = {'cfg': {**asdict(cfg), 'folder': str(cfg.folder)}, 'profile': profile,
                'metadata': dict(metadata or {}), 'attachments': dict(attachments or {}),
                'started_ns': time.time_ns()}
        try:
            self._proc.stdin.write(frame(INIT, 0, 0, 0, pickle.dumps(init)))
            self._proc.stdin.flush()
        except OSError as exc:   # the writer died at start: record nothing, keep running
            self._fail(f'writer process: {exc}')
        os.set_blocking(self._fd, False)
        # at exit or when dropped unclosed: hand over what is buffered, end the writer
        self._finalizer = weakref.finalize(self, _deliver_rest, self._proc, self._out,
                                           CLOSE_TIMEOUT_S)
        self._reports = threading.Thread(target=_serve_reports, args=(weakref.ref(self),
                                         self._proc.stdout, cfg.send_interval_s),
                                         name='sim2real-recorder', daemon=True)
        self._reports.start()

    def channel(self, spec: ChannelSpec) -> int:
        """Register a channel (any thread); its id for write(). Never dropped: the writer
        must know every channel a message may name."""
        with self._lock:
            key = self._channels
            self._channels += 1
            self._out.add(frame(CHANNEL, key, 0, 0, pickle.dumps(spec)))
            self._send_if_due(time.monotonic())
        return key

    def write(self, channel: int, data: bytes, log_time_ns: int,
              publish_time_ns: int | None = None) -> bool:
        """Queue one message; False (and counted) when the writer is behind or stopped."""
        return self._put(frame(MESSAGE, channel, log_time_ns,
                               log_time_ns if publish_time_ns is None else publish_time_ns,
                               data))

    def write_json(self, channel: int, obj: dict, log_time_ns: int) -> bool:
        """Queue one JSON message, encoded here (json_values.encode)."""
        return self.write(channel, encode(obj), log_time_ns)

    def write_packed(self, channel: int, packed: dict, log_time_ns: int) -> bool:
        """Queue one JSON message that the writer process encodes: packed is
        json_values.pack(obj), the message encode(obj); here only one marshal call."""
        return self._put(frame(PACKED, channel, log_time_ns, log_time_ns,
                               marshal.dumps(packed)))

    def count_dropped(self, records: int = 1) -> None:
        """Count records lost before they reached write() (one that could not be encoded)."""
        with self._lock:
            self.stats.dropped += records

    def close(self, timeout_s: float = CLOSE_TIMEOUT_S) -> RecorderStats:
        """Hand over what is buffered, let the writer finish the file and stop; the stats."""
        with self._lock:
            if self._closed:
                return self.stats
            self._closed = True
        self._finalizer.detach()
        lost = _deliver_rest(self._proc, self._out, timeout_s)
        with self._lock:
            self.stats.dropped += lost
            if lost and not self.stats.error:
                self.stats.error = 'the writer process stopped reading'
        self._reports.join(timeout_s)
        return self.stats

    def _put(self, data: bytes) -> bool:
        """Buffer a frame and hand the buffer to the pipe when due; a drop is counted when
        the pipe and the buffer are full or the writer has stopped."""
        with self._lock:
            now_s = time.monotonic()
            if self._out.size() >= self.cfg.queue_bytes:
                self._send(now_s)   # the writer may have caught up since
            if self._closed or self.stats.error or self._out.size() >= self.cfg.queue_bytes:
                self.stats.dropped += 1
                return False
            self._out.add(data)
            self._send_if_due(now_s)
            return True

    def _send_if_due(self, now_s: float) -> None:
        """Hand the buffer to the pipe when it is big or old enough (lock held)."""
        if (self._out.size() >= self.cfg.send_bytes
                or now_s - self._out.sent_s >= self.cfg.send_interval_s):
            self._send(now_s)

    def _send(self, now_s: float) -> None:
        """As much of the buffer as the pipe takes now, never waiting (lock held)."""
        if self.stats.error or not self._out.size():
            self._out.sent_s = now_s
            return
        try:
            self._out.sent(os.write(self._fd, self._out.data), now_s)
        except BlockingIOError:
            pass
        except OSError as exc:   # the writer process died: nothing more can be written
            self.stats.dropped += self._out.clear()
            self._fail(f'writer process: {exc}')

    def _fail(self, error: str) -> None:
        """Stop recording for good: later records are dropped (lock held or at start)."""
        if not self.stats.error:
            self.stats.error = error
            log.error('recorder stopped, later records are dropped: %s', error)

    def _report(self, report: dict) -> None:
        """A report of the writer process."""
        with self._lock:
            self.stats.written = report['written']
            self.stats.dropped += report['dropped'] - self._child_dropped
            self._child_dropped = report['dropped']
            self.stats.files = report['files']
            if report['error']:
                self._fail(report['error'])

    def _send_stale(self) -> None:
        """Hand over records that have waited send_interval_s (no write came since)."""
        with self._lock:
            if not self._closed:
                self._send_if_due(time.monotonic())


class _Outbox:
    """Framed records not yet in the pipe, with each one's size (to count what is lost)."""

    def __init__(self):
        """Empty."""
        self.data = bytearray()
        self._sizes: collections.deque = collections.deque()
        self._head_sent = 0
        self.sent_s = time.monotonic()

    def add(self, framed: bytes) -> None:
        """One more record."""
        self.data += framed
        self._sizes.append(len(framed))

    def size(self) -> int:
        """Bytes waiting."""
        return len(self.data)

    def sent(self, count: int, now_s: float) -> None:
        """count bytes went into the pipe at now_s."""
        del self.data[:count]
        count += self._head_sent
        while self._sizes and count >= self._sizes[0]:
            count -= self._sizes.popleft()
        self._head_sent = count
        self.sent_s = now_s

    def clear(self) -> int:
        """Forget everything; the records lost (a partly sent one too)."""
        lost = len(self._sizes)
        self.data.clear()
        self._sizes.clear()
        self._head_sent = 0
        return lost


def _deliver_rest(proc: subprocess.Popen, out: _Outbox, timeout_s: float) -> int:
    """Write what is buffered to the writer (waiting for the pipe until timeout_s), close
    its input and wait for it to finish; the records that could not be handed over."""
    deadline_s = time.monotonic() + timeout_s
    fd = proc.stdin.fileno()
    try:
        while out.size() and time.monotonic() < deadline_s:
            select.select([], [fd], [], max(0.0, deadline_s - time.monotonic()))
            try:
                out.sent(os.write(fd, out.data), time.monotonic())
            except BlockingIOError:
                pass
    except OSError:   # the writer process is gone
        pass
    lost = out.clear()
    try:
        proc.stdin.close()
    except OSError:
        pass
    try:
        proc.wait(max(0.0, deadline_s - time.monotonic()))
    except subprocess.TimeoutExpired:
        log.error('the writer process did not finish in %g s; stopping it', timeout_s)
        proc.kill()
        proc.wait()
    return lost


def _serve_reports(recorder_ref, stdout, interval_s: float) -> None:
    """The recorder's helper thread: the writer's reports (a JSON line after each flush and
    at the end), and every interval_s a hand-over of records no later write has sent. Ends
    with the writer's output (the recorder closed, or dropped unclosed)."""
    fd = stdout.fileno()
    pending = b''
    while True:
        ready, _, _ = select.select([fd], [], [], interval_s)
        recorder = recorder_ref()
        if recorder is None:
            break
        if ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            *lines, pending = (pending + chunk).split(b'\n')
            for line in lines:
                try:
                    recorder._report(json.loads(line))
                except (ValueError, KeyError, TypeError):
                    log.warning('unreadable report from the writer process: %r', line[:200])
        recorder._send_stale()
        del recorder
    stdout.close()


def _grow_pipe(fd: int) -> None:
    """Ask for a PIPE_BYTES pipe (Linux; the default 64 KiB elsewhere or when refused)."""
    try:
        import fcntl
        fcntl.fcntl(fd, getattr(fcntl, 'F_SETPIPE_SZ', 1031), PIPE_BYTES)
    except (ImportError, OSError):
        pass
