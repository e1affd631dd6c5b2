"""Quadrotor runtime profile: state from odom/imu/setpoint samples, latches, fallback law,
final clamp; and the checks of its parameters against the contract.

Streams: 'odom' pos_w(3) [m; world], quat_wxyz(4) [world<-body], lin_vel_b(3) [m/s; body],
ang_vel_b(3) [rad/s; body]; 'imu' ang_vel_b(3), lin_acc_b(3); optional 'setpoint' pos_w(3).
Commands: thrust_body_rates [collective thrust N, roll, pitch, yaw rate rad/s; body];
rotor_speeds [rad/s] per rotor in URDF order.
"""

from __future__ import annotations

import logging
import math

import numpy as np

from sim2real import terms
from sim2real.contract import Contract
from sim2real.contract import ContractError
from sim2real.deploy.robots.quadrotor.cmd_vel_legacy import thrust_map
from sim2real.deploy.robots.quadrotor.landing import LandingEvidence
from sim2real.deploy.robots.quadrotor.params import QuadrotorParams
from sim2real.deploy.robots.quadrotor.twist_check import TwistCheck
from sim2real.deploy.runtime import filters
from sim2real.deploy.runtime.contract_check import non_negative, positive
from sim2real.deploy.runtime.integrators import Integrator
from sim2real.deploy.runtime.params import ParamError
from sim2real.deploy.runtime.physics_check import (
    collective_thrust_n, field, GRAVITY_M_S2, number, tree)
from sim2real.deploy.runtime.sensors import rotmat_from_quat, SensorStore, Watchdog
from sim2real.deploy.runtime.state_machine import ARMED, StateMachine

log = logging.getLogger(__name__)

GYRO_PAIR_S = 0.005
"""Odometry and gyro samples received this close together are compared [s]."""


def max_abs(values) -> float:
    """The largest |value| of a few numbers (0 for none); NaN when any is NaN, as np.max."""
    out = 0.0
    for value in values:
        size = abs(value)
        if not size <= out:
            if size != size:
                return math.nan
            out = size
    return out


