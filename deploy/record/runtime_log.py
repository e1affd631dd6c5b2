"""The runtime's calls as a log: every put, tick, enable, disable and estop with its inputs
and what the runtime answered, on JSON channels; `replay` feeds them to a fresh Runtime.

The Runtime is time-injected (put carries its receive time, step/enable take now_s), so
these calls are all a replay needs to decide exactly what the node decided. Values are
written as json_values writes them (non-finite floats as strings), encoded by the writer
process (Recorder.write_packed), not by the node.
"""

from __future__ import annotations

from collections import deque
import logging
import math
import time
from typing import Callable

from sim2real.deploy.record.json_values import number, pack, typed_packed, untyped
from sim2real.deploy.record.writer import json_channel, Recorder
from sim2real.deploy.runtime import Sample

log = logging.getLogger(__name__)

PUT_TOPIC, TICK_TOPIC, CALL_TOPIC = '/sim2real/put', '/sim2real/tick', '/sim2real/call'
_NUMBER = {'type': ['number', 'string']}
_ARRAY = {'type': ['array', 'null'], 'items': _NUMBER}


def sample_from(record: dict) -> Sample:
    """The Sample of a logged put, as it was put."""
    return Sample({name: untyped(value) for name, value in record['values'].items()},
                  number(record['stamp_s']), number(record['received_s']))


BACKLOG_RECORDS = 20_000
"""Records a Backlog holds at most (about 6 s of a 500 Hz quadrotor node, which logs about
3,500 a second); more are dropped and counted: a loop left no time to encode for that long
loses records, never ticks."""


class Backlog:
    """Records waiting to be encoded, in order.

    The control thread adds a record as its encoder and arguments (a deque append), and the
    loop encodes what waits in the time its tick leaves before the next deadline
    (``drain(until_s)``): a tick never waits for JSON encoding, and encoding never runs into
    the next tick. Past ``limit`` waiting records a new one is dropped and counted
    (on_drop), never waited for. Appends and drains may come from different threads.
    """

    def __init__(self, on_drop: Callable[[], None], limit: int = BACKLOG_RECORDS):
        """on_drop() counts one dropped record."""
        self._items: deque = deque()
        self._on_drop, self.limit = on_drop, limit

    def add(self, encode: Callable, *args) -> None:
        """Queue encode(*args) (dropped and counted when limit records wait)."""
        if len(self._items) >= self.limit:
            self._on_drop()
            return
        self._items.append((encode, args))

    def drain(self, until_s: float = math.inf) -> int:
        """Encode waiting records, oldest first, until none waits or the steady clock reaches
        until_s [s]; how many were encoded."""
        done = 0
        while self._items and time.monotonic() < until_s:
            encode, args = self._items.popleft()
            encode(*args)
            done += 1
        return done

    def __len__(self) -> int:
        """Records waiting."""
        return len(self._items)


class _Now:
    """Encode at once: the Backlog interface for a recorder without a loop to drain it."""

    @staticmethod
    def add(encode: Callable, *args) -> None:
        """encode(*args) now."""
        encode(*args)


