"""Quadrotor profile: state from odom/imu/setpoint samples, latches, fallback law, final clamp.

Streams: 'odom' pos_w(3) [m; world], quat_wxyz(4) [world<-body], lin_vel_b(3) [m/s; body],
ang_vel_b(3) [rad/s; body]; 'imu' ang_vel_b(3), lin_acc_b(3); optional 'setpoint' pos_w(3).
Commands: thrust_body_rates [collective thrust N, roll, pitch, yaw rate rad/s; body];
rotor_speeds [rad/s] per rotor in URDF order.
"""

from __future__ import annotations

import math

import numpy as np

from sim2real import terms
from sim2real.contract import Contract
from sim2real.deploy.runtime import filters
from sim2real.deploy.runtime.contract_check import max_collective_thrust_n
from sim2real.deploy.runtime.integrators import Integrator
from sim2real.deploy.runtime.params import QuadrotorParams
from sim2real.deploy.runtime.sensors import quat_norm, SensorStore, Watchdog
from sim2real.deploy.runtime.state_machine import ARMED, StateMachine

GRAVITY_M_S2 = 9.81


def rotmat_from_quat(quat_wxyz: np.ndarray) -> np.ndarray:
    """R_wb of a quaternion normalized first without overflow (NaN matrix for a zero one;
    the sensor store refuses quaternions whose norm is not close to 1 before they get here)."""
    norm = quat_norm(quat_wxyz)
    unit = quat_wxyz / norm if 0.0 < norm < math.inf else np.full(4, np.nan)
    return terms.quat_to_rotmat(unit)