class QuadrotorProfile:
    """Everything quadrotor-specific the Runtime delegates to."""

    def __init__(self, contract: Contract, params: QuadrotorParams, integrator: Integrator):
        """Limits from params, mass and rotor model from the contract."""
        self.contract, self.params, self.integrator = contract, params, integrator
        self.kind = contract.action.kind
        self.command_kind = self.kind
        raw = tree(contract)   # every value below was checked present and numeric
        self.mass_kg = number(raw, 'robot_params.mass_kg')
        self.hover_thrust_n = number(raw, 'robot_params.hover_thrust_n')
        self.num_rotors = len(contract.robot_params['rotors']['directions'])
        self.thrust_coefficient = number(raw, 'robot_params.rotors.thrust_coefficient')
        speed_path = ('action.params.max_speed_rad_s' if 'max_speed_rad_s' in (
            contract.action.params) else 'robot_params.rotors.max_speed_rad_s')
        self.max_speed_rad_s = number(raw, speed_path)
        self.max_collective_n = max_collective_thrust_n(contract)
        self.watchdogs = [
            Watchdog('odom', params.odom_timeout_s, 'odom_timeout_s', params.odom_topic),
            Watchdog('imu', params.imu_timeout_s, 'imu_timeout_s', params.imu_topic),
            Watchdog('setpoint', params.setpoint_timeout_s, 'setpoint_timeout_s',
                     params.setpoint_topic)]
        self.shapes = {'odom': {'pos_w': (3,), 'quat_wxyz': (4,), 'lin_vel_b': (3,),
                                'ang_vel_b': (3,)},
                       'imu': {'ang_vel_b': (3,)}, 'setpoint': {'pos_w': (3,)}}
        """Arrays each stream's samples must hold (SensorStore validates them)."""
        self.cos_max_tilt = math.cos(params.max_tilt_rad)
        self.airborne = False
        """The fallback latched from an armed state (motors were running)."""
        self.motors_off = False
        """The fallback has switched the motors off (final, but for a landing revoked while
        the vehicle could still be falling: see landing.py)."""
        self.rate_streams = ('odom', 'imu') if params.odom_angular_velocity else ('imu',)
        """The streams whose body rates are read (the fresher of them)."""
        self.target_pos_w_m = np.asarray(params.hover_target_m, dtype=np.float64)
        """The position target of the last observation built [m; world frame]."""
        self.twist = TwistCheck(params.odom_twist_window_s, params.odom_twist_tolerance_m,
                                params.odom_twist_frame)
        """Whether the odometry's twist explains the motion of its position."""
        self.landing = LandingEvidence(params)
        """Distinct odometry samples for and against 'landed' since the latch."""
        self.cut_s: float | None = None
        """Steady time the landing evidence cut the motors [s] (None: not cut by it)."""
        self.last_command = self.off_command()
        """The last final command (a re-enable in the air soft-starts from it)."""
        self.start_command = self.last_command
        """What the soft start blends from: the last command at enable."""
        self._rotmat_of = (None, None)

    def rotmat(self, store: SensorStore) -> np.ndarray:
        """R_wb of the latest odom sample (computed once per sample)."""
        sample = store.latest('odom')
        if self._rotmat_of[0] is not sample:
            quat = np.asarray(sample.values['quat_wxyz'], dtype=np.float64)
            self._rotmat_of = (sample, rotmat_from_quat(quat))
        return self._rotmat_of[1]

    # -- state -------------------------------------------------------------------------
    def estimates(self) -> dict[str, np.ndarray]:
        """The position target of the last observation [m; world] and the odometry twist
        check's residual [m] (the flight recorder logs them)."""
        return {'target_pos_w_m': self.target_pos_w_m,
                'odom_twist_residual_m': np.array([float(self.twist.residual_m)])}

    def convert(self, stream: str, sample):
        """Samples as they come (a quadrotor's streams need no mapping)."""
        return sample

    def off_command(self, store: SensorStore | None = None) -> np.ndarray:
        """Motors off: thrust 0 and rates 0, or every rotor speed 0 (a tick's, with the store:
        the twist check follows the odometry while disarmed too)."""
        if store is not None:
            self.twist.observe(store.latest('odom'))
        return np.zeros(4 if self.kind == 'thrust_body_rates' else self.num_rotors)

    def latch_reason(self, store: SensorStore, now_s: float) -> str:
        """'stale:<stream>', 'tilt', 'geofence', 'speed', 'odom_twist', 'odom_gyro' or
        'ang_vel' when a latch condition holds, else '' (speed and body rates beyond
        max_speed_m_s / max_ang_vel_rad_s are outside anything the policy was trained for;
        odom_twist: the twist does not explain the position's motion, twist_check.py;
        odom_gyro: the odometry's body rates are not the gyro's)."""
        for watchdog in self.watchdogs:
            reason = watchdog.reason(store, now_s)
            if reason:
                return reason
        rotmat = self.rotmat(store)
        if not rotmat[2, 2] >= self.cos_max_tilt:
            return 'tilt'
        pos_w = store.value('odom', 'pos_w').tolist()
        if any(p < low for p, low in zip(pos_w, self.params.geofence_min_m)) or any(
                p > high for p, high in zip(pos_w, self.params.geofence_max_m)):
            return 'geofence'
        if not self.velocity_usable(store):
            return 'speed'
        self.twist.observe(store.latest('odom'))
        if self.twist.failed:
            return 'odom_twist'
        if self.gyro_disagreement_rad_s(store) > self.params.odom_gyro_tolerance_rad_s > 0.0:
            return 'odom_gyro'
        rates = [store.value(s, 'ang_vel_b') for s in self.rate_streams if store.latest(s)]
        if not all(max_abs(w.tolist()) <= self.params.max_ang_vel_rad_s for w in rates):
            return 'ang_vel'
        return ''

    def velocity_usable(self, store: SensorStore) -> bool:
        """Whether the latest odometry speed is within max_speed_m_s (the trained domain).
        (A twist the position's motion does not explain is still used by the descent: a
        world-frame twist's vertical speed is right within the tilt, and a position glitch
        leaves the velocity as it was.)"""
        return math.hypot(*store.value('odom', 'lin_vel_b').tolist()) <= self.params.max_speed_m_s

    def enable_reason(self, store: SensorStore, now_s: float) -> str:
        """Why enable() must refuse now ('' to arm): the latch conditions, odom required."""
        if store.latest('odom') is None:
            return 'stale:odom'
        reason = self.latch_reason(store, now_s)
        if reason == 'odom_twist':
            return f'{reason} ({self.twist.explain()})'
        if reason == 'odom_gyro':
            return (f'{reason} (the body rates of the odometry differ from the gyro by '
                    f'{self.gyro_disagreement_rad_s(store):.3g} rad/s, odom_gyro_tolerance_rad_s '
                    f'{self.params.odom_gyro_tolerance_rad_s:g}: a twist in another frame or '
                    'unit, or one left at zero; odom_angular_velocity false reads imu alone)')
        return reason

    def gyro_disagreement_rad_s(self, store: SensorStore) -> float:
        """Largest per-axis difference [rad/s] between the odometry's and the gyro's body rates
        when both are read and were received within GYRO_PAIR_S of each other, else 0."""
        odom, imu = store.latest('odom'), store.latest('imu')
        if 'odom' not in self.rate_streams or odom is None or imu is None or not abs(
                odom.received_s - imu.received_s) <= GYRO_PAIR_S:
            return 0.0
        return max_abs(a - b for a, b in zip(odom.values['ang_vel_b'].tolist(),
                                             imu.values['ang_vel_b'].tolist()))

    def observation_inputs(self, store: SensorStore, now_s: float) -> dict:
        """Term inputs from the latest samples (ang_vel_b from the fresher of imu and odom,
        by age: a receive time in the future is not fresh; from imu alone where the odometry's
        angular twist is not a reading)."""
        odom, imu = store.latest('odom'), store.latest('imu')
        gyro = imu if imu is not None and (
            'odom' not in self.rate_streams
            or store.age_s('imu', now_s) <= store.age_s('odom', now_s)) else odom
        rates = np.zeros(3) if gyro is None else gyro.values['ang_vel_b']   # none yet: at rest
        setpoint = store.value('setpoint', 'pos_w')
        target = np.asarray(self.params.hover_target_m) if setpoint is None else setpoint
        self.target_pos_w_m = np.asarray(target, dtype=np.float64)
        return {
            'pos_w': store.value('odom', 'pos_w'),
            'target_pos_w': target,
            'rotmat_wb': self.rotmat(store),
            'lin_vel_b': store.value('odom', 'lin_vel_b'),
            'ang_vel_b': np.asarray(rates, dtype=np.float64),
            'reference_velocity_w': np.zeros(3),
            'action_history': self.integrator.history,
        }

    # -- commands ----------------------------------------------------------------------
    def on_enable(self, store: SensorStore, now_s: float) -> None:
        """Zero the action history and the fallback flags; soft-start from the last command
        (motors off from the ground, the fallback's thrust when re-enabled in the air)."""
        self.integrator.reset()
        self.airborne = self.motors_off = False
        self.start_command = self.last_command.copy()

    def on_latch(self, store: SensorStore, machine: StateMachine) -> None:
        """Remember whether the motors were running when the fallback latched."""
        self.airborne = machine.latched_from in ARMED
        self.motors_off = False
        self.landing.reset()
        self.cut_s = None

    def armed_command(self, action: np.ndarray, fraction: float,
                      store: SensorStore) -> np.ndarray:
        """Integrator output with the collective thrust blended from the soft start's."""
        command = self.integrator.step(action)
        if self.kind == 'thrust_body_rates':
            command[0] = filters.soft_start_blend(self.start_command[0], command[0], fraction)
            return command
        # rotor thrusts (speed^2) blend from the start command's
        return np.sqrt(filters.soft_start_blend(self.start_command ** 2, command ** 2, fraction))

    def fallback_command(self, store: SensorStore, now_s: float,
                         machine: StateMachine) -> np.ndarray:
        """Motors off once landed (or when the motors never ran), level-and-descend with
        fresh odometry, blind descent without it, motors off after fallback_max_descent_s
        either way (a vehicle whose odometry never shows it landed does not run its motors
        on the ground for good).

        Landed: LANDING_SAMPLES distinct fresh plausible samples below ground_height_m in a
        row (landing.py); that cut is revoked while samples show the vehicle still in the air
        within the fall window."""
        odom_fresh = not self.watchdogs[0].stale(store, now_s)
        self.twist.observe(store.latest('odom'))
        self.landing.observe(store.latest('odom') if odom_fresh else None)
        if self.cut_s is not None and self.landing.in_the_air(self.cut_s, now_s):
            log.warning('odometry shows the vehicle in the air after the landing cut: '
                        'level-and-descend')
            self.motors_off, self.cut_s = False, None
        if not self.motors_off and self.airborne and self.landing.landed:
            self.motors_off, self.cut_s = True, now_s
        if self.motors_off or not self.airborne:
            self.motors_off = True
            return self.off_command()
        if now_s - machine.latched_s > self.params.fallback_max_descent_s:
            self.motors_off = True   # the longest descent: down from the ceiling by now
            return self.off_command()
        if odom_fresh:
            thrust, rates = self._level_and_descend(store)
        else:
            thrust, rates = self._blind_thrust_n(), np.zeros(3)
        return self._thrust_command(thrust, rates)

    def _level_and_descend(self, store: SensorStore) -> tuple[float, np.ndarray]:
        """(thrust [N], body rates [rad/s]): level by attitude, descend at descend_speed_m_s
        by vertical speed; without a usable speed, the blind thrust."""
        p, rotmat = self.params, self.rotmat(store)
        gravity_b = terms.projected_gravity(rotmat)
        rates = p.fallback_level_gain * np.array([gravity_b[1], -gravity_b[0], 0.0])
        if not self.velocity_usable(store):
            return self._blind_thrust_n(), rates
        vz_w = terms.rotate_body_to_world(rotmat, store.value('odom', 'lin_vel_b'))[2]
        accel = GRAVITY_M_S2 + p.fallback_vz_gain * (-p.descend_speed_m_s - vz_w)
        # 0.5 g keeps the rate controller some thrust to level with; 2 g is all a descent needs
        accel = min(max(accel, 0.5 * GRAVITY_M_S2), 2.0 * GRAVITY_M_S2)
        return self.mass_kg * accel / max(rotmat[2, 2], 0.5), rates

    def _blind_thrust_n(self) -> float:
        """Collective thrust of the blind descent [N]."""
        return self.params.fallback_blind_thrust_fraction * self.hover_thrust_n

    def _thrust_command(self, thrust_n: float, rates_rad_s: np.ndarray) -> np.ndarray:
        """[thrust, rates], or equal rotor speeds giving thrust_n (rotor_speeds kind)."""
        if self.kind == 'thrust_body_rates':
            return np.concatenate([[thrust_n], rates_rad_s])
        per_rotor = max(thrust_n, 0.0) / (self.num_rotors * self.thrust_coefficient)
        return np.full(self.num_rotors, math.sqrt(per_rotor))

    def last_resort(self, now_s: float, machine: StateMachine) -> np.ndarray:
        """A command that reads no sensor, for when computing one failed: the blind descent
        while airborne and within fallback_max_descent_s, else motors off; clamped."""
        airborne = self.airborne and not self.motors_off and (
            now_s - machine.latched_s <= self.params.fallback_max_descent_s)
        command = self._thrust_command(self._blind_thrust_n(), np.zeros(3)) if airborne else (
            self.off_command())
        return self._clamped(command)

    def final_clamp(self, command: np.ndarray, state: str,
                    store: SensorStore | None) -> np.ndarray:
        """Thrust 0 or in [thrust_min, thrust_max], |rates| <= max; speeds within limits."""
        self.last_command = self._clamped(command)
        return self.last_command

    def _clamped(self, command: np.ndarray) -> np.ndarray:
        """command within the parameter limits (pure filters)."""
        p = self.params
        if self.kind == 'thrust_body_rates':
            return filters.clamp_thrust_rates(command, p.thrust_min_n, p.thrust_max_n,
                                              p.max_body_rate_rad_s)
        return filters.clamp_rotor_speeds(command, self.max_speed_rad_s,
                                          self.thrust_coefficient, p.thrust_max_n)


