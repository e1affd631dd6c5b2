"""The generic joint-PD safety chain: position targets with PD gains for any joint robot.

Stream: 'joint_state' pos_rad(n), vel_rad_s(n) in contract order, or in any order with a
'names' list (matched BY NAME, joint_state.JointStateMapper: the one mapping the node and
the runtime share). Command: [q* (n) rad, kp (n), kd (n)], contract order.
Chain: NaN guard -> integrator -> joint clamp -> rate limit -> torque feasibility ->
soft-start blend (or stand-up to the default pose, rate-limited too) -> latches (stale
streams, the early parts' latches such as tilt, joint position plausibility, joint
velocity, the other parts' latches such as leg-odometry speed, e-stop) ->
damping or hold fallback, whose targets go through the same rate limit -> final clamp
(position limits; torque-feasible where possible). The rate limit is relative to the last
tick's final target (the measured pose while disarmed).

A robot composes parts onto the chain (`parts.py`): a floating base's IMU (tilt latch,
orientation and gyro for the terms), a velocity-command stream, leg odometry, and so on;
its params dataclass inherits JointParams and the parts' parameter dataclasses.

Kp and kd must equal the gains the policy was trained with (contract
action.params.kp_nm_per_rad / kd_nm_s_per_rad, required).
"""

from __future__ import annotations

import logging
import math

import numpy as np

from typing import Sequence

from sim2real.contract import Contract, ContractError
from sim2real.deploy.runtime import filters
from sim2real.deploy.runtime.contract_check import positive
from sim2real.deploy.runtime import physics_check
from sim2real.deploy.runtime.physics_check import check_tighter, numbers, tree
from sim2real.deploy.runtime.integrators import Integrator
from sim2real.deploy.runtime.joint_state import JointStateMapper
from sim2real.deploy.runtime.params import JointParams, ParamError
from sim2real.deploy.runtime.parts import JointPart
from sim2real.deploy.runtime.sensors import Sample, SensorStore, Watchdog
from sim2real.deploy.runtime.state_machine import FALLBACK, StateMachine

__all__ = ['JointParams', 'JointProfile', 'JointStateMapper']

log = logging.getLogger(__name__)

GAIN_FIELDS = (('kp', 'kp_nm_per_rad'), ('kd', 'kd_nm_s_per_rad'))
JOINT_POSITION_MARGIN_RAD = 0.1
"""How far past its URDF limits a joint may read before the reading counts as a fault
(encoders of real robots read a little past the hard stops)."""
GAIN_RTOL = 1e-6


