"""The recorder's writer process: reads framed records from its stdin (writer.Recorder's
pipe), writes them to MCAP files and reports what it did as a JSON line on its stdout after
each flush and at the end: records written and dropped (after a write error), files, the
error. It ends at the end of its input (the recorder closed the pipe or was collected
unclosed, or its process exited or died).
"""

from __future__ import annotations

import json
import marshal
import os
from pathlib import Path
import pickle
import select
import signal
import sys
import time

from sim2real.deploy.record.json_values import encode, unpack
from sim2real.deploy.record.writer import ChannelSpec, CHANNEL, FRAME, INIT, MESSAGE, PACKED

READ_BYTES = 1024 * 1024
"""Most bytes taken from the pipe at once."""
NICENESS = 19
"""Where SCHED_IDLE is refused: the lowest share of a contended core."""


class MCAPFiles:
    """The recorder's files: one open at a time, rotated past max_file_bytes."""

    def __init__(self, init: dict):
        """Open the first file with the recorder's configuration."""
        self.cfg = init['cfg']
        self.init = init
        self.channels: dict[int, ChannelSpec] = {}
        self.written = self.dropped = 0
        self.files: list[str] = []
        self.error = ''
        self._ids: dict[int, int] = {}
        self._stream = None
        try:
            self._open(0)
        except Exception as exc:   # a folder it cannot write: report it, drop the records
            self.fail(exc)

    def _open(self, index: int) -> None:
        """A new file with the metadata, the attachments and the channels known so far."""
        from mcap.writer import CompressionType, Writer
        self.index = index
        stamp = time.strftime('%Y%m%d_%H%M%S', time.gmtime(self.init['started_ns'] / 1e9))
        path = Path(self.cfg['folder']) / f'{self.cfg["prefix"]}_{stamp}_{index:03d}.mcap'
        self._stream = open(path, 'wb')
        self._writer = Writer(self._stream, chunk_size=self.cfg['chunk_bytes'],
                              compression=CompressionType.LZ4)
        self._writer.start(profile=self.init['profile'], library='sim2real')
        for name, data in self.init['metadata'].items():
            self._writer.add_metadata(name, data)
        now = time.time_ns()
        for name, data in self.init['attachments'].items():
            self._writer.add_attachment(now, now, name, 'application/octet-stream', data)
        self._ids: dict[int, int] = {}
        self._schemas: dict[tuple, int] = {}
        self._sequence: dict[int, int] = {}
        for key in self.channels:
            self._register(key)
        self.files.append(str(path))

    def _register(self, key: int) -> None:
        """The file's channel (and schema) for the recorder's channel key."""
        spec = self.channels[key]
        schema_key = (spec.schema_name, spec.schema_encoding, spec.schema_data)
        if schema_key not in self._schemas:
            self._schemas[schema_key] = self._writer.register_schema(
                spec.schema_name, spec.schema_encoding, spec.schema_data)
        self._ids[key] = self._writer.register_channel(
            spec.topic, spec.message_encoding, self._schemas[schema_key])

    def record(self, kind: int, key: int, log_ns: int, publish_ns: int, data: bytes) -> None:
        """One framed record: a channel registration or a message (dropped after an
        error, or when a packed one cannot be encoded)."""
        if kind == CHANNEL:
            self.channels[key] = pickle.loads(data)
            if not self.error:
                self._register(key)
            return
        message = kind in (MESSAGE, PACKED)
        if not message or self.error or key not in self._ids:
            self.dropped += message
            return
        if kind == PACKED:
            try:
                data = encode(unpack(marshal.loads(data)))
            except (ValueError, TypeError, EOFError):   # a record it cannot encode: lost
                self.dropped += 1
                return
        channel = self._ids[key]
        sequence = self._sequence.get(channel, 0)
        self._sequence[channel] = sequence + 1
        self._writer.add_message(channel, log_ns, data, publish_ns, sequence)
        self.written += 1

    def flush(self) -> None:
        """Finish the chunk in progress; a new file past max_file_bytes."""
        if self.error:
            return
        self._writer.flush()
        if os.fstat(self._stream.fileno()).st_size >= self.cfg['max_file_bytes']:
            self.finish()
            self._open(self.index + 1)

    def finish(self) -> None:
        """Write the summary and close the file."""
        if self._stream is None or self._stream.closed:
            return
        try:
            self._writer.finish()
        finally:
            self._stream.close()

    def fail(self, exc: Exception) -> None:
        """A write error (a full disk): later messages are dropped and counted."""
        self.error = self.error or f'{type(exc).__name__}: {exc}'
        try:
            if self._stream is not None:
                self._stream.close()
        except OSError:
            pass

    def report(self) -> None:
        """What was done so far, one JSON line on stdout (nothing once the recorder's
        process is gone: its records are still written)."""
        try:
            sys.stdout.write(json.dumps({'written': self.written, 'dropped': self.dropped,
                                         'files': self.files, 'error': self.error}) + '\n')
            sys.stdout.flush()
        except OSError:   # the recorder's process is gone: write on, report nowhere
            sys.stdout = open(os.devnull, 'w')


def frames(buffer: bytearray):
    """Complete frames at the start of buffer (removed from it): (kind, key, log_ns,
    publish_ns, data)."""
    offset = 0
    while len(buffer) - offset >= FRAME.size:
        kind, key, log_ns, publish_ns, size = FRAME.unpack_from(buffer, offset)
        end = offset + FRAME.size + size
        if end > len(buffer):
            break
        yield kind, key, log_ns, publish_ns, bytes(buffer[offset + FRAME.size:end])
        offset = end
    del buffer[:offset]


def serve(fd: int) -> None:
    """Read records until the end of the input, writing and flushing on time."""
    buffer = bytearray()
    files: MCAPFiles | None = None
    last_flush_s = time.monotonic()
    interval_s = 0.5
    while True:
        ready, _, _ = select.select([fd], [], [], interval_s)
        chunk = os.read(fd, READ_BYTES) if ready else b''
        if ready and not chunk:
            break
        buffer += chunk
        for kind, key, log_ns, publish_ns, data in frames(buffer):
            if kind == INIT:
                files = MCAPFiles(pickle.loads(data))
                interval_s = files.cfg['flush_interval_s']
                continue
            try:
                files.record(kind, key, log_ns, publish_ns, data)
            except Exception as exc:   # a full disk, a closed file: count, never stop reading
                files.fail(exc)
        if files is not None and time.monotonic() - last_flush_s >= interval_s:
            try:
                files.flush()
            except Exception as exc:
                files.fail(exc)
            files.report()
            last_flush_s = time.monotonic()
    if files is not None:
        try:
            files.finish()
        except Exception as exc:
            files.fail(exc)
        files.report()


def lower_priority() -> None:
    """Run only on a core the control loop leaves idle: SCHED_IDLE (Linux), else the
    highest niceness. Also leaves a SCHED_FIFO policy inherited from a real-time node: the
    writer only has to keep up on average (its input waits in the pipe and the node's
    buffer), never at a tick's expense."""
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
        return
    except (AttributeError, OSError):
        pass
    try:
        os.nice(NICENESS)
    except OSError:
        pass


def main() -> None:
    """The writer process: below the control loop's priority, deaf to SIGINT and SIGTERM."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    lower_priority()
    serve(sys.stdin.fileno())


if __name__ == '__main__':
    main()
