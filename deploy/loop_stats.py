"""Control-loop timing statistics: achieved rate, period error and inference time percentiles.

ROS-free and time-injected: the node feeds tick times from the steady clock, the bench and
the tests feed recorded ones.
"""

from __future__ import annotations

from collections import deque

import numpy as np


class LoopStats:
    """Keeps the last `window` tick periods and inference times of a fixed-rate loop."""

    def __init__(self, rate_hz: float, window: int = 100_000):
        """rate_hz: the target rate; window: how many ticks the percentiles cover."""
        self.period_s = 1.0 / rate_hz
        self.periods_s: deque[float] = deque(maxlen=window)
        self.inference_s: deque[float] = deque(maxlen=window)
        self.observation_age_s: deque[float] = deque(maxlen=window)
        self.wake_late_s: deque[float] = deque(maxlen=window)
        self.tick_s: deque[float] = deque(maxlen=window)
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
        self.periods_s.clear()
        self.inference_s.clear()
        self.observation_age_s.clear()
        self.wake_late_s.clear()
        self.tick_s.clear()
        self.ticks = 0
        self._first_s = self._last_s = None

    def achieved_rate_hz(self) -> float:
        """Ticks per second over the recorded span (0 before two ticks)."""
        if self._first_s is None or self._last_s is None or self._last_s <= self._first_s:
            return 0.0
        return (self.ticks - 1) / (self._last_s - self._first_s)

    def period_error_ms(self, percentile: float) -> float:
        """Percentile of |period - target period| [ms] (0 before two ticks)."""
        if not self.periods_s:
            return 0.0
        err = np.abs(np.asarray(self.periods_s) - self.period_s)
        return float(np.percentile(err, percentile) * 1e3)

    def inference_us(self, percentile: float) -> float:
        """Percentile of the policy's inference wall time [us] (0 before it ran)."""
        if not self.inference_s:
            return 0.0
        return float(np.percentile(np.asarray(self.inference_s), percentile) * 1e6)

    def observation_age_ms(self, percentile: float) -> float:
        """Percentile of the sensor data's age at the tick [ms] (NaN before it was known)."""
        if not self.observation_age_s:
            return float('nan')
        return float(np.percentile(np.asarray(self.observation_age_s), percentile) * 1e3)

    def summary(self) -> dict[str, float]:
        """The figures the node reports in its diagnostics."""
        loop = {f'{name}_p{q}_ms': _percentile_ms(values, q)
                for name, values in (('wake_late', self.wake_late_s),
                                     ('tick_duration', self.tick_s)) if values
                for q in (50, 99)}
        return loop | {
            'target_rate_hz': 1.0 / self.period_s,
            'achieved_rate_hz': self.achieved_rate_hz(),
            'period_error_p50_ms': self.period_error_ms(50),
            'period_error_p99_ms': self.period_error_ms(99),
            'inference_p50_us': self.inference_us(50),
            'inference_p99_us': self.inference_us(99),
            'observation_age_p50_ms': self.observation_age_ms(50),
            'observation_age_p99_ms': self.observation_age_ms(99),
            'ticks': float(self.ticks),
        }


def _percentile_ms(values_s, percentile: float) -> float:
    """Percentile of durations in seconds, in milliseconds."""
    return float(np.percentile(np.asarray(values_s), percentile) * 1e3)