class JointProfile:
    """The joint chain the Runtime delegates to, with the parts a robot composes onto it."""

    command_kind = 'joint_position'

    def __init__(self, contract: Contract, params: JointParams, integrator: Integrator,
                 parts: Sequence[type] = ()):
        """Per-joint limits reordered from params.joint_names into contract order; parts:
        classes part(contract, params) whose parameters params holds."""
        self.contract, self.params, self.integrator = contract, params, integrator
        self.names = list(contract.joint_names)
        order = [params.joint_names.index(name) for name in self.names]

        def per_joint(key):
            return np.asarray(getattr(params, key), dtype=np.float64)[order]
        self.kp, self.kd = per_joint('kp'), per_joint('kd')
        self.torque_limit_nm = per_joint('torque_limit_nm')
        self.pos_min_rad, self.pos_max_rad = per_joint('pos_min_rad'), per_joint('pos_max_rad')
        self.max_rate_rad_s = per_joint('max_rate_rad_s')
        self.relax_max_rate_rad_s = (per_joint('relax_max_rate_rad_s')
                                     if params.relax_max_rate_rad_s else self.max_rate_rad_s)
        """The slew cap of a relaxing hold fallback's targets [rad/s], contract order."""
        self.relax_rad = per_joint('relax_pose_rad') if params.relax_pose_rad else None
        """The pose a hold fallback relaxes to after hold_s (None: hold), contract order."""
        self._fallback_since_s: float | None = None
        self._check_gains(contract)
        if params.torque_limit_by not in TORQUE_LIMITERS:
            raise ParamError(f'parameter "torque_limit_by": "{params.torque_limit_by}" is not '
                             f'{" or ".join(TORQUE_LIMITERS)}')
        if params.soft_start_mode not in ('blend', 'stand_up'):
            raise ParamError(f'parameter "soft_start_mode": "{params.soft_start_mode}" is not '
                             f'blend or stand_up')
        if not params.stand_up_kd >= 0.0:
            raise ParamError(f'parameter "stand_up_kd": must be >= 0, got {params.stand_up_kd}')
        self.stand_up_kd = (np.full(len(self.names), params.stand_up_kd)
                            if params.stand_up_kd > 0.0 else self.kd)
        self.mapper = JointStateMapper(self.names)
        self.parts: list[JointPart] = [part(contract, params) for part in parts]
        """The composed parts, in the order their latches and inputs are taken."""
        self.default_rad = np.asarray(contract.default_joint_pos_rad, dtype=np.float64)
        self.dt_s = 1.0 / contract.policy_rate_hz
        self.watchdogs = [
            Watchdog('joint_state', params.joint_state_timeout_s, 'joint_state_timeout_s',
                     params.joint_state_topic)]
        for part in self.parts:
            self.watchdogs.extend(part.watchdogs)
        limits = np.asarray(contract.robot_params['joint_pos_limits_rad'], dtype=np.float64)
        self.joint_limits_rad = limits
        """The trained joint ranges (lower, upper) [rad], contract order, (J, 2)."""
        self.plausible_min_rad = limits[:, 0] - JOINT_POSITION_MARGIN_RAD
        self.plausible_max_rad = limits[:, 1] + JOINT_POSITION_MARGIN_RAD
        n = len(self.names)
        self.shapes = {'joint_state': {'pos_rad': (n,), 'vel_rad_s': (n,)}}
        """Arrays each stream's samples must hold (SensorStore validates them)."""
        for part in self.parts:
            self.shapes.update(part.shapes)
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

    def estimates(self) -> dict[str, np.ndarray]:
        """What the parts estimate this tick, by name with units (the flight recorder logs
        them)."""
        out = {}
        for part in self.parts:
            out.update(part.estimates())
        return out

    def part(self, cls: type):
        """The composed part of class cls (None without one)."""
        return next((p for p in self.parts if isinstance(p, cls)), None)

    def latch_reason(self, store: SensorStore, now_s: float) -> str:
        """'stale:<stream>', the early parts' latches (a base's 'tilt'), 'joint_position'
        (beyond the URDF limits by more than JOINT_POSITION_MARGIN_RAD: an encoder fault),
        'joint_velocity', then the other parts' latches ('leg_odometry'), else ''."""
        for watchdog in self.watchdogs:
            reason = watchdog.reason(store, now_s)
            if reason:
                return reason
        for part in self.parts:
            reason = part.early and part.latch_reason(store, now_s, self)
            if reason:
                return reason
        q, qd = self.joint_state(store)
        if not np.all((q >= self.plausible_min_rad) & (q <= self.plausible_max_rad)):
            return 'joint_position'
        if not np.all(np.abs(qd) <= self.params.joint_vel_limit_rad_s):
            return 'joint_velocity'
        for part in self.parts:
            reason = not part.early and part.latch_reason(store, now_s, self)
            if reason:
                return reason
        return ''

    def enable_reason(self, store: SensorStore, now_s: float) -> str:
        """Why enable() must refuse now ('' to arm): latch conditions, joint states required."""
        if store.latest('joint_state') is None:
            return 'stale:joint_state'
        return self.latch_reason(store, now_s)

    def observation_inputs(self, store: SensorStore, now_s: float) -> dict:
        """Term inputs from the latest samples: the joints' and the parts'."""
        q, qd = self.joint_state(store)
        inputs = {'joint_pos_rad': q, 'default_joint_pos_rad': self.default_rad,
                  'joint_vel_rad_s': qd, 'action_history': self.integrator.history,
                  'joint_target_rad': self.integrator.target_rad,
                  'joint_pos_limits_rad': self.joint_limits_rad}
        for part in self.parts:
            inputs.update(part.observation_inputs(store, now_s))
        return inputs

    def on_enable(self, store: SensorStore, now_s: float) -> None:
        """Zero the history, seed the integrator and the soft start with the measured q."""
        q, _ = self.joint_state(store)
        self.integrator.reset(q)
        self.start_rad = filters.clamp_joint_position(q, self.pos_min_rad, self.pos_max_rad)
        self.previous_rad = self.start_rad.copy()
        for part in self.parts:
            part.on_enable(store, now_s)

    def on_latch(self, store: SensorStore, machine: StateMachine) -> None:
        """Remember the measured q for the hold fallback."""
        q, _ = self.joint_state(store)
        self.hold_rad = filters.clamp_joint_position(q, self.pos_min_rad, self.pos_max_rad)
        self._fallback_since_s = None

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
            target = self._torque_feasible(target, q, qd, self.kp, self.stand_up_kd)
            return self._command(target, self.kp, self.stand_up_kd)
        target = self.integrator.step(action)
        target = filters.clamp_joint_position(target, self.pos_min_rad, self.pos_max_rad)
        target = self._rate_limited(target)
        target = self._torque_feasible(target, q, qd, self.kp, self.kd)
        target = filters.soft_start_blend(self.start_rad, target, fraction)
        return self._command(target, self.kp, self.kd)

    def _torque_feasible(self, target_rad, q_rad, qd_rad_s, kp, kd) -> np.ndarray:
        """target clamped to the torque-feasible interval (torque_limit_by 'node'), or as
        it is (the servos clip their torque)."""
        if self.params.torque_limit_by == 'servo':
            return target_rad
        return filters.torque_feasible(target_rad, q_rad, qd_rad_s, kp, kd,
                                       self.torque_limit_nm)

    def _rate_limited(self, target_rad: np.ndarray, relax: bool = False) -> np.ndarray:
        """target moved at most max_rate_rad_s (relax_max_rate_rad_s while relaxing) /
        rate_hz from the last published target."""
        cap = self.relax_max_rate_rad_s if relax else self.max_rate_rad_s
        return filters.rate_limit(target_rad, self.previous_rad, cap, self.dt_s)

    def fallback_command(self, store: SensorStore, now_s: float,
                         machine: StateMachine) -> np.ndarray:
        """Damping (kp 0, kd damping_kd, q* -> measured q) or hold (q* -> q at the latch,
        after hold_s -> relax_pose_rad where given), the target rate-limited from the last
        published one (at relax_max_rate_rad_s while relaxing)."""
        if self.params.fallback == 'hold':
            if self._fallback_since_s is None:
                self._fallback_since_s = now_s
            held_s = now_s - self._fallback_since_s
            relax = self.relax_rad is not None and held_s >= self.params.hold_s
            goal = self.relax_rad if relax else self.hold_rad
            return self._command(self._rate_limited(goal, relax), self.kp, self.kd)
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
        """Targets inside the position limits, torque-feasible where both can hold (unless
        the servos hold the torque limit), finite."""
        n = len(self.names)
        target, kp, kd = command[:n], command[n:2 * n], command[2 * n:]
        for part in self.parts:
            part.update(store, self)
        q, qd = self.joint_state(store)
        if state != FALLBACK or self.params.fallback == 'hold':
            target = (filters.clamp_joint_position(target, self.pos_min_rad, self.pos_max_rad)
                      if self.params.torque_limit_by == 'servo' else
                      filters.feasible_joint_target(target, q, qd, kp, kd, self.torque_limit_nm,
                                                    self.pos_min_rad, self.pos_max_rad))
        safe = filters.clamp_joint_position(
            np.nan_to_num(q, nan=0.0), self.pos_min_rad, self.pos_max_rad)
        target = np.where(np.isfinite(target), target, safe)
        target = filters.clamp_joint_position(target, self.pos_min_rad, self.pos_max_rad)
        self.previous_rad = target   # the next tick's rate limit starts here (limp: at q)
        return self._command(target, kp, kd)


