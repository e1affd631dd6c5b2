"""Joint-robot profile: position targets with PD gains, behind the joint safety chain.

Streams: 'joint_state' pos_rad(n), vel_rad_s(n) in contract order, or in any order with a
'names' list (matched BY NAME, joint_state.JointStateMapper: the one mapping the node and
the runtime share); 'imu' quat_wxyz(4) [world<-base], ang_vel_b(3) [rad/s; base];
optional 'command' velocity_command(3) [vx m/s, vy m/s, yaw rate rad/s; heading frame],
clipped to velocity_command_limit. Command: [q* (n) rad, kp (n), kd (n)], contract order.
Chain: NaN guard -> integrator -> joint clamp -> rate limit -> torque feasibility ->
soft-start blend (or stand-up to the default pose, rate-limited too) -> latches (tilt, joint
velocity, stale sensors, stale command, leg-odometry speed, e-stop) -> damping or hold
fallback, whose targets go through the same rate limit -> final clamp (position limits;
torque-feasible where possible). The rate limit is relative to the last tick's final target
(the measured pose while disarmed).

Kp and kd must equal the gains the policy was trained with (contract
action.params.kp_nm_per_rad / kd_nm_s_per_rad, required). When the
contract names the feet (robot_params.foot_names), Pinocchio leg odometry estimates the base
velocity every tick from the joint states, the gyro and the lowest feet (stance).
"""

from __future__ import annotations

import math

import numpy as np

from sim2real.contract import Contract, ContractError
from sim2real.deploy.runtime import filters
from sim2real.assets import resolve_urdf
from sim2real.deploy.runtime.integrators import Integrator
from sim2real.deploy.runtime.joint_state import JointStateMapper
from sim2real.deploy.runtime.leg_odometry import LegOdometry
from sim2real.deploy.runtime.params import JointParams, ParamError
from sim2real.deploy.runtime.quadrotor import rotmat_from_quat
from sim2real.deploy.runtime.sensors import Sample, SensorStore, Watchdog
from sim2real.deploy.runtime.state_machine import FALLBACK, StateMachine

__all__ = ['JointParams', 'JointProfile', 'JointStateMapper', 'LegOdometry']