class RecordingRuntime:
    """A Runtime whose put, step, enable, disable and estop are also logged to a recorder
    (everything else is the runtime's own). With a backlog, records are packed and handed
    to the writer process (which encodes them) when it is drained (Backlog); without, at
    once."""

    def __init__(self, runtime, recorder: Recorder, backlog: Backlog | None = None):
        """Register the three channels."""
        self.runtime, self.recorder = runtime, recorder
        self.backlog = backlog if backlog is not None else _Now()
        self._put = recorder.channel(json_channel(PUT_TOPIC, 'sim2real/Put', {
            'stream': {'type': 'string'}, 'stamp_s': _NUMBER, 'received_s': _NUMBER,
            'values': {'type': 'object'}}))
        self._tick = recorder.channel(json_channel(TICK_TOPIC, 'sim2real/Tick', {
            'now_s': _NUMBER, 'command': _ARRAY, 'state': {'type': 'string'},
            'reason': {'type': 'string'}, 'inference_s': _NUMBER, 'action': _ARRAY,
            'observation': _ARRAY, 'period_error_s': _NUMBER, 'integrator': {'type': 'object'},
            'estimates': {'type': 'object'}}))
        self._last_now_s: float | None = None
        self._warned = False
        self._call = recorder.channel(json_channel(CALL_TOPIC, 'sim2real/Call', {
            'call': {'type': 'string'}, 'now_s': _NUMBER, 'ok': {'type': 'boolean'},
            'message': {'type': 'string'}}))

    def __getattr__(self, name):
        """The runtime's attributes (state, params, contract, store, ...)."""
        return getattr(self.runtime, name)

    def put(self, stream: str, sample: Sample) -> None:
        """Runtime.put, logged with the sample as received (its values are the store's: a
        sample is never changed once put)."""
        self.runtime.put(stream, sample)
        self.backlog.add(self._write_put, stream, sample, time.time_ns())

    def _write_put(self, stream: str, sample: Sample, log_ns: int) -> None:
        """Pack and write one put record."""
        values = sample.values if isinstance(sample.values, dict) else {}
        try:
            self.recorder.write_packed(self._put, {
                'stream': stream, 'stamp_s': pack(sample.stamp_s),
                'received_s': pack(sample.received_s),
                'values': {str(k): typed_packed(v) for k, v in values.items()}}, log_ns)
        except Exception:   # the log must never cost the node a sample
            self._failed()

    def step(self, now_s: float):
        """Runtime.step, logged with what it decided, the integrator's state, the robot's
        estimates and the tick's period error [s] (0 at the first tick)."""
        result = self.runtime.step(now_s)
        runtime = self.runtime
        period_error_s = (0.0 if self._last_now_s is None
                          else now_s - self._last_now_s - runtime.period_s)
        self._last_now_s = now_s
        estimates = getattr(runtime.profile, 'estimates', dict)
        try:   # packed now: a copy of what the tick saw
            tick = pack({
                'now_s': now_s, 'command': result.command, 'state': result.state,
                'reason': result.reason, 'inference_s': result.inference_s,
                'action': result.action, 'observation': result.observation,
                'period_error_s': period_error_s, 'integrator': runtime.integrator.state(),
                'estimates': estimates()})
        except Exception:   # the log must never cost the tick its command
            self._failed()
        else:
            self.backlog.add(self._write_tick, tick, time.time_ns())
        return result

    def _write_tick(self, tick: dict, log_ns: int) -> None:
        """Write one packed tick record."""
        try:
            self.recorder.write_packed(self._tick, tick, log_ns)
        except Exception:   # the log must never cost the tick its command
            self._failed()

    def _failed(self) -> None:
        """A record that could not be encoded: counted as dropped, logged once."""
        self.recorder.count_dropped()
        if not self._warned:
            self._warned = True
            log.exception('a flight-recorder record could not be encoded (counted as '
                          'dropped; the control loop goes on)')

    def enable(self, now_s: float) -> tuple[bool, str]:
        """Runtime.enable, logged with its answer."""
        ok, message = self.runtime.enable(now_s)
        self._log_call('enable', now_s, ok, message)
        return ok, message

    def disable(self, now_s: float) -> None:
        """Runtime.disable, logged."""
        self.runtime.disable(now_s)
        self._log_call('disable', now_s, True, '')

    def estop(self, now_s: float) -> None:
        """Runtime.estop, logged."""
        self.runtime.estop(now_s)
        self._log_call('estop', now_s, True, '')

    def _log_call(self, call: str, now_s: float, ok: bool, message: str) -> None:
        """One call record (queued behind the records before it)."""
        self.backlog.add(self._write_call, call, now_s, ok, message, time.time_ns())

    def _write_call(self, call: str, now_s: float, ok: bool, message: str,
                    log_ns: int) -> None:
        """Pack and write one call record."""
        self.recorder.write_packed(self._call, pack({'call': call, 'now_s': now_s, 'ok': ok,
                                                     'message': message}), log_ns)