TORQUE_LIMITERS = ('node', 'servo')
"""Values of the torque_limit_by parameter."""
DELTA_KIND = 'joint_position_delta'
"""The delta-on-target integrator's action kind (sim2real.mdp.joint_actions)."""
RATE_CAPPED_KIND = 'joint_position_rate_capped'
"""The rate-capped absolute targets' action kind (sim2real.mdp.joint_actions)."""


def slew_cap_warnings(contract: Contract, params: JointParams) -> list[str]:
    """A delta integrator's policy moves a target by up to scale x clip per tick, a
    rate-capped one at up to its max_rate_rad_s; a slew cap below that rate slows the policy's
    own moves (outside its training). Allowed, as a cautious first run may want, and said
    once per such joint (logged at start). An offset policy's targets have no trained rate
    (they may jump by 2 x scale x clip in a tick): the cap is its only bound, unwarned."""
    action = contract.action
    n = len(contract.joint_names)
    if action.kind == DELTA_KIND:
        step_rad = np.broadcast_to(np.asarray(action.params['scale'], dtype=float), (n,))
        needed = step_rad * action.clip * contract.policy_rate_hz
        why = [f'integrator step {s:g} rad x clip {action.clip:g} at '
               f'{contract.policy_rate_hz:g} Hz' for s in step_rad]
    elif action.kind == RATE_CAPPED_KIND:
        needed = np.broadcast_to(np.asarray(action.params['max_rate_rad_s'], dtype=float),
                                 (n,))
        why = ['its trained rate cap'] * n
    else:
        return []
    by_name = dict(zip(contract.joint_names, zip(needed, why)))
    warnings = []
    for i, (name, cap) in enumerate(zip(params.joint_names, params.max_rate_rad_s)):
        rate, reason = by_name.get(name, (0.0, ''))
        if cap < rate * (1.0 - 1e-9):
            warnings.append(f'parameter "max_rate_rad_s[{i}]": {cap:g} rad/s is below the rate '
                            f"of the policy's own targets on \"{name}\", {rate:g} rad/s "
                            f'({reason}): the node will slow its moves')
    return warnings


