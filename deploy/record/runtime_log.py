"""The runtime's calls as a log: every put, tick, enable, disable and estop with its inputs
and what the runtime answered, on JSON channels; `replay` feeds them to a fresh Runtime.

The Runtime is time-injected (put carries its receive time, step/enable take now_s), so
these calls are all a replay needs to decide exactly what the node decided. Non-finite
floats are written as the strings 'NaN', 'Infinity' and '-Infinity' (JSON has no such
numbers; Foxglove and PlotJuggler read the rest as plain numbers).
"""

from __future__ import annotations

from collections import deque
import logging
import math
import time
from typing import Callable

import numpy as np

from sim2real.deploy.record.writer import json_channel, Recorder
from sim2real.deploy.runtime import Sample

log = logging.getLogger(__name__)

PUT_TOPIC, TICK_TOPIC, CALL_TOPIC = '/sim2real/put', '/sim2real/tick', '/sim2real/call'
_NUMBER = {'type': ['number', 'string']}
_ARRAY = {'type': ['array', 'null'], 'items': _NUMBER}
_NON_FINITE = {'NaN': math.nan, 'Infinity': math.inf, '-Infinity': -math.inf}


def plain(value):
    """Numbers, arrays and lists as JSON-ready values, non-finite floats as strings.

    Runs on the control thread for every put and tick: a finite float array goes through
    numpy's tolist() in one call; only an array holding NaN or infinity is walked."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind == 'f' and not all(map(math.isfinite, value.ravel().tolist())):
            return _finite_strings(value.tolist())
        return value.tolist()
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else _NON_FINITE_TEXT[_kind(value)]
    if isinstance(value, dict):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if isinstance(value, (int, np.integer)):
        return int(value)
    return plain(float(value))


_AS_IS = frozenset(np.dtype(t) for t in ('float64', 'int64', 'int32', 'bool'))
"""Array dtypes the encoder (orjson) writes exactly as they are."""


def fast(value):
    """plain(value) for the control thread: a C-contiguous float64 array without NaN or
    infinity (or an int or bool array) is left as it is, for the encoder to write in C;
    a float32 array goes through plain() (its values as the float64 they are)."""
    if type(value) is np.ndarray:
        dtype = value.dtype
        if dtype in _AS_IS and value.ndim and value.flags.c_contiguous and (
                dtype.kind != 'f' or all(map(math.isfinite, value.ravel().tolist()))):
            return value
        return plain(value)
    if isinstance(value, dict):
        return {str(key): fast(item) for key, item in value.items()}
    return plain(value)


def _kind(number: float) -> str:
    """'nan', 'inf' or '-inf'."""
    return 'nan' if math.isnan(number) else ('inf' if number > 0 else '-inf')


_NON_FINITE_TEXT = {'nan': 'NaN', 'inf': 'Infinity', '-inf': '-Infinity'}


def _finite_strings(nested):
    """A tolist() result with its non-finite floats as their strings."""
    if isinstance(nested, list):
        return [_finite_strings(item) for item in nested]
    if isinstance(nested, float) and not math.isfinite(nested):
        return _NON_FINITE_TEXT[_kind(nested)]
    return nested


def number(value) -> float:
    """A float written by plain()."""
    return _NON_FINITE[value] if isinstance(value, str) else float(value)


def _numbers(nested):
    """Nested lists written by plain() with the non-finite strings turned back."""
    if isinstance(nested, list):
        return [_numbers(item) for item in nested]
    if isinstance(nested, str) and nested not in _NON_FINITE:
        return nested   # a name (an array of joint names)
    return number(nested)


def array(values) -> np.ndarray | None:
    """A float64 array written by plain() (None stays None)."""
    return None if values is None else np.array(_numbers(values), dtype=float)


def typed(value) -> dict:
    """A sample value with its kind, so a replay rebuilds it exactly: an array with its dtype
    and shape, a list (of joint names, say) or a scalar."""
    if isinstance(value, np.ndarray):
        return {'array': fast(value), 'dtype': value.dtype.str}
    if isinstance(value, (list, tuple)):
        return {'list': plain(list(value))}
    return {'value': plain(value)}


def untyped(record: dict):
    """The value typed() wrote."""
    if 'array' in record:
        return np.array(_numbers(record['array']), dtype=record['dtype'])
    if 'list' in record:
        return _numbers(record['list'])
    return record['value'] if isinstance(record['value'], str) and (
        record['value'] not in _NON_FINITE) else number(record['value'])


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


def _snapshot(value):
    """A copy of the arrays in value (a dict of them, or one), so that a record encoded
    later holds what the tick saw."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, dict):
        return {key: _snapshot(item) for key, item in value.items()}
    return value


class RecordingRuntime:
    """A Runtime whose put, step, enable, disable and estop are also logged to a recorder
    (everything else is the runtime's own). With a backlog, records are encoded when it is
    drained (Backlog); without, at once."""

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
        """Encode and write one put record."""
        values = sample.values if isinstance(sample.values, dict) else {}
        try:
            self.recorder.write_json(self._put, {
                'stream': stream, 'stamp_s': plain(sample.stamp_s),
                'received_s': plain(sample.received_s),
                'values': {str(k): typed(v) for k, v in values.items()}}, log_ns)
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
        self.backlog.add(self._write_tick, {
            'now_s': now_s, 'command': _snapshot(result.command), 'state': result.state,
            'reason': result.reason, 'inference_s': result.inference_s,
            'action': _snapshot(result.action), 'observation': _snapshot(result.observation),
            'period_error_s': period_error_s,
            'integrator': _snapshot(runtime.integrator.state()),
            'estimates': _snapshot(estimates())}, time.time_ns())
        return result

    def _write_tick(self, tick: dict, log_ns: int) -> None:
        """Encode and write one tick record."""
        try:
            self.recorder.write_json(self._tick, fast(tick), log_ns)
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
        """Encode and write one call record."""
        self.recorder.write_json(self._call, {'call': call, 'now_s': plain(now_s), 'ok': ok,
                                              'message': message}, log_ns)
