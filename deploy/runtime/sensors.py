"""Sensor samples, their validation, the latest-state store and the steady-clock watchdog.

A sample is refused (not stored, and flagged so that the next tick latches) when a value is
not finite ('nan:<stream>') or is malformed or implausible ('bad:<stream> (<what>)'): a
missing field, a wrong length, a quaternion whose norm is not close to 1 (a zero, huge or
subnormal quaternion says nothing about attitude).

Freshness: a sample with a newer source stamp is new data; a repeated stamp is not (a frozen
sensor goes stale). A source whose stamps jump (one stamp an hour ahead, a driver restarting
its clock) would otherwise stall the stream for good, so RESYNC_SAMPLES consecutive samples
with rising stamps that all lie behind the stored one re-synchronize it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


QUAT_NORM_TOLERANCE = 0.1
"""A quaternion is usable when its norm is within 1 +- this (drivers send unit quaternions;
float32 rounding is ~1e-7, anything far off is a fault, not an attitude)."""
RESYNC_SAMPLES = 3
"""Consecutive rising-stamp samples behind the stored stamp that re-synchronize a stream."""
DISCOVERY_S = 10.0
"""Until this long after start, a stream never heard from may still be in DDS discovery."""
DISCOVERY_HINT = 'DDS discovery can take seconds: wait and retry'
"""Ends a refusal for a stream not heard from within DISCOVERY_S of start: callers that
arm a node right after launching it (the HIL runner) retry while a refusal says this."""


def rising_run(run: list[float], value: float, strict: bool) -> bool:
    """Extend a run of rising readings (non-decreasing unless strict) with value, restarting
    it at a drop; True, and the run cleared, once it holds RESYNC_SAMPLES readings."""
    if run and (value <= run[-1] if strict else value < run[-1]):
        run.clear()
    run.append(value)
    if len(run) < RESYNC_SAMPLES:
        return False
    run.clear()
    return True


class SampleError(ValueError):
    """A sensor sample is malformed or implausible; the message says what, in plain words."""


@dataclass(frozen=True)
class Sample:
    """One sensor message: named values, the source stamp, and the steady-clock receive time."""

    values: dict[str, np.ndarray]
    """Named arrays, e.g. {'pos_w': (3,), 'quat_wxyz': (4,)}."""
    stamp_s: float
    """Header stamp (source clock) [s]; a repeated stamp is NOT new data."""
    received_s: float
    """Steady clock (time.monotonic) at receipt [s]."""


SMALL = 64
"""Arrays up to this size are checked number by number (cheaper than numpy's call)."""


def quat_norm(quat_wxyz: np.ndarray) -> float:
    """Norm of a quaternion (4,) without overflow or underflow (inf / 0 for non-finite /
    zero; NaN for a NaN component); scalar arithmetic, as it runs at every message."""
    parts = [abs(v) for v in np.asarray(quat_wxyz, dtype=np.float64).tolist()]
    if any(math.isnan(v) for v in parts):
        return math.nan
    scale = max(parts)
    if not math.isfinite(scale) or scale == 0.0:
        return scale
    return scale * math.sqrt(sum((v / scale) ** 2 for v in parts))


def rotation_entries(quat_wxyz) -> tuple[float, ...]:
    """The nine entries of R_wb, row-major, of a quaternion (4,) normalized first without
    overflow (NaN for a zero or non-finite one; the sensor store refuses quaternions whose
    norm is not close to 1 before they get here). Scalar arithmetic: terms.quat_to_rotmat's
    formula for one quaternion, twenty times cheaper than its array path (this runs at every
    odometry and IMU message)."""
    norm = quat_norm(quat_wxyz)
    if not 0.0 < norm < math.inf:
        return (math.nan,) * 9
    w, x, y, z = (v / norm for v in np.asarray(quat_wxyz, dtype=np.float64).tolist())
    xx, yy, zz = x * x, y * y, z * z
    xy, xz, yz = x * y, x * z, y * z
    wx, wy, wz = w * x, w * y, w * z
    return (1 - 2 * (yy + zz), 2 * (xy - wz), 2 * (xz + wy),
            2 * (xy + wz), 1 - 2 * (xx + zz), 2 * (yz - wx),
            2 * (xz - wy), 2 * (yz + wx), 1 - 2 * (xx + yy))


def rotmat_from_quat(quat_wxyz: np.ndarray) -> np.ndarray:
    """R_wb (3, 3) of a quaternion (4,): ``rotation_entries`` as a matrix."""
    return np.array(rotation_entries(quat_wxyz)).reshape(3, 3)


def sample_is_finite(sample: Sample) -> bool:
    """True when every value, the stamp and the receive time are finite numbers."""
    if not (math.isfinite(sample.stamp_s) and math.isfinite(sample.received_s)):
        return False
    for value in sample.values.values():
        array = np.asarray(value)
        kind = array.dtype.kind
        if kind == 'f' and array.size <= SMALL:   # a sensor's few numbers: scalar checks
            if not all(map(math.isfinite, array.ravel().tolist())):
                return False
        elif kind in 'fc' and not np.isfinite(array).all():
            return False
    return True


def check_sample(sample: Sample, shapes: dict[str, tuple[int, ...]]) -> Sample:
    """sample with float64 arrays of the declared shapes; SampleError saying what is wrong."""
    values = dict(sample.values)
    for name, shape in shapes.items():
        if name not in values:
            raise SampleError(f'no {name}')
        try:
            array = np.asarray(values[name], dtype=np.float64)
        except (TypeError, ValueError):
            raise SampleError(f'{name} is not numbers') from None
        if array.shape != shape:
            raise SampleError(f'{name} has {array.size} values, expected {math.prod(shape)}')
        if name.endswith('quat_wxyz'):
            norm = quat_norm(array)
            if not abs(norm - 1.0) <= QUAT_NORM_TOLERANCE:
                raise SampleError(f'{name} has norm {norm:.3g}, not a rotation')
        values[name] = array
    return Sample(values, float(sample.stamp_s), float(sample.received_s))


class SensorStore:
    """Latest valid sample per stream with a new stamp, and the problems seen since a tick."""

    def __init__(self, shapes: dict[str, dict[str, tuple[int, ...]]] | None = None):
        """An empty store; shapes[stream] names the arrays a stream's samples must hold."""
        self.shapes = shapes or {}
        self._latest: dict[str, Sample] = {}
        self._behind: dict[str, list[float]] = {}
        self._problems: list[tuple[str, str]] = []

    def put(self, stream: str, sample: Sample) -> None:
        """Keep sample if valid and new (see module docstring); flag it when invalid."""
        if not sample_is_finite(sample):
            self.flag(stream, f'nan:{stream}')
            return
        try:
            sample = check_sample(sample, self.shapes.get(stream, {}))
        except SampleError as exc:
            self.flag(stream, f'bad:{stream} ({exc})')
            return
        latest = self._latest.get(stream)
        if latest is None or sample.stamp_s > latest.stamp_s:
            self._latest[stream] = sample
            self._behind.pop(stream, None)
        elif sample.stamp_s < latest.stamp_s:
            self._resync(stream, sample)

    def _resync(self, stream: str, sample: Sample) -> None:
        """Collect rising samples behind the stored stamp; RESYNC_SAMPLES of them re-sync."""
        if rising_run(self._behind.setdefault(stream, []), sample.stamp_s, strict=True):
            self._latest[stream] = sample

    def flag(self, stream: str, reason: str) -> None:
        """Record that stream sent an unusable sample (latched at the next tick)."""
        if all(s != stream for s, _ in self._problems):
            self._problems.append((stream, reason))

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
        """Steady-clock time since the newest sample was received [s]; inf when none, and
        for a sample received in the future (a receive time that cannot be trusted)."""
        sample = self._latest.get(stream)
        if sample is None or sample.received_s > now_s:
            return math.inf
        return now_s - sample.received_s

    def pending_problems(self) -> list[str]:
        """Latch reasons of the unusable samples since the last take_problems()."""
        return [reason for _, reason in self._problems]

    def take_problems(self) -> list[str]:
        """Latch reasons of the unusable samples since the last call, in arrival order."""
        out, self._problems = self._problems, []
        return [reason for _, reason in out]


@dataclass(frozen=True)
class Watchdog:
    """Declares a stream stale when its newest sample is older than timeout_s (0: disabled)."""

    stream: str
    """Stream name, e.g. 'odom'."""
    timeout_s: float
    """Largest allowed age on the steady clock [s]; <= 0 means the stream is not required."""
    parameter: str = ''
    """Name of the parameter that sets timeout_s (named when enable is refused)."""
    topic: str = ''
    """Topic the stream comes from (named when enable is refused)."""

    def stale(self, store: SensorStore, now_s: float) -> bool:
        """True when the stream is required and its newest sample is older than timeout_s."""
        return self.timeout_s > 0.0 and not store.age_s(self.stream, now_s) <= self.timeout_s

    def reason(self, store: SensorStore, now_s: float) -> str:
        """'stale:<stream>' when stale, else ''."""
        return f'stale:{self.stream}' if self.stale(store, now_s) else ''

    def explain(self, store: SensorStore, now_s: float, since_s: float) -> str:
        """Why the stream is stale, for an operator: nothing yet (and whether that can still be
        discovery), or how old the last message is against which timeout."""
        sample = store.latest(self.stream)
        if sample is None:
            waited = now_s - since_s
            hint = (DISCOVERY_HINT if waited < DISCOVERY_S
                    else f'is {self.topic or "its topic"} published and remapped to this node?')
            return f'no {self.stream} message yet, {waited:.1f} s after start; {hint}'
        if sample.received_s > now_s:
            return f'the last {self.stream} message has a receive time in the future'
        return (f'last {self.stream} message {now_s - sample.received_s:.3g} s ago, '
                f'{self.parameter or "timeout"} {self.timeout_s:g} s')
