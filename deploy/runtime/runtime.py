"""Runtime: the one object the policy node talks to (time injected, never blocks, no ROS).

One tick: guard on samples (non-finite, malformed, implausible) -> clock guard -> latches ->
observation -> policy -> NaN guard on the action -> integrator and filters (profile) ->
fallback when latched -> final clamp. No exception escapes step() or enable(): an error
inside the chain latches the fallback ('error:<type>'), and if the fallback itself fails,
the profile's sensor-free last resort is sent.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pinocchio as pin

from sim2real import terms
from sim2real.assets import urdf_path
from sim2real.contract import Contract
from sim2real.deploy.robots import runtime_of
from sim2real.deploy.runtime.contract_check import check_params, check_physics, check_urdf
from sim2real.deploy.runtime.filters import all_finite
from sim2real.deploy.runtime.integrators import make_integrator
from sim2real.deploy.runtime.observations import action_history_length, ObservationBuilder
from sim2real.deploy.runtime.params import load_params, params_from_dict
from sim2real.deploy.runtime.policy import PolicyRunner
from sim2real.deploy.runtime.sensors import rising_run, Sample, SampleError, SensorStore
from sim2real.deploy.runtime.state_machine import FALLBACK, INACTIVE, StateMachine

log = logging.getLogger(__name__)


@dataclass
class StepResult:
    """What one control tick decided."""

    command: np.ndarray
    """Command, float64, in units of Runtime.command_kind."""
    state: str
    """'inactive' | 'soft_start' | 'active' | 'fallback'."""
    reason: str
    """Latch reason ('stale:odom', 'nan:imu', 'tilt', 'geofence', 'estop', ...) or ''."""
    inference_s: float | None
    """Policy wall time [s], None when the policy did not run."""
    action: np.ndarray | None
    """Raw policy output, None when the policy did not run."""
    observation: np.ndarray | None = None
    """The policy input of this tick (1, observation_size), None when none was built."""


class Runtime:
    """Latest-state store, observation builder, policy, integrator, safety chain, state."""

    def __init__(self, contract: Contract, params, policy: PolicyRunner,
                 robot_model: pin.Model | None = None, urdf_path: Path | None = None):
        """Check params, the physics of the URDF at urdf_path (its Pinocchio model
        robot_model) and the policy graph against contract; ContractError / ParamError."""
        robot = runtime_of(params.robot)
        check_params(contract, params, robot, robot_model)
        if urdf_path is not None:
            check_physics(contract, urdf_path, robot_model)
        self.contract, self.params, self.policy = contract, params, policy
        self.robot_model = robot_model
        """Pinocchio model of the URDF (None when built without one)."""
        self.urdf_path = urdf_path
        """The URDF checked against the contract (None when built without one)."""
        self.builder = ObservationBuilder(contract)
        policy.check_sizes(contract)
        self.integrator = make_integrator(contract, action_history_length(contract))
        self.profile = robot.make_profile(contract, params, self.integrator)
        self.command_kind = self.profile.command_kind
        self.rate_hz = float(params.rate_hz)
        self.period_s = 1.0 / self.rate_hz
        self.store = SensorStore(self.profile.shapes)
        self.machine = StateMachine(params.soft_start_s)
        self.started_s: float | None = None
        """Steady time of the first step() or enable() [s] (the node's start, in effect)."""
        self._now_s = -math.inf
        self._behind: list[float] = []
        self._warm_up()

    def _warm_up(self) -> None:
        """Pay one-time costs now, not in the first armed tick (or in an enable() call).

        The first array-API call imports array_api_compat's numpy namespace (~60 ms here) and
        onnxruntime's first run allocates its buffers: inside a tick that would starve the
        sensor callbacks long enough to trip the stale-sensor latch.
        """
        terms.quat_to_rotmat(np.array([1.0, 0.0, 0.0, 0.0]))
        self.policy.run(np.zeros((1, self.contract.observation_size), dtype=np.float32))

    @classmethod
    def from_files(cls, policy_path, params_file, node_name: str = 'policy_node',
                   overrides: dict | None = None) -> Runtime:
        """Load params, policy and URDF (policy_path '' or None: params.policy_file)."""
        params = load_params(params_file, node_name, overrides)
        return cls.from_params(params, policy_path)

    @classmethod
    def from_values(cls, values: dict, node_name: str = 'policy_node') -> Runtime:
        """From a flat parameter dict (a ROS node's declared parameters)."""
        return cls.from_params(params_from_dict(dict(values), node_name))

    @classmethod
    def from_params(cls, params, policy_path=None) -> Runtime:
        """Load the policy (policy_path or params.policy_file); check it against the
        parameters, the URDF and the physics the URDF describes."""
        policy = PolicyRunner(Path(policy_path or params.policy_file))
        urdf = urdf_path(params.urdf_file)
        return cls(policy.contract, params, policy, check_urdf(policy.contract, urdf), urdf)

    @property
    def state(self) -> str:
        """Current state name."""
        return self.machine.state

    def put(self, stream: str, sample: Sample) -> None:
        """Store the latest sample of a stream; unusable ones latch at the next tick."""
        try:
            self.store.put(stream, self.profile.convert(stream, sample))
        except SampleError as exc:
            self.store.flag(stream, f'bad:{stream} ({exc})')
        except Exception as exc:   # not a Sample of named arrays at all: never raise here
            self.store.flag(stream, f'bad:{stream} (malformed sample: {type(exc).__name__})')

    def observation(self, now_s: float | None = None, advance: bool = False) -> np.ndarray:
        """The policy input (1, observation_size) float32 from the latest samples (at the
        last tick's time unless now_s is given); advance: a control tick's, which joins the
        observation history."""
        now_s = self._now_s if now_s is None else now_s
        return self.builder.build(self.profile.observation_inputs(self.store, now_s),
                                  advance)

    def step(self, now_s: float) -> StepResult:
        """One control tick at steady-clock time now_s [s]; never raises."""
        with np.errstate(all='ignore'):
            now_s, backwards = self._clock(now_s)
            try:
                return self._step(now_s, backwards)
            except Exception as exc:   # a bug or garbage that got through: fail safe
                log.exception('control tick failed; latching the fallback')
                self._latch(f'error:{type(exc).__name__}', now_s)
                return StepResult(self._safe_command(now_s), self.machine.state,
                                  self.machine.reason, None, None)

    def _clock(self, now_s: float) -> tuple[float, float]:
        """(monotonic now [s], how far now_s went back [s]): time never runs backwards here.

        A clock that jumped (forward or back) and then runs on steadily is followed again
        after sensors.RESYNC_SAMPLES rising readings behind the latest one, as a stream is.
        """
        if self.started_s is None:
            self.started_s = now_s
        if now_s >= self._now_s:
            self._now_s, self._behind = now_s, []
            return now_s, 0.0
        backwards = self._now_s - now_s
        if rising_run(self._behind, now_s, strict=False):
            self._now_s = now_s
        return self._now_s, backwards

    def _safe_command(self, now_s: float) -> np.ndarray:
        """The fallback command, or the profile's sensor-free last resort when even that
        fails (quadrotor: the blind descent in the air; joints: damping at the last target)."""
        try:
            command = self.profile.fallback_command(self.store, now_s, self.machine)
            return self.profile.final_clamp(command, self.machine.state, self.store)
        except Exception:
            log.exception('fallback command failed; sending the last-resort command')
            return self.profile.last_resort(now_s, self.machine)

    def _step(self, now_s: float, backwards_s: float) -> StepResult:
        """step() without the error guard."""
        problems = self.store.take_problems()
        machine, command = self.machine, None
        inference_s = action = obs = None
        if machine.armed:
            reason = (problems[0] if problems else 'clock' if backwards_s > 0.0
                      else self.profile.latch_reason(self.store, now_s))
            if not reason:
                fraction = machine.soft_start_fraction(now_s)
                obs = self.observation(advance=True)
                if not all_finite(obs):
                    reason = 'nan:observation'
                else:
                    action, inference_s = self.policy.run(obs)
                    if not all_finite(action):
                        reason = 'nan:action'
                    else:
                        command = self.profile.armed_command(action, fraction, self.store)
            if reason:
                self._latch(reason, now_s)
        if machine.state == FALLBACK:
            command = self.profile.fallback_command(self.store, now_s, machine)
        elif machine.state == INACTIVE:
            command = self.profile.off_command(self.store)
        command = self.profile.final_clamp(command, machine.state, self.store)
        return StepResult(command, machine.state, machine.reason, inference_s, action, obs)

    def _latch(self, reason: str, now_s: float) -> None:
        """Enter the latched fallback with reason."""
        was = self.machine.state
        self.machine.latch(reason, now_s)
        if was != FALLBACK:
            log.warning('fallback latched: %s', reason)
            try:
                self.profile.on_latch(self.store, self.machine)
            except Exception:   # the latch holds; the fallback then works from defaults
                log.exception('fallback set-up failed')

    def enable(self, now_s: float) -> tuple[bool, str]:
        """Arm, or re-enable after a latch; refused (with what is wrong and since when)
        unless the clock runs forward and the sensors are fresh, valid and in limits."""
        if self.machine.armed:
            return True, 'already armed'
        with np.errstate(all='ignore'):
            now_s, backwards = self._clock(now_s)
            try:
                reason = self._enable_reason(now_s, backwards)
            except Exception as exc:
                log.exception('enable check failed')
                reason = f'error:{type(exc).__name__} ({exc})'
        if reason:
            return False, reason
        self.profile.on_enable(self.store, now_s)
        self.builder.reset()
        self.machine.enable(now_s)
        return True, ''

    def _enable_reason(self, now_s: float, backwards_s: float) -> str:
        """Why enable() must refuse now, explained for an operator ('' to arm)."""
        pending = self.store.pending_problems()
        if pending:
            return pending[0]
        if backwards_s > 0.0:
            return f'clock (the steady clock went back {backwards_s:.3g} s)'
        reason = self.profile.enable_reason(self.store, now_s)
        for watchdog in self.profile.watchdogs:
            if reason == f'stale:{watchdog.stream}':
                return f'{reason} ({watchdog.explain(self.store, now_s, self.started_s)})'
        return reason

    def disable(self, now_s: float) -> None:
        """Back to inactive (motors off / limp)."""
        self.machine.disable()

    def estop(self, now_s: float) -> None:
        """Latched fallback with reason 'estop' (at the latest time seen: never raises)."""
        self._latch('estop', max(self._now_s, now_s))
