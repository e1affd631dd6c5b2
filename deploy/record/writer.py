"""The recorder's writer: MCAP files written by a process of their own, never by the caller.

The control thread calls `Recorder.write`, which appends a framed record to a buffer and,
every `send_interval_s` or `send_bytes`, hands the buffer to a non-blocking pipe (one
system call, the interpreter lock released); the writer process (writer_process.py) builds
the MCAP chunks, compresses and writes them. A writer thread in the node's own interpreter
would take the interpreter lock from the control loop for every record it encodes; a
process takes nothing from it. When the pipe is full and the buffer holds `queue_bytes`, a
record is dropped and counted, never waited for.

The writer process finishes a chunk at least every `flush_interval_s` and starts a new
file (with the same schemas, channels, metadata and attachments) when one passes
`max_file_bytes`. A node killed with SIGKILL closes the pipe: the writer writes what it
received and finishes the file; killed with it, it leaves a file that a reader reads up
to its last finished chunk. It ignores SIGINT and SIGTERM (a Ctrl-C reaches the whole
process group): the node's close() or its exit ends it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
import json
import logging
import os
from pathlib import Path
import pickle
import struct
import subprocess
import sys
import threading
import time

import orjson

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
    send_interval_s: float = 0.01
    """Longest time a record waits in this process before it is handed to the pipe."""
    send_bytes: int = 64 * 1024
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
INIT, CHANNEL, MESSAGE = 0, 1, 2
"""Frame kinds: the recorder's configuration (pickled), a channel (pickled ChannelSpec), a
message."""
PIPE_BYTES = 1024 * 1024
"""Pipe capacity asked of the kernel (Linux F_SETPIPE_SZ; 64 KiB where refused)."""


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
        self._buffer = bytearray()
        self._sent_s = time.monotonic()
        self._channels = 0
        self._closed = False
        self._child_dropped = 0
        cfg.folder.mkdir(parents=True, exist_ok=True)
        self._proc = subprocess.Popen(
            [sys.executable, '-m', 'sim2real.deploy.record.writer_process'],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, close_fds=True)
        self._fd = self._proc.stdin.fileno()
        _grow_pipe(self._fd)
        init = {'cfg': {**asdict(cfg), 'folder': str(cfg.folder)}, 'profile': profile,
                'metadata': dict(metadata or {}), 'attachments': dict(attachments or {}),
                'started_ns': time.time_ns()}
        self._proc.stdin.write(frame(INIT, 0, 0, 0, pickle.dumps(init)))
        self._proc.stdin.flush()
        os.set_blocking(self._fd, False)
        self._reports = threading.Thread(target=self._read_reports, name='sim2real-recorder',
                                         daemon=True)
        self._reports.start()

    def channel(self, spec: ChannelSpec) -> int:
        """Register a channel (any thread); its id for write()."""
        with self._lock:
            key = self._channels
            self._channels += 1
        self._put(frame(CHANNEL, key, 0, 0, pickle.dumps(spec)))
        return key

    def write(self, channel: int, data: bytes, log_time_ns: int,
              publish_time_ns: int | None = None) -> bool:
        """Queue one message; False (and counted) when the writer is behind or stopped."""
        return self._put(frame(MESSAGE, channel, log_time_ns,
                               log_time_ns if publish_time_ns is None else publish_time_ns,
                               data))

    def write_json(self, channel: int, obj: dict, log_time_ns: int) -> bool:
        """Queue one JSON message; numpy arrays in obj are written by orjson in C (finite
        ones: orjson writes NaN as null, so runtime_log.fast() sends those as strings)."""
        return self.write(channel, orjson.dumps(obj, option=orjson.OPT_SERIALIZE_NUMPY),
                          log_time_ns)

    def close(self, timeout_s: float = 10.0) -> RecorderStats:
        """Hand over what is buffered, let the writer finish the file and stop; the stats."""
        with self._lock:
            if self._closed:
                return self.stats
            self._closed = True
            try:
                os.set_blocking(self._fd, True)
                self._proc.stdin.write(bytes(self._buffer))
                self._buffer.clear()
                self._proc.stdin.close()
            except OSError as exc:   # the writer process is gone
                self.stats.error = self.stats.error or f'{type(exc).__name__}: {exc}'
        try:
            self._proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            log.error('the writer process did not finish in %g s; stopping it', timeout_s)
            self._proc.kill()
            self._proc.wait()
        self._reports.join(timeout_s)
        return self.stats

    def _put(self, data: bytes) -> bool:
        """Buffer a frame and hand the buffer to the pipe when due; a drop is counted when
        the buffer is full or the writer has stopped."""
        with self._lock:
            if self._closed or self.stats.error or len(self._buffer) >= self.cfg.queue_bytes:
                self.stats.dropped += 1
                return False
            self._buffer += data
            now_s = time.monotonic()
            if (len(self._buffer) >= self.cfg.send_bytes
                    or now_s - self._sent_s >= self.cfg.send_interval_s):
                self._send(now_s)
            return True

    def _send(self, now_s: float) -> None:
        """As much of the buffer as the pipe takes now (never waits)."""
        try:
            sent = os.write(self._fd, self._buffer)
        except BlockingIOError:
            sent = 0
        except OSError as exc:   # the writer process died: nothing more can be written
            self.stats.error = self.stats.error or f'writer process: {exc}'
            log.error('recorder stopped, later records are dropped: %s', self.stats.error)
            return
        del self._buffer[:sent]
        self._sent_s = now_s

    def _read_reports(self) -> None:
        """The writer process's reports (a JSON line after each flush and at the end)."""
        for line in self._proc.stdout:
            report = json.loads(line)
            with self._lock:
                self.stats.written = report['written']
                self.stats.dropped += report['dropped'] - self._child_dropped
                self._child_dropped = report['dropped']
                self.stats.files = report['files']
                if report['error'] and not self.stats.error:
                    self.stats.error = report['error']
                    log.error('recorder stopped, later records are dropped: %s',
                              self.stats.error)
        self._proc.stdout.close()


def _grow_pipe(fd: int) -> None:
    """Ask for a PIPE_BYTES pipe (Linux; the default 64 KiB elsewhere or when refused)."""
    try:
        import fcntl
        fcntl.fcntl(fd, getattr(fcntl, 'F_SETPIPE_SZ', 1031), PIPE_BYTES)
    except (ImportError, OSError):
        pass