class QuadrotorProfile:
    """Everything quadrotor-specific the Runtime delegates to."""

    def __init__(self, contract: Contract, params: QuadrotorParams, integrator: Integrator):
        """Limits from params, mass and rotor model from the contract."""
        self.contract, self.params, self.integrator = contract, params, integrator
        self.kind = contract.action.kind
        self.command_kind = self.kind
        self.mass_kg = float(contract.robot_params['mass_kg'])
        self.hover_thrust_n = float(contract.robot_params['hover_thrust_n'])
        rotors = contract.robot_params.get('rotors', {})
        self.num_rotors = len(rotors.get('directions', [0] * 4))
        self.thrust_coefficient = float(rotors.get('thrust_coefficient', 0.0))
        self.max_speed_rad_s = float(contract.action.params.get(
            'max_speed_rad_s', rotors.get('max_speed_rad_s', 0.0)))
        self.max_collective_n = max_collective_thrust_n(contract)
        self.watchdogs = [Watchdog('odom', params.odom_timeout_s, 'odom_timeout_s'),
                          Watchdog('imu', params.imu_timeout_s, 'imu_timeout_s'),
                          Watchdog('setpoint', params.setpoint_timeout_s, 'setpoint_timeout_s')]
        self.shapes = {'odom': {'pos_w': (3,), 'quat_wxyz': (4,), 'lin_vel_b': (3,),
                                'ang_vel_b': (3,)},
                       'imu': {'ang_vel_b': (3,)}, 'setpoint': {'pos_w': (3,)}}
        """Arrays each stream's samples must hold (SensorStore validates them)."""
        self.cos_max_tilt = math.cos(params.max_tilt_rad)
        self.airborne = False
        """The fallback latched from an armed state (motors were running)."""
        self.motors_off = False
        """The fallback has switched the motors off for good (until enable)."""
        self._rotmat_of = (None, None)

    def rotmat(self, store: SensorStore) -> np.ndarray:
        """R_wb of the latest odom sample (computed once per sample)."""
        sample = store.latest('odom')
        if self._rotmat_of[0] is not sample:
            quat = np.asarray(sample.values['quat_wxyz'], dtype=np.float64)
            self._rotmat_of = (sample, rotmat_from_quat(quat))
        return self._rotmat_of[1]

    # -- state -------------------------------------------------------------------------
    def convert(self, stream: str, sample):
        """Samples as they come (a quadrotor's streams need no mapping)."""
        return sample

    def off_command(self, store: SensorStore | None = None) -> np.ndarray:
        """Motors off: thrust 0 and rates 0, or every rotor speed 0."""
        return np.zeros(4 if self.kind == 'thrust_body_rates' else self.num_rotors)

    def latch_reason(self, store: SensorStore, now_s: float) -> str:
        """'stale:<stream>', 'tilt' or 'geofence' when a latch condition holds, else ''."""
        for watchdog in self.watchdogs:
            reason = watchdog.reason(store, now_s)
            if reason:
                return reason
        rotmat = self.rotmat(store)
        if not rotmat[2, 2] >= self.cos_max_tilt:
            return 'tilt'
        pos_w = store.value('odom', 'pos_w')
        if np.any(pos_w < self.params.geofence_min_m) or np.any(
                pos_w > self.params.geofence_max_m):
            return 'geofence'
        return ''

    def enable_reason(self, store: SensorStore, now_s: float) -> str:
        """Why enable() must refuse now ('' to arm): the latch conditions, odom required."""
        if store.latest('odom') is None:
            return 'stale:odom'
        return self.latch_reason(store, now_s)

    def observation_inputs(self, store: SensorStore) -> dict:
        """Term inputs from the latest samples (ang_vel_b from the fresher of imu and odom)."""
        odom, imu = store.latest('odom'), store.latest('imu')
        gyro = imu if imu is not None and imu.received_s >= odom.received_s else odom
        setpoint = store.value('setpoint', 'pos_w')
        target = np.asarray(self.params.hover_target_m) if setpoint is None else setpoint
        return {
            'pos_w': store.value('odom', 'pos_w'),
            'target_pos_w': target,
            'rotmat_wb': self.rotmat(store),
            'lin_vel_b': store.value('odom', 'lin_vel_b'),
            'ang_vel_b': np.asarray(gyro.values['ang_vel_b'], dtype=np.float64),
            'reference_velocity_w': np.zeros(3),
            'action_history': self.integrator.history,
        }

    # -- commands ----------------------------------------------------------------------
    def on_enable(self, store: SensorStore, now_s: float) -> None:
        """Zero the action history and the fallback flags."""
        self.integrator.reset()
        self.airborne = self.motors_off = False

    def on_latch(self, store: SensorStore, machine: StateMachine) -> None:
        """Remember whether the motors were running when the fallback latched."""
        self.airborne = machine.latched_from in ARMED
        self.motors_off = False

    def armed_command(self, action: np.ndarray, fraction: float,
                      store: SensorStore) -> np.ndarray:
        """Integrator output with the collective thrust scaled by the soft-start fraction."""
        command = self.integrator.step(action)
        if self.kind == 'thrust_body_rates':
            command[0] = filters.soft_start_blend(0.0, command[0], fraction)
            return command
        return command * math.sqrt(fraction)

    def fallback_command(self, store: SensorStore, now_s: float,
                         machine: StateMachine) -> np.ndarray:
        """Motors off on the ground, level-and-descend with fresh odom, blind descent without."""
        odom = store.latest('odom')
        z_m = -math.inf if odom is None else float(odom.values['pos_w'][2])
        if self.motors_off or not self.airborne or not z_m >= self.params.ground_height_m:
            self.motors_off = True
            return self.off_command()
        p = self.params
        if not self.watchdogs[0].stale(store, now_s):
            rotmat = self.rotmat(store)
            gravity_b = terms.projected_gravity(rotmat)
            rates = p.fallback_level_gain * np.array([gravity_b[1], -gravity_b[0], 0.0])
            vz_w = terms.rotate_body_to_world(rotmat, store.value('odom', 'lin_vel_b'))[2]
            accel = GRAVITY_M_S2 + p.fallback_vz_gain * (-p.descend_speed_m_s - vz_w)
            # within [0, 2 g]: a descent needs no more, and an absurd velocity reading
            # (finite, 1e300) must not turn the fallback into a full-thrust climb
            accel = min(max(accel, 0.0), 2.0 * GRAVITY_M_S2)
            thrust = self.mass_kg * accel / max(rotmat[2, 2], 0.5)
        elif now_s - machine.latched_s > p.fallback_max_descent_s:
            self.motors_off = True
            return self.off_command()
        else:
            rates = np.zeros(3)
            thrust = p.fallback_blind_thrust_fraction * self.hover_thrust_n
        if self.kind == 'thrust_body_rates':
            return np.concatenate([[thrust], rates])
        per_rotor = max(thrust, 0.0) / (self.num_rotors * self.thrust_coefficient)
        return np.full(self.num_rotors, math.sqrt(per_rotor))

    def final_clamp(self, command: np.ndarray, state: str,
                    store: SensorStore) -> np.ndarray:
        """Thrust 0 or in [thrust_min, thrust_max], |rates| <= max; speeds within limits."""
        p = self.params
        if self.kind == 'thrust_body_rates':
            return filters.clamp_thrust_rates(command, p.thrust_min_n, p.thrust_max_n,
                                              p.max_body_rate_rad_s)
        return filters.clamp_rotor_speeds(command, self.max_speed_rad_s,
                                          self.thrust_coefficient, p.thrust_max_n)
