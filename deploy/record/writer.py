"""The recorder's writer: MCAP files written by a background thread, never by the caller.

The control thread calls `Recorder.write`, which only appends the record to a bounded
deque and returns (no lock, no wake-up of the writer: a wake-up per record would hand the
interpreter lock to the writer thousands of times a second); when the deque is full the
record is dropped and counted, never waited for. The writer thread wakes every
`poll_interval_s`, writes what has accumulated and lets the control thread run between
every few records. The
writer thread finishes a chunk at least every `flush_interval_s`, so a process killed with
SIGKILL leaves a file that a reader reads up to its last finished chunk, and starts a new
file (with the same schemas, channels, metadata and attachments) when one passes
`max_file_bytes`.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass, field
import json
import logging
import os
from pathlib import Path
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
    queue_records: int = 100_000
    """Records waiting for the writer at most; more are dropped (and counted)."""
    poll_interval_s: float = 0.02
    """How often the writer thread takes what has accumulated."""
    chunk_bytes: int = 256 * 1024
    """Uncompressed size at which a chunk is finished early."""

    def __post_init__(self):
        """Positive sizes and interval."""
        for name in ('max_file_bytes', 'flush_interval_s', 'queue_records', 'chunk_bytes',
                     'poll_interval_s'):
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


YIELD_EVERY = 8
"""Records the writer writes before it lets another thread run."""


class Recorder:
    """MCAP files written from a queue by a background thread (see the module docstring)."""

    def __init__(self, cfg: RecorderCfg, metadata: dict[str, dict[str, str]] | None = None,
                 attachments: dict[str, bytes] | None = None, profile: str = 'ros2'):
        """Start the writer thread; metadata and attachments go into every file."""
        self.cfg = cfg
        self.stats = RecorderStats()
        self._metadata = dict(metadata or {})
        self._attachments = dict(attachments or {})
        self._profile = profile
        self._channels: list[ChannelSpec] = []
        self._lock = threading.Lock()
        self._pending: collections.deque = collections.deque()
        self._stop = threading.Event()
        self._started_ns = time.time_ns()
        cfg.folder.mkdir(parents=True, exist_ok=True)
        self._thread = threading.Thread(target=self._run, name='sim2real-recorder',
                                        daemon=True)
        self._thread.start()

    def channel(self, spec: ChannelSpec) -> int:
        """Register a channel (any thread); its id for write()."""
        with self._lock:
            self._channels.append(spec)
            key = len(self._channels) - 1
        self._put(('channel', key))
        return key

    def write(self, channel: int, data: bytes, log_time_ns: int,
              publish_time_ns: int | None = None) -> bool:
        """Queue one message; False (and counted) when the writer is behind or stopped."""
        return self._put(('message', channel, data, log_time_ns,
                          log_time_ns if publish_time_ns is None else publish_time_ns))

    def write_json(self, channel: int, obj: dict, log_time_ns: int) -> bool:
        """Queue one JSON message; numpy arrays in obj are written by orjson in C (finite
        ones: orjson writes NaN as null, so runtime_log.fast() sends those as strings)."""
        return self.write(channel, orjson.dumps(obj, option=orjson.OPT_SERIALIZE_NUMPY),
                          log_time_ns)

    def close(self, timeout_s: float = 10.0) -> RecorderStats:
        """Write what is queued, finish the file and stop the thread; the stats."""
        if self._thread.is_alive():
            self._stop.set()
            self._thread.join(timeout_s)
        return self.stats

    def _put(self, item) -> bool:
        """Append for the writer, counting a drop when it is behind or has stopped."""
        if self.stats.error or self._stop.is_set() or not self._thread.is_alive() or (
                len(self._pending) >= self.cfg.queue_records):
            self.stats.dropped += 1
            return False
        self._pending.append(item)   # atomic under the interpreter lock
        return True

    def _run(self) -> None:
        """The writer thread: files, chunks, flushes, rotation."""
        writer = None
        try:
            writer = _File(self, 0)
            last_flush = time.monotonic()
            while True:
                stopping = self._stop.wait(self.cfg.poll_interval_s)
                self._drain(writer, everything=stopping)
                if stopping:
                    break
                if time.monotonic() - last_flush >= self.cfg.flush_interval_s:
                    writer.flush()
                    last_flush = time.monotonic()
                    if writer.size() >= self.cfg.max_file_bytes:
                        writer.finish()
                        writer = _File(self, writer.index + 1)
        except OSError as exc:
            self.stats.error = f'{type(exc).__name__}: {exc}'
            log.error('recorder stopped, later records are dropped: %s', self.stats.error)
        finally:
            if writer is not None:
                try:
                    writer.finish()
                except OSError as exc:
                    self.stats.error = self.stats.error or f'{type(exc).__name__}: {exc}'

    def _drain(self, writer: _File, everything: bool = False) -> None:
        """Write the records accumulated when called (everything: until none is left, at
        close), yielding the interpreter every YIELD_EVERY; a writer slower than the
        records come still returns to flush and rotate on time, while the deque fills
        up to its cap and drops."""
        pending = self._pending
        count = len(pending)
        done = 0
        while pending and (everything or done < count):
            writer.handle(pending.popleft())
            done += 1
            if done % YIELD_EVERY == 0:
                time.sleep(0)   # a control thread waiting for the lock gets it now


class _File:
    """One MCAP file of a recorder (writer thread only)."""

    def __init__(self, recorder: Recorder, index: int):
        """Open the file, write metadata, attachments and the channels known so far."""
        from mcap.writer import CompressionType, Writer
        self.recorder, self.index = recorder, index
        stamp = time.strftime('%Y%m%d_%H%M%S', time.gmtime(recorder._started_ns / 1e9))
        cfg = recorder.cfg
        self.path = cfg.folder / f'{cfg.prefix}_{stamp}_{index:03d}.mcap'
        self._stream = open(self.path, 'wb')
        self._writer = Writer(self._stream, chunk_size=cfg.chunk_bytes,
                              compression=CompressionType.LZ4)
        self._writer.start(profile=recorder._profile, library='sim2real')
        for name, data in recorder._metadata.items():
            self._writer.add_metadata(name, data)
        now = time.time_ns()
        for name, data in recorder._attachments.items():
            self._writer.add_attachment(now, now, name, 'application/octet-stream', data)
        self._ids: dict[int, int] = {}
        self._schemas: dict[tuple, int] = {}
        self._sequence: dict[int, int] = {}
        with recorder._lock:
            known = list(enumerate(recorder._channels))
        for key, _ in known:
            self._register(key)
        recorder.stats.files.append(str(self.path))

    def _register(self, key: int) -> None:
        """The file's channel (and schema) for the recorder's channel key."""
        if key in self._ids:
            return
        spec = self.recorder._channels[key]
        schema_key = (spec.schema_name, spec.schema_encoding, spec.schema_data)
        if schema_key not in self._schemas:
            self._schemas[schema_key] = self._writer.register_schema(
                spec.schema_name, spec.schema_encoding, spec.schema_data)
        self._ids[key] = self._writer.register_channel(
            spec.topic, spec.message_encoding, self._schemas[schema_key])

    def handle(self, item: tuple) -> None:
        """A queued channel registration or message."""
        if item[0] == 'channel':
            self._register(item[1])
            return
        _, key, data, log_ns, publish_ns = item
        self._register(key)
        channel = self._ids[key]
        sequence = self._sequence.get(channel, 0)
        self._sequence[channel] = sequence + 1
        self._writer.add_message(channel, log_ns, data, publish_ns, sequence)
        self.recorder.stats.written += 1

    def flush(self) -> None:
        """Finish the chunk in progress and hand the bytes to the OS."""
        self._writer.flush()

    def size(self) -> int:
        """Bytes written to the file so far."""
        return os.fstat(self._stream.fileno()).st_size

    def finish(self) -> None:
        """Write the summary and close the file."""
        if self._stream.closed:
            return
        try:
            self._writer.finish()
        finally:
            self._stream.close()
