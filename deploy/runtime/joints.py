"""Joint-robot profile: position targets with PD gains, behind the joint safety chain.

Streams: 'joint_state' pos_rad(n), vel_rad_s(n) in contract order (JointStateMapper puts
a message's by-name arrays in that order), or in any order with a 'names' array; 'imu'
quat_wxyz(4) [world<-base], ang_vel_b(3) [rad/s; base]; optional 'command'
velocity_command(3) [vx m/s, vy m/s, yaw rate rad/s; heading frame], clipped to
velocity_command_limit. Command: [q* (n) rad, kp (n), kd (n)], contract joint order.
Chain: NaN guard -> integrator -> joint clamp -> rate limit -> torque feasibility ->
soft-start blend (or stand-up to the default pose) -> latches (tilt, joint velocity, stale
sensors, stale command, leg-odometry speed, e-stop) -> damping or hold fallback -> final
clamp (position limits; torque-feasible where possible).

Kp and kd must equal the gains the policy was trained with (contract
action.params.kp_nm_per_rad / kd_nm_s_per_rad) when the contract carries them. When the
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
from sim2real.deploy.runtime.legged_kinematics import LeggedKinematics
from sim2real.deploy.runtime.params import JointParams, ParamError
from sim2real.deploy.runtime.quadrotor import rotmat_from_quat
from sim2real.deploy.runtime.sensors import SensorStore, Watchdog
from sim2real.deploy.runtime.state_machine import FALLBACK, StateMachine

__all__ = ['JointParams', 'JointProfile', 'JointStateMapper', 'LegOdometry']

GAIN_FIELDS = (('kp', 'kp_nm_per_rad'), ('kd', 'kd_nm_s_per_rad'))
GAIN_RTOL = 1e-6


class JointStateMapper:
    """A JointState's arrays (any joint order, matched BY NAME) -> contract joint order.

    A contract joint missing from the message, or position/velocity arrays whose length
    differs from the name list, give NaN: the runtime's NaN guard then latches the fallback.
    The name -> index map is cached for the last name list seen.
    """

    def __init__(self, joint_names):
        """Contract joint names in policy order."""
        self.names = list(joint_names)
        self._key: tuple | None = None
        self._index = np.zeros(0, dtype=int)

    def _indices(self, names) -> np.ndarray:
        """Index of each contract joint in names (-1 when absent)."""
        key = tuple(names)
        if key != self._key:
            where = {name: i for i, name in enumerate(key)}
            self._key, self._index = key, np.array([where.get(n, -1) for n in self.names])
        return self._index

    def map(self, names, position, velocity) -> tuple[np.ndarray, np.ndarray]:
        """(q [rad], qd [rad/s]) in contract order."""
        index = self._indices(names)
        return self._pick(index, position, len(names)), self._pick(index, velocity, len(names))

    @staticmethod
    def _pick(index: np.ndarray, values, size: int) -> np.ndarray:
        """values[index] with NaN for absent joints or a wrongly sized array."""
        out = np.full(len(index), np.nan)
        values = np.asarray(values, dtype=np.float64)
        if values.shape == (size,):
            found = index >= 0
            out[found] = values[index[found]]
        return out


class LegOdometry:
    """Base velocity from the legs (Pinocchio) with a stance guess and a filtered speed.

    Stance: the feet whose gravity-aligned height below the base is within STANCE_MARGIN_M
    of the lowest foot (no contact sensors needed). The xy speed in the gravity-aligned
    frame is low-pass filtered (EMA) so one slipping tick does not trip the latch.
    """

    STANCE_MARGIN_M = 0.02
    EMA_ALPHA = 0.3

    def __init__(self, urdf_path, joint_names, foot_names):
        """Kinematics of urdf_path in contract joint order."""
        self.kinematics = LeggedKinematics(urdf_path, joint_names, foot_names)
        self.reset()

    def reset(self) -> None:
        """Forget the estimate."""
        self.lin_vel_b = np.zeros(3)
        """Latest estimate [m/s; base frame] (NaN when it could not be formed)."""
        self.speed_xy_m_s = 0.0
        """Filtered horizontal speed [m/s]."""

    def update(self, q, qd, ang_vel_b, rotmat_wb) -> None:
        """One estimate from joint states [rad, rad/s], gyro [rad/s] and orientation."""
        if not (filters.all_finite(q, qd, ang_vel_b, rotmat_wb)):
            return
        feet_b = self.kinematics.foot_positions_b(q)
        height = (feet_b @ rotmat_wb.T)[:, 2]
        stance = height <= height.min() + self.STANCE_MARGIN_M
        self.lin_vel_b = self.kinematics.base_velocity_from_legs(q, qd, ang_vel_b, stance)
        speed = float(np.linalg.norm((rotmat_wb @ self.lin_vel_b)[:2]))
        self.speed_xy_m_s += self.EMA_ALPHA * (speed - self.speed_xy_m_s)


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
        self.leg_odometry = None if not feet else LegOdometry(
            resolve_urdf(params.urdf_file), self.names, feet)
        self.default_rad = np.asarray(contract.default_joint_pos_rad, dtype=np.float64)
        self.dt_s = 1.0 / contract.policy_rate_hz
        self.watchdogs = [Watchdog('joint_state', params.joint_state_timeout_s),
                          Watchdog('imu', params.imu_timeout_s),
                          Watchdog('command', params.command_timeout_s)]
        self.cos_max_tilt = math.cos(params.max_tilt_rad)
        self.start_rad = self.previous_rad = self.hold_rad = self.default_rad.copy()

    def _check_gains(self, contract: Contract) -> None:
        """ContractError naming the field when kp / kd differ from the trained gains."""
        for key, field in GAIN_FIELDS:
            trained = contract.action.params.get(field)
            if trained is None:
                continue
            ours = getattr(self, key)
            for i, (name, want) in enumerate(zip(self.names, trained)):
                if not math.isclose(ours[i], want, rel_tol=GAIN_RTOL):
                    raise ContractError(
                        f'action.params.{field}[{i}]: the policy was trained with {key} '
                        f'{want} on "{name}", parameter {key} gives {ours[i]}')

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

    def observation_inputs(self, store: SensorStore) -> dict:
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
        """Leg-odometry estimate from the latest joint states and imu (no-op without feet)."""
        imu = store.latest('imu')
        if self.leg_odometry is None or imu is None or store.latest('joint_state') is None:
            return
        q, qd = self.joint_state(store)
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
            target = filters.torque_feasible(target, q, qd, self.kp, self.stand_up_kd,
                                             self.torque_limit_nm)
            self.previous_rad = target
            return self._command(target, self.kp, self.stand_up_kd)
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
        self.update_leg_odometry(store)
        q, qd = self.joint_state(store)
        if state != FALLBACK or self.params.fallback == 'hold':
            target = filters.feasible_joint_target(
                target, q, qd, kp, kd, self.torque_limit_nm, self.pos_min_rad, self.pos_max_rad)
        safe = filters.clamp_joint_position(
            np.nan_to_num(q, nan=0.0), self.pos_min_rad, self.pos_max_rad)
        target = np.where(np.isfinite(target), target, safe)
        target = filters.clamp_joint_position(target, self.pos_min_rad, self.pos_max_rad)
        return self._command(target, kp, kd)