def max_collective_thrust_n(contract: Contract) -> float:
    """The contract's largest collective thrust [N] (action params, else the rotor model)."""
    if 'max_collective_thrust_n' in contract.action.params:
        return number(tree(contract), 'action.params.max_collective_thrust_n')
    return collective_thrust_n(field(tree(contract), 'robot_params.rotors'))


def check_legacy_thrust(params: QuadrotorParams) -> None:
    """The legacy thrust map is known and reaches thrust_max_n at crazyswarm2's 60000."""
    try:
        legacy = thrust_map(params.legacy_thrust_map)
    except ValueError as exc:
        raise ParamError(f'parameter "legacy_thrust_map": {exc}') from None
    if params.thrust_max_n > legacy.max_thrust_n:
        raise ParamError(
            f'parameter "thrust_max_n": {params.thrust_max_n} N is more than the firmware '
            f'gives at the largest cmd_vel_legacy thrust (60000) by legacy_thrust_map '
            f'{legacy.name!r}: {legacy.max_thrust_n:.4f} N')


def check_quadrotor_params(contract: Contract, params: QuadrotorParams, model=None) -> None:
    """Thrust, rate, timeout and geofence limits of the parameters against the contract."""
    limit = max_collective_thrust_n(contract)
    if params.thrust_max_n > limit:
        raise ContractError(f'thrust_max_n: {params.thrust_max_n} N exceeds the contract '
                            f'max_collective_thrust_n {limit} N')
    if not 0.0 <= params.thrust_min_n <= params.thrust_max_n:
        raise ParamError(f'parameter "thrust_min_n": {params.thrust_min_n} is not in '
                         f'[0, thrust_max_n={params.thrust_max_n}]')
    if params.command_interface == 'cmd_vel_legacy':
        check_legacy_thrust(params)
    positive(params, 'max_body_rate_rad_s', 'odom_timeout_s', 'max_tilt_rad',
             'rate_hz', 'max_speed_m_s', 'max_ang_vel_rad_s')
    non_negative(params, 'imu_timeout_s', 'setpoint_timeout_s', 'soft_start_s',
                 'fallback_max_descent_s', 'odom_twist_tolerance_m', 'odom_gyro_tolerance_rad_s')
    positive(params, 'odom_twist_window_s')
    if not params.odom_angular_velocity and not params.imu_timeout_s > 0.0:
        raise ParamError('parameter "odom_angular_velocity": false takes body rates from imu '
                         'alone, so imu_timeout_s must be > 0 (the imu stream required)')
    if params.odom_twist_frame not in ('body', 'world'):
        raise ParamError(f'parameter "odom_twist_frame": {params.odom_twist_frame!r} is not '
                         "'body' (nav_msgs: child_frame_id) or 'world'")
    if not np.all(np.less(params.geofence_min_m, params.geofence_max_m)):
        raise ParamError('parameter "geofence_min_m": must be below geofence_max_m per axis')
    raw = tree(contract)
    for path in ('robot_params.mass_kg', 'robot_params.hover_thrust_n'):
        number(raw, path)   # the fallback's thrust law
    collective_thrust_n(field(raw, 'robot_params.rotors'))   # the thrust limits
    if contract.action.kind == 'thrust_body_rates':
        trained = number(raw, 'action.params.max_body_rate_rad_s')
        if not params.max_body_rate_rad_s <= trained:
            raise ContractError(f'max_body_rate_rad_s: parameter {params.max_body_rate_rad_s} '
                                f'rad/s exceeds the trained action.params.max_body_rate_rad_s '
                                f'{trained}; the parameter file may only tighten limits')
