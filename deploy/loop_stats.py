"""Control-loop timing statistics: achieved rate, period error and inference time percentiles.

ROS-free and time-injected: the node feeds tick times from the steady clock, the bench and
the tests feed recorded ones.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np

from sim2real.atomic import write_atomic


WINDOW_TICKS = 10_000
"""Ticks the percentiles cover by default: the last 20 s of a 500 Hz loop, 200 s at 50 Hz
(a summary of them takes about 1 ms)."""


class Ring:
    """The last `size` floats appended, in a preallocated array: an append is one store,
    and the percentiles read the array as it is (no conversion of a Python container)."""

    def __init__(self, size: int):
        """size > 0 values at most."""
        self._data = np.empty(size)
        self._count = 0

    def append(self, value: float) -> None:
        """Keep value, forgetting the oldest once full."""
        self._data[self._count % self._data.size] = value
        self._count += 1

    def clear(self) -> None:
        """Forget every value."""
        self._count = 0

    def values(self) -> np.ndarray:
        """The kept values (a view, oldest not first once wrapped)."""
        return self._data[:min(self._count, self._data.size)]

    def ordered(self) -> np.ndarray:
        """A copy of the kept values, oldest first."""
        if self._count <= self._data.size:
            return self.values().copy()
        return np.roll(self._data, -(self._count % self._data.size))

    def percentiles(self, qs) -> np.ndarray:
        """The percentiles qs of the kept values (NaN where none)."""
        values = self.values()
        return np.percentile(values, qs) if values.size else np.full(len(qs), np.nan)

    def __len__(self) -> int:
        """How many values are kept."""
        return min(self._count, self._data.size)


class LoopStats:
    """Keeps the last `window` tick periods and inference times of a fixed-rate loop.

    The tick appends (one array store per figure); summary() may run on another thread
    without the tick's lock: a value the tick overwrites meanwhile changes a percentile by
    at most one sample of `window`.
    """

    def __init__(self, rate_hz: float, window: int = WINDOW_TICKS):
        """rate_hz: the target rate; window: how many ticks the percentiles cover."""
        self.period_s = 1.0 / rate_hz
        self.periods_s = Ring(window)
        self.inference_s = Ring(window)
        self.observation_age_s = Ring(window)
        self.wake_late_s = Ring(window)
        self.tick_s = Ring(window)
        self.ticks = 0
        self._first_s: float | None = None
        self._last_s: float | None = None

    def tick(self, now_s: float, inference_s: float | None = None,
             observation_age_s: float | None = None) -> None:
        """Record one tick at steady time now_s, the policy's wall time if it ran, and the
        age of the oldest sensor sample it used (by source stamp) if known."""
        if observation_age_s is not None:
            self.observation_age_s.append(observation_age_s)
        if self._last_s is not None:
            self.periods_s.append(now_s - self._last_s)
        else:
            self._first_s = now_s
        self._last_s = now_s
        self.ticks += 1
        if inference_s is not None:
            self.inference_s.append(inference_s)

    def loop_timing(self, wake_late_s: float, tick_s: float) -> None:
        """Record how late the loop thread woke after its deadline [s] and how long the tick
        then ran [s]: a late tick is the scheduler's (or the interpreter lock's) when the
        first is large, the tick's own cost when the second is."""
        self.wake_late_s.append(wake_late_s)
        self.tick_s.append(tick_s)

    def reset(self) -> None:
        """Forget all ticks (e.g. at enable, so statistics cover one flight)."""
        for ring in (self.periods_s, self.inference_s, self.observation_age_s,
                     self.wake_late_s, self.tick_s):
            ring.clear()
        self.ticks = 0
        self._first_s = self._last_s = None

    def save(self, path: str | Path) -> Path:
        """Write the kept ticks' timing to an .npz file, whole or not at all: periods_s,
        wake_late_s, tick_s and inference_s (oldest first), target_period_s and ticks."""
        buffer = io.BytesIO()
        np.savez(buffer, periods_s=self.periods_s.ordered(),
                 wake_late_s=self.wake_late_s.ordered(), tick_s=self.tick_s.ordered(),
                 inference_s=self.inference_s.ordered(),
                 target_period_s=np.float64(self.period_s), ticks=np.int64(self.ticks))
        return write_atomic(path, buffer.getvalue())

    def achieved_rate_hz(self) -> float:
        """Ticks per second over the recorded span (0 before two ticks)."""
        first_s, last_s, ticks = self._first_s, self._last_s, self.ticks
        if first_s is None or last_s is None or last_s <= first_s:
            return 0.0
        return (ticks - 1) / (last_s - first_s)

    def period_error_ms(self, percentile: float) -> float:
        """Percentile of |period - target period| [ms] (0 before two ticks)."""
        return float(self._period_errors_ms((percentile,))[0])

    def _period_errors_ms(self, qs) -> np.ndarray:
        """Percentiles qs of |period - target period| [ms] (0 before two ticks)."""
        periods = self.periods_s.values()
        if not periods.size:
            return np.zeros(len(qs))
        return np.percentile(np.abs(periods - self.period_s), qs) * 1e3

    def summary(self) -> dict[str, float]:
        """The figures the node reports in its diagnostics (one partition per figure)."""
        qs = (50, 99)
        out = {}
        for name, ring in (('wake_late', self.wake_late_s), ('tick_duration', self.tick_s)):
            if len(ring):
                out |= _named(f'{name}_p{{}}_ms', qs, ring.percentiles(qs) * 1e3)
        inference_us = (self.inference_s.percentiles(qs) * 1e6 if len(self.inference_s)
                        else np.zeros(len(qs)))
        return out | {
            'target_rate_hz': 1.0 / self.period_s,
            'achieved_rate_hz': self.achieved_rate_hz(),
            **_named('period_error_p{}_ms', qs, self._period_errors_ms(qs)),
            **_named('inference_p{}_us', qs, inference_us),
            **_named('observation_age_p{}_ms', qs,
                     self.observation_age_s.percentiles(qs) * 1e3),
            'ticks': float(self.ticks),
        }


def _named(pattern: str, qs, values) -> dict[str, float]:
    """{pattern.format(q): value} for each percentile q."""
    return {pattern.format(q): float(v) for q, v in zip(qs, values)}
