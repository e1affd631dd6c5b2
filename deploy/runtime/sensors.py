"""Sensor samples, the latest-state store and the steady-clock watchdog."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Sample:
    """One sensor message: named values, the source stamp, and the steady-clock receive time."""

    values: dict[str, np.ndarray]
    """Named arrays, e.g. {'pos_w': (3,), 'quat_wxyz': (4,)}."""
    stamp_s: float
    """Header stamp (source clock) [s]; a repeated stamp is NOT new data."""
    received_s: float
    """Steady clock (time.monotonic) at receipt [s]."""


def sample_is_finite(sample: Sample) -> bool:
    """True when every value, the stamp and the receive time are finite numbers."""
    if not (math.isfinite(sample.stamp_s) and math.isfinite(sample.received_s)):
        return False
    for value in sample.values.values():
        array = np.asarray(value)
        if array.dtype.kind in 'fc' and not np.isfinite(array).all():
            return False
    return True


class SensorStore:
    """Latest finite sample per stream with a NEW stamp, and which streams sent NaN/Inf."""

    def __init__(self):
        """An empty store."""
        self._latest: dict[str, Sample] = {}
        self._nonfinite: list[str] = []

    def put(self, stream: str, sample: Sample) -> None:
        """Keep sample if finite and newer than the stored one; flag it when not finite."""
        if not sample_is_finite(sample):
            if stream not in self._nonfinite:
                self._nonfinite.append(stream)
            return
        latest = self._latest.get(stream)
        if latest is None or sample.stamp_s > latest.stamp_s:
            self._latest[stream] = sample

    def latest(self, stream: str) -> Sample | None:
        """The newest stored sample of stream, or None."""
        return self._latest.get(stream)

    def value(self, stream: str, name: str) -> np.ndarray | None:
        """values[name] of the newest sample of stream as float64, or None."""
        sample = self._latest.get(stream)
        if sample is None:
            return None
        return np.asarray(sample.values[name], dtype=np.float64)

    def age_s(self, stream: str, now_s: float) -> float:
        """Steady-clock time since the newest sample was received [s]; inf when none."""
        sample = self._latest.get(stream)
        return math.inf if sample is None else now_s - sample.received_s

    def pending_nonfinite(self) -> list[str]:
        """Streams that sent a non-finite sample since the last take_nonfinite()."""
        return list(self._nonfinite)

    def take_nonfinite(self) -> list[str]:
        """Streams that sent a non-finite sample since the last call, in arrival order."""
        out, self._nonfinite = self._nonfinite, []
        return out


@dataclass(frozen=True)
class Watchdog:
    """Declares a stream stale when its newest sample is older than timeout_s (0: disabled)."""

    stream: str
    """Stream name, e.g. 'odom'."""
    timeout_s: float
    """Largest allowed age on the steady clock [s]; <= 0 means the stream is not required."""

    def stale(self, store: SensorStore, now_s: float) -> bool:
        """True when the stream is required and its newest sample is older than timeout_s."""
        return self.timeout_s > 0.0 and not store.age_s(self.stream, now_s) <= self.timeout_s

    def reason(self, store: SensorStore, now_s: float) -> str:
        """'stale:<stream>' when stale, else ''."""
        return f'stale:{self.stream}' if self.stale(store, now_s) else ''
