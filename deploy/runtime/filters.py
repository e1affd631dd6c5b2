"""Pure safety filters: NaN guard, clamps, rate limit, torque feasibility, soft-start blend.

Joint order of application (joints.py): NaN guard -> integrator -> joint clamp -> rate limit
-> torque feasibility -> soft-start blend -> latches -> fallback -> final clamp.
"""

from __future__ import annotations

import numpy as np

from sim2real import terms


def all_finite(*arrays) -> bool:
    """True when every array holds only finite numbers (the NaN/Inf guard)."""
    return all(bool(np.isfinite(np.asarray(a, dtype=np.float64)).all()) for a in arrays)


def clamp_joint_position(target_rad, pos_min_rad, pos_max_rad) -> np.ndarray:
    """Targets clipped to [pos_min_rad, pos_max_rad] per joint."""
    return np.clip(target_rad, pos_min_rad, pos_max_rad)


def rate_limit(target, previous, max_rate_per_s, dt_s: float) -> np.ndarray:
    """target moved at most max_rate_per_s * dt_s away from previous, per element."""
    step = np.asarray(max_rate_per_s, dtype=np.float64) * dt_s
    return terms.rate_limited_target(np.asarray(target, dtype=np.float64), previous, step)


def torque_bounds(joint_pos_rad, joint_vel_rad_s, kp, kd, torque_limit_nm):
    """Target interval [lo, hi] with |kp (q* - q) - kd qd| <= torque_limit (kp > 0 joints)."""
    kp = np.asarray(kp, dtype=np.float64)
    safe_kp = np.where(kp > 0.0, kp, 1.0)
    damping = np.asarray(kd) * joint_vel_rad_s
    with np.errstate(over='ignore'):  # a tiny kp puts the bound at +-inf: no constraint
        lo = joint_pos_rad + (damping - torque_limit_nm) / safe_kp
        hi = joint_pos_rad + (damping + torque_limit_nm) / safe_kp
    unbounded = kp <= 0.0
    return np.where(unbounded, -np.inf, lo), np.where(unbounded, np.inf, hi)


def torque_feasible(target_rad, joint_pos_rad, joint_vel_rad_s, kp, kd,
                    torque_limit_nm) -> np.ndarray:
    """Targets moved into the interval where the PD torque stays within torque_limit_nm."""
    lo, hi = torque_bounds(joint_pos_rad, joint_vel_rad_s, kp, kd, torque_limit_nm)
    return np.clip(target_rad, lo, hi)


def feasible_joint_target(target_rad, joint_pos_rad, joint_vel_rad_s, kp, kd, torque_limit_nm,
                          pos_min_rad, pos_max_rad) -> np.ndarray:
    """Final joint clamp: inside the position limits always, torque-feasible where both can hold.

    Clipping to the torque interval and then to the position box lands in their intersection
    when it is not empty, else on the box edge nearest the torque interval.
    """
    lo, hi = torque_bounds(joint_pos_rad, joint_vel_rad_s, kp, kd, torque_limit_nm)
    return clamp_joint_position(np.clip(target_rad, lo, hi), pos_min_rad, pos_max_rad)


def soft_start_fraction(elapsed_s: float, soft_start_s: float) -> float:
    """Blend fraction in [0, 1]: elapsed_s / soft_start_s (1 when soft_start_s <= 0)."""
    if soft_start_s <= 0.0:
        return 1.0
    return _unit(elapsed_s / soft_start_s)


def soft_start_blend(start, target, fraction: float) -> np.ndarray:
    """start + fraction (target - start), fraction clipped to [0, 1]."""
    return start + _unit(float(fraction)) * (np.asarray(target) - start)


def _unit(value: float) -> float:
    """value clipped to [0, 1] (NaN stays NaN, as np.clip leaves it)."""
    return value if value != value else min(max(value, 0.0), 1.0)


def _bounded(value: float, low: float, high: float) -> float:
    """value clipped to [low, high]; NaN is 0 (np.nan_to_num, then np.clip)."""
    return 0.0 if value != value else min(max(value, low), high)


def clamp_thrust_rates(command, thrust_min_n: float, thrust_max_n: float,
                       max_body_rate_rad_s: float) -> np.ndarray:
    """[thrust, rates]: thrust 0 (motors off) or in [min, max], |rates| <= max, never NaN.
    Scalar arithmetic on the four numbers (it runs every tick)."""
    thrust, *rates = np.asarray(command, dtype=np.float64).reshape(-1)[:4].tolist()
    thrust = _bounded(thrust, thrust_min_n, thrust_max_n) if thrust > 0.0 else 0.0
    limit = max_body_rate_rad_s
    return np.array([thrust, *(_bounded(rate, -limit, limit) for rate in rates)])


def clamp_rotor_speeds(speeds_rad_s, max_speed_rad_s: float, thrust_coefficient: float,
                       thrust_max_n: float) -> np.ndarray:
    """Speeds in [0, max_speed], scaled down so the collective kf sum(w^2) <= thrust_max_n."""
    speeds = np.nan_to_num(np.asarray(speeds_rad_s, dtype=np.float64), nan=0.0)
    speeds = np.clip(speeds, 0.0, max_speed_rad_s)
    collective_n = thrust_coefficient * float(np.sum(speeds ** 2))
    if collective_n > thrust_max_n:
        speeds = speeds * np.sqrt(thrust_max_n / collective_n) * (1.0 - 1e-12)
    return speeds
