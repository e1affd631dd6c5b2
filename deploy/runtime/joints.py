"""Joint-robot profile: position targets with PD gains, behind the joint safety chain.

Streams: 'joint_state' pos_rad(n), vel_rad_s(n) in contract order, or in any order with a
'names' array; 'imu' quat_wxyz(4) [world<-base], ang_vel_b(3) [rad/s; base]; optional
'command' velocity_command(3). Command: [q* (n) rad, kp (n), kd (n)], contract joint order.
Chain: NaN guard -> integrator -> joint clamp -> rate limit -> torque feasibility ->
soft-start blend -> latches (tilt, joint velocity, stale sensors, stale command, e-stop) ->
damping or hold fallback -> final clamp (position limits; torque-feasible where possible).
"""

from __future__ import annotations

import math

import numpy as np

from sim2real.contract import Contract
from sim2real.deploy.runtime import filters
from sim2real.deploy.runtime.integrators import Integrator
from sim2real.deploy.runtime.params import JointParams
from sim2real.deploy.runtime.quadrotor import rotmat_from_quat
from sim2real.deploy.runtime.sensors import SensorStore, Watchdog
from sim2real.deploy.runtime.state_machine import FALLBACK, StateMachine

__all__ = ['JointParams', 'JointProfile']


class JointProfile:
    """Everything joint-robot-specific the Runtime delegates to."""

    command_kind = 'joint_position'

    def __init__(self, contract: Contract, params: JointParams, integrator: Integrator):
        """Per-joint limits reordered from params.joint_names into contract order."""
        self.contract, self.params, self.integrator = contract, params, integrator
        self.names = list(contract.joint_names)
        order = [params.joint_names.index(name) for name in self.names]

        def per_joint(key):
            return np.asarray(getattr(params, key), dtype=np.float64)[order]
        self.kp, self.kd = per_joint('kp'), per_joint('kd')
        self.torque_limit_nm = per_joint('torque_limit_nm')
        self.pos_min_rad, self.pos_max_rad = per_joint('pos_min_rad'), per_joint('pos_max_rad')
        self.max_rate_rad_s = per_joint('max_rate_rad_s')
        self.default_rad = np.asarray(contract.default_joint_pos_rad, dtype=np.float64)
        self.dt_s = 1.0 / contract.policy_rate_hz
        self.watchdogs = [Watchdog('joint_state', params.joint_state_timeout_s),
                          Watchdog('imu', params.imu_timeout_s),
                          Watchdog('command', params.command_timeout_s)]
        self.cos_max_tilt = math.cos(params.max_tilt_rad)
        self.start_rad = self.previous_rad = self.hold_rad = self.default_rad.copy()

    def joint_state(self, store: SensorStore) -> tuple[np.ndarray, np.ndarray]:
        """(q [rad], qd [rad/s]) in contract order; defaults and zeros before any sample."""
        sample = store.latest('joint_state')
        if sample is None:
            return self.default_rad.copy(), np.zeros(len(self.names))
        q = np.asarray(sample.values['pos_rad'], dtype=np.float64)
        qd = np.asarray(sample.values['vel_rad_s'], dtype=np.float64)
        if 'names' in sample.values:
            index = [list(sample.values['names']).index(name) for name in self.names]
            q, qd = q[index], qd[index]
        return q, qd

    def _command(self, target_rad, kp, kd) -> np.ndarray:
        """[q*, kp, kd] as one float64 vector."""
        return np.concatenate([target_rad, kp, kd]).astype(np.float64)

    def off_command(self, store: SensorStore) -> np.ndarray:
        """Limp: targets at the measured q, kp 0, kd 0."""
        zero = np.zeros(len(self.names))
        return self._command(self.joint_state(store)[0], zero, zero)

    def latch_reason(self, store: SensorStore, now_s: float) -> str:
        """'stale:<stream>', 'tilt' or 'joint_velocity' when a latch condition holds, else ''."""
        for watchdog in self.watchdogs:
            reason = watchdog.reason(store, now_s)
            if reason:
                return reason
        if store.latest('imu') is not None:
            rotmat = rotmat_from_quat(store.value('imu', 'quat_wxyz'))
            if not rotmat[2, 2] >= self.cos_max_tilt:
                return 'tilt'
        _, qd = self.joint_state(store)
        if not np.all(np.abs(qd) <= self.params.joint_vel_limit_rad_s):
            return 'joint_velocity'
        return ''

    def enable_reason(self, store: SensorStore, now_s: float) -> str:
        """Why enable() must refuse now ('' to arm): latch conditions, joint states required."""
        if store.latest('joint_state') is None:
            return 'stale:joint_state'
        return self.latch_reason(store, now_s)

    def observation_inputs(self, store: SensorStore) -> dict:
        """Term inputs from the latest samples."""
        q, qd = self.joint_state(store)
        imu = store.latest('imu')
        rotmat = np.eye(3) if imu is None else rotmat_from_quat(store.value('imu', 'quat_wxyz'))
        command = store.value('command', 'velocity_command')
        return {
            'rotmat_wb': rotmat,
            'ang_vel_b': np.zeros(3) if imu is None else store.value('imu', 'ang_vel_b'),
            'joint_pos_rad': q, 'default_joint_pos_rad': self.default_rad,
            'joint_vel_rad_s': qd,
            'velocity_command': np.zeros(3) if command is None else command,
            'action_history': self.integrator.history,
        }

    def on_enable(self, store: SensorStore, now_s: float) -> None:
        """Zero the history, seed the integrator and the soft start with the measured q."""
        q, _ = self.joint_state(store)
        self.integrator.reset(q)
        self.start_rad = filters.clamp_joint_position(q, self.pos_min_rad, self.pos_max_rad)
        self.previous_rad = self.start_rad.copy()

    def on_latch(self, store: SensorStore, machine: StateMachine) -> None:
        """Remember the measured q for the hold fallback."""
        q, _ = self.joint_state(store)
        self.hold_rad = filters.clamp_joint_position(q, self.pos_min_rad, self.pos_max_rad)

    def armed_command(self, action: np.ndarray, fraction: float,
                      store: SensorStore) -> np.ndarray:
        """Integrator -> joint clamp -> rate limit -> torque feasibility -> soft-start blend."""
        q, qd = self.joint_state(store)
        target = self.integrator.step(action)
        target = filters.clamp_joint_position(target, self.pos_min_rad, self.pos_max_rad)
        target = filters.rate_limit(target, self.previous_rad, self.max_rate_rad_s, self.dt_s)
        target = filters.torque_feasible(target, q, qd, self.kp, self.kd, self.torque_limit_nm)
        target = filters.soft_start_blend(self.start_rad, target, fraction)
        self.previous_rad = target
        return self._command(target, self.kp, self.kd)

    def fallback_command(self, store: SensorStore, now_s: float,
                         machine: StateMachine) -> np.ndarray:
        """Damping (kp 0, kd damping_kd, q* = measured q) or hold (q* = q at the latch)."""
        if self.params.fallback == 'hold':
            return self._command(self.hold_rad, self.kp, self.kd)
        damping = np.full(len(self.names), self.params.damping_kd)
        return self._command(self.joint_state(store)[0], np.zeros(len(self.names)), damping)

    def final_clamp(self, command: np.ndarray, state: str, store: SensorStore) -> np.ndarray:
        """Targets inside the position limits, torque-feasible where both can hold, finite."""
        n = len(self.names)
        target, kp, kd = command[:n], command[n:2 * n], command[2 * n:]
        q, qd = self.joint_state(store)
        if state != FALLBACK or self.params.fallback == 'hold':
            target = filters.feasible_joint_target(
                target, q, qd, kp, kd, self.torque_limit_nm, self.pos_min_rad, self.pos_max_rad)
        safe = filters.clamp_joint_position(
            np.nan_to_num(q, nan=0.0), self.pos_min_rad, self.pos_max_rad)
        target = np.where(np.isfinite(target), target, safe)
        target = filters.clamp_joint_position(target, self.pos_min_rad, self.pos_max_rad)
        return self._command(target, kp, kd)
