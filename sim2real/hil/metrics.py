"""HIL outcome metrics as pure functions of recorded time series (tested without ROS).

Times are steady-clock seconds (time.monotonic, shared by all processes on one host).
"""

from __future__ import annotations

import math

import numpy as np


def hover_error_m(times_s, pos_w, target_w, t0_s: float, t1_s: float) -> float:
    """Mean distance [m] between recorded positions and the target within [t0, t1]."""
    times_s = np.asarray(times_s)
    keep = (times_s >= t0_s) & (times_s <= t1_s)
    if not keep.any():
        return math.nan
    err = np.asarray(pos_w)[keep] - np.asarray(target_w)[None, :]
    return float(np.linalg.norm(err, axis=1).mean())


def max_error_m(times_s, pos_w, target_w, t0_s: float, t1_s: float) -> float:
    """Largest distance [m] to the target within [t0, t1] (nan without samples)."""
    times_s = np.asarray(times_s)
    keep = (times_s >= t0_s) & (times_s <= t1_s)
    if not keep.any():
        return math.nan
    err = np.asarray(pos_w)[keep] - np.asarray(target_w)[None, :]
    return float(np.linalg.norm(err, axis=1).max())


def command_violations(thrust_n, rates_rad_s, thrust_max_n: float, max_rate_rad_s: float,
                       thrust_min_n: float = 0.0, tol: float = 1e-6) -> int:
    """Commands outside [thrust_min, thrust_max] or |rate| > max_rate, or not finite."""
    thrust_n = np.asarray(thrust_n, dtype=float).reshape(-1)
    rates = np.asarray(rates_rad_s, dtype=float).reshape(len(thrust_n), -1)
    finite = np.isfinite(thrust_n) & np.isfinite(rates).all(axis=1)
    with np.errstate(invalid='ignore'):
        bad_thrust = (thrust_n > thrust_max_n + tol) | (thrust_n < thrust_min_n - tol)
        bad_rate = (np.abs(rates) > max_rate_rad_s + tol).any(axis=1)
    return int((~finite | bad_thrust | bad_rate).sum())


def geofence_violations(pos_w, box_min_m, box_max_m) -> int:
    """Recorded positions outside the geofence box (or not finite)."""
    pos = np.asarray(pos_w, dtype=float).reshape(-1, 3)
    with np.errstate(invalid='ignore'):
        inside = (pos >= np.asarray(box_min_m)) & (pos <= np.asarray(box_max_m))
    return int((~inside.all(axis=1)).sum())


def ticks_to_safe(state_times_s, states, t_condition_s: float) -> int | None:
    """Control ticks from the moment a latch condition holds to the first fallback tick.

    The first tick published at or after t_condition counts 1; a fallback already in place
    gives 0; None when no fallback follows.
    """
    times = np.asarray(state_times_s, dtype=float)
    fallback = np.array([s.startswith('fallback') for s in states], dtype=bool)
    before = (times < t_condition_s) & fallback
    if before.any() and fallback[times < t_condition_s][-1:].all():
        return 0
    after = np.flatnonzero(times >= t_condition_s)
    hits = np.flatnonzero(fallback[after])
    return int(hits[0] + 1) if hits.size else None


def rate_outside_stalls_hz(ticks: float, achieved_rate_hz: float, stalled_s: float) -> float:
    """A loop's tick rate over its span less stalled_s [Hz]: `ticks` over a span of
    (ticks - 1) / achieved_rate_hz seconds, a stalled second losing its ticks (0 before two
    ticks; NaN when the stalls fill the span)."""
    if ticks < 2 or not achieved_rate_hz > 0.0:
        return 0.0
    span_s = (ticks - 1) / achieved_rate_hz - stalled_s
    return (ticks - 1) / span_s if span_s > 0.0 else float('nan')


def stalled_s(spans_s, t0_s: float, t1_s: float) -> float:
    """Time the (start, end) spans [s] cover inside [t0, t1] (spans do not overlap)."""
    return float(sum(max(0.0, min(e, t1_s) - max(s, t0_s)) for s, e in spans_s))


def worst_stall_ms(spans_s, t0_s: float = -math.inf, t1_s: float = math.inf) -> float:
    """The longest (start, end) span [ms] that overlaps [t0, t1] (0 without one)."""
    return max((1e3 * (e - s) for s, e in spans_s if e >= t0_s and s <= t1_s), default=0.0)


def fallback_facts(state_times_s, states, onset_s: float) -> dict:
    """The first fallback's reason ('stale:imu'; '' without one) among the node's states, and
    whether the node was already in fallback before onset_s (then the fault was not tested)."""
    first = next((s for s in states if s.startswith('fallback')), '')
    before = any(t < onset_s and s.startswith('fallback') for t, s in zip(state_times_s, states))
    return {'fallback_reason': first.partition(':')[2], 'fallback_before_onset': bool(before)}


def ticks_between(t_condition_s: float, t_safe_s: float | None, period_s: float) -> int | None:
    """Control ticks from a condition to a safe event (0 when the event came first)."""
    if t_safe_s is None:
        return None
    return max(0, math.ceil((t_safe_s - t_condition_s) / period_s - 1e-9))


def tilt_rad(quat_wxyz) -> np.ndarray:
    """Angle between body z and world z [rad] of unit quaternions (..., 4)."""
    q = np.asarray(quat_wxyz, dtype=float)
    cos_tilt = 1.0 - 2.0 * (q[..., 1] ** 2 + q[..., 2] ** 2)
    return np.arccos(np.clip(cos_tilt, -1.0, 1.0))