GAIN_FIELDS = (('kp', 'kp_nm_per_rad'), ('kd', 'kd_nm_s_per_rad'))
JOINT_POSITION_MARGIN_RAD = 0.1
"""How far past its URDF limits a joint may read before the reading counts as a fault
(encoders of real robots read a little past the hard stops)."""
GAIN_RTOL = 1e-6


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
        self._check_gains(contract)
        if params.soft_start_mode not in ('blend', 'stand_up'):
            raise ParamError(f'parameter "soft_start_mode": "{params.soft_start_mode}" is not '
                             f'blend or stand_up')
        for key in ('stand_up_kd', 'leg_odometry_max_speed_m_s'):
            if not getattr(params, key) >= 0.0:
                raise ParamError(f'parameter "{key}": must be >= 0, got {getattr(params, key)}')
        self.stand_up_kd = (np.full(len(self.names), params.stand_up_kd)
                            if params.stand_up_kd > 0.0 else self.kd)
        self.command_limit = np.asarray(params.velocity_command_limit, dtype=np.float64)
        self.mapper = JointStateMapper(self.names)
        feet = contract.robot_params.get('foot_names')
        try:
            self.leg_odometry = None if not feet else LegOdometry(
                resolve_urdf(params.urdf_file), self.names, feet)
        except ValueError as exc:   # feet or joints the URDF does not have
            raise ContractError(f'robot_params.foot_names: {exc}') from exc
        self.default_rad = np.asarray(contract.default_joint_pos_rad, dtype=np.float64)
        self.dt_s = 1.0 / contract.policy_rate_hz
        self.watchdogs = [
            Watchdog('joint_state', params.joint_state_timeout_s, 'joint_state_timeout_s',
                     params.joint_state_topic),
            Watchdog('imu', params.imu_timeout_s, 'imu_timeout_s', params.imu_topic),
            Watchdog('command', params.command_timeout_s, 'command_timeout_s',
                     params.velocity_command_topic)]
        limits = np.asarray(contract.robot_params['joint_pos_limits_rad'], dtype=np.float64)
        self.plausible_min_rad = limits[:, 0] - JOINT_POSITION_MARGIN_RAD
        self.plausible_max_rad = limits[:, 1] + JOINT_POSITION_MARGIN_RAD
        n = len(self.names)
        self.shapes = {'joint_state': {'pos_rad': (n,), 'vel_rad_s': (n,)},
                       'imu': {'quat_wxyz': (4,), 'ang_vel_b': (3,)},
                       'command': {'velocity_command': (3,)}}
        """Arrays each stream's samples must hold (SensorStore validates them)."""
        self.cos_max_tilt = math.cos(params.max_tilt_rad)
        self.start_rad = self.previous_rad = self.hold_rad = self.default_rad.copy()

    def _check_gains(self, contract: Contract) -> None:
        """ContractError naming the field when kp / kd differ from the trained gains."""
        for key, field in GAIN_FIELDS:
            trained = contract.action.params.get(field)
            if not isinstance(trained, list) or len(trained) != len(self.names):
                raise ContractError(f'action.params.{field}: required, {len(self.names)} '
                                    f'gains the policy was trained with, got {trained!r}')
            ours = getattr(self, key)
            for i, (name, want) in enumerate(zip(self.names, trained)):
                if not math.isclose(ours[i], want, rel_tol=GAIN_RTOL):
                    raise ContractError(
                        f'action.params.{field}[{i}]: the policy was trained with {key} '
                        f'{want} on "{name}", parameter {key} gives {ours[i]}')

    def convert(self, stream: str, sample: Sample) -> Sample:
        """A joint state with a 'names' list in contract order (SampleError when it does not
        fit); other samples as they are."""
        if stream != 'joint_state' or 'names' not in sample.values:
            return sample
        values = sample.values
        q, qd = self.mapper.map(values['names'], values.get('pos_rad'), values.get('vel_rad_s'))
        return Sample({'pos_rad': q, 'vel_rad_s': qd}, sample.stamp_s, sample.received_s)

    def joint_state(self, store: SensorStore) -> tuple[np.ndarray, np.ndarray]:
        """(q [rad], qd [rad/s]) in contract order; defaults and zeros before any sample."""
        sample = store.latest('joint_state')
        if sample is None:
            return self.default_rad.copy(), np.zeros(len(self.names))
        return sample.values['pos_rad'], sample.values['vel_rad_s']

    def _command(self, target_rad, kp, kd) -> np.ndarray:
        """[q*, kp, kd] as one float64 vector."""
        return np.concatenate([target_rad, kp, kd]).astype(np.float64)

    def off_command(self, store: SensorStore) -> np.ndarray:
        """Limp: targets at the measured q, kp 0, kd 0."""
        zero = np.zeros(len(self.names))
        return self._command(self.joint_state(store)[0], zero, zero)

    def latch_reason(self, store: SensorStore, now_s: float) -> str:
        """'stale:<stream>', 'tilt', 'joint_position' (beyond the URDF limits by more than
        JOINT_POSITION_MARGIN_RAD: an encoder fault), 'joint_velocity' or 'leg_odometry'
        when a latch condition holds, else ''."""
        for watchdog in self.watchdogs:
            reason = watchdog.reason(store, now_s)
            if reason:
                return reason
        if store.latest('imu') is not None:
            rotmat = rotmat_from_quat(store.value('imu', 'quat_wxyz'))
            if not rotmat[2, 2] >= self.cos_max_tilt:
                return 'tilt'
        q, qd = self.joint_state(store)
        if not np.all((q >= self.plausible_min_rad) & (q <= self.plausible_max_rad)):
            return 'joint_position'
        if not np.all(np.abs(qd) <= self.params.joint_vel_limit_rad_s):
            return 'joint_velocity'
        limit = self.params.leg_odometry_max_speed_m_s
        if self.leg_odometry is not None and limit > 0.0 and not (
                self.leg_odometry.speed_xy_m_s <= limit):
            return 'leg_odometry'
        return ''

    def enable_reason(self, store: SensorStore, now_s: float) -> str:
        """Why enable() must refuse now ('' to arm): latch conditions, joint states required."""
        if store.latest('joint_state') is None:
            return 'stale:joint_state'
        return self.latch_reason(store, now_s)

    def observation_inputs(self, store: SensorStore, now_s: float) -> dict:
        """Term inputs from the latest samples."""
        q, qd = self.joint_state(store)
        imu = store.latest('imu')
        rotmat = np.eye(3) if imu is None else rotmat_from_quat(store.value('imu', 'quat_wxyz'))
        command = store.value('command', 'velocity_command')
        if command is not None:
            command = np.clip(command, -self.command_limit, self.command_limit)
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
        if self.leg_odometry is not None:
            self.leg_odometry.reset()

    def update_leg_odometry(self, store: SensorStore) -> None:
        """Leg-odometry estimate from the latest joint states and imu (no-op without feet);
        joint velocities outside the latch's domain reset it (that latch covers them)."""
        imu = store.latest('imu')
        if self.leg_odometry is None or imu is None or store.latest('joint_state') is None:
            return
        q, qd = self.joint_state(store)
        if not np.all(np.abs(qd) <= self.params.joint_vel_limit_rad_s):
            self.leg_odometry.reset()
            return
        self.leg_odometry.update(q, qd, store.value('imu', 'ang_vel_b'),
                                 rotmat_from_quat(store.value('imu', 'quat_wxyz')))

    def on_latch(self, store: SensorStore, machine: StateMachine) -> None:
        """Remember the measured q for the hold fallback."""
        q, _ = self.joint_state(store)
        self.hold_rad = filters.clamp_joint_position(q, self.pos_min_rad, self.pos_max_rad)

    def armed_command(self, action: np.ndarray, fraction: float,
                      store: SensorStore) -> np.ndarray:
        """Integrator -> joint clamp -> rate limit -> torque feasibility -> soft-start blend.

        A 'stand_up' soft start ignores the action (history stays zero, as at a training
        reset) and moves the targets from the measured to the default pose with stand_up_kd.
        """
        q, qd = self.joint_state(store)
        if self.params.soft_start_mode == 'stand_up' and fraction < 1.0:
            target = filters.soft_start_blend(self.start_rad, self.default_rad, fraction)
            target = self._rate_limited(target)
            target = filters.torque_feasible(target, q, qd, self.kp, self.stand_up_kd,
                                             self.torque_limit_nm)
            return self._command(target, self.kp, self.stand_up_kd)
        target = self.integrator.step(action)
        target = filters.clamp_joint_position(target, self.pos_min_rad, self.pos_max_rad)
        target = self._rate_limited(target)
        target = filters.torque_feasible(target, q, qd, self.kp, self.kd, self.torque_limit_nm)
        target = filters.soft_start_blend(self.start_rad, target, fraction)
        return self._command(target, self.kp, self.kd)

    def _rate_limited(self, target_rad: np.ndarray) -> np.ndarray:
        """target moved at most max_rate_rad_s / rate_hz from the last published target."""
        return filters.rate_limit(target_rad, self.previous_rad, self.max_rate_rad_s, self.dt_s)

    def fallback_command(self, store: SensorStore, now_s: float,
                         machine: StateMachine) -> np.ndarray:
        """Damping (kp 0, kd damping_kd, q* -> measured q) or hold (q* -> q at the latch),
        the target rate-limited from the last published one."""
        if self.params.fallback == 'hold':
            return self._command(self._rate_limited(self.hold_rad), self.kp, self.kd)
        damping = np.full(len(self.names), self.params.damping_kd)
        target = self._rate_limited(self.joint_state(store)[0])
        return self._command(target, np.zeros(len(self.names)), damping)

    def last_resort(self, now_s: float, machine: StateMachine) -> np.ndarray:
        """A command that reads no sensor, for when computing one failed: damping (kp 0, kd
        damping_kd) around the last target, inside the position limits."""
        n = len(self.names)
        target = filters.clamp_joint_position(
            np.nan_to_num(self.previous_rad), self.pos_min_rad, self.pos_max_rad)
        return self._command(target, np.zeros(n), np.full(n, self.params.damping_kd))

    def final_clamp(self, command: np.ndarray, state: str, store: SensorStore) -> np.ndarray:
        """Targets inside the position limits, torque-feasible where both can hold, finite."""
        n = len(self.names)
        target, kp, kd = command[:n], command[n:2 * n], command[2 * n:]
        self.update_leg_odometry(store)
        q, qd = self.joint_state(store)
        if state != FALLBACK or self.params.fallback == 'hold':
            target = filters.feasible_joint_target(
                target, q, qd, kp, kd, self.torque_limit_nm, self.pos_min_rad, self.pos_max_rad)
        safe = filters.clamp_joint_position(
            np.nan_to_num(q, nan=0.0), self.pos_min_rad, self.pos_max_rad)
        target = np.where(np.isfinite(target), target, safe)
        target = filters.clamp_joint_position(target, self.pos_min_rad, self.pos_max_rad)
        self.previous_rad = target   # the next tick's rate limit starts here (limp: at q)
        return self._command(target, kp, kd)