def check_joint_params(contract: Contract, params: JointParams, model=None) -> None:
    """Joint names by name, per-joint list lengths and limits (within the URDF's)."""
    for i, name in enumerate(contract.joint_names):
        if name not in params.joint_names:
            raise ContractError(f'joint_names[{i}]: contract joint "{name}" has no entry in '
                                f'parameter joint_names')
    for name in params.joint_names:
        if name not in contract.joint_names:
            raise ContractError(f'joint_names: parameter joint "{name}" is not in the contract')
    n = len(params.joint_names)
    for key in ('kp', 'kd', 'torque_limit_nm', 'pos_min_rad', 'pos_max_rad', 'max_rate_rad_s'):
        if len(getattr(params, key)) != n:
            raise ParamError(f'parameter "{key}": {len(getattr(params, key))} values for '
                             f'{n} joints')
    if len(params.relax_max_rate_rad_s) not in (0, n):   # optional: empty or per joint
        raise ParamError(f'parameter "relax_max_rate_rad_s": '
                         f'{len(params.relax_max_rate_rad_s)} values for {n} joints')
    if min(params.kp + params.kd + params.torque_limit_nm, default=0.0) < 0.0:
        raise ParamError('parameter "kp": gains and torque limits must be >= 0')
    if not np.all(np.less(params.pos_min_rad, params.pos_max_rad)):
        raise ParamError('parameter "pos_min_rad": must be below pos_max_rad per joint')
    relax = np.asarray(params.relax_pose_rad, dtype=np.float64)
    low, high = np.asarray(params.pos_min_rad), np.asarray(params.pos_max_rad)
    if len(relax) and (len(relax) != n or not np.all((low <= relax) & (relax <= high))):
        raise ParamError(f'parameter "relax_pose_rad": must be empty or {n} values within '
                         'pos_min_rad..pos_max_rad')
    if not params.hold_s >= 0.0:
        raise ParamError(f'parameter "hold_s": must be >= 0, got {params.hold_s}')
    if len(relax) and params.fallback != 'hold':
        raise ParamError('parameter "relax_pose_rad": only the hold fallback relaxes; '
                         f'fallback is "{params.fallback}"')
    if params.fallback not in ('damping', 'hold'):
        raise ParamError(f'parameter "fallback": "{params.fallback}" is not damping or hold')
    positive(params, 'joint_state_timeout_s', 'joint_vel_limit_rad_s')
    positive(params, *[f'max_rate_rad_s[{i}]' for i in range(n)],
             *[f'relax_max_rate_rad_s[{i}]'
               for i in range(len(params.relax_max_rate_rad_s))])
    for warning in slew_cap_warnings(contract, params):
        log.warning('%s', warning)
    limits = numbers(physics_check.field(tree(contract), 'robot_params.joint_pos_limits_rad'),
                     'robot_params.joint_pos_limits_rad', len(contract.joint_names))
    if limits.shape != (len(contract.joint_names), 2):
        raise ContractError('robot_params.joint_pos_limits_rad: must hold [lower, upper] per '
                            'joint (the plausibility latch reads it)')
    if model is not None:
        check_tighter(params, model)
