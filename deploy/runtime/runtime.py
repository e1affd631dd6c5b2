"""Runtime: the one object the policy node talks to (time injected, never blocks, no ROS).

One tick: NaN guard on samples -> latches -> observation -> policy -> NaN guard on the action
-> integrator and filters (profile) -> fallback when latched -> final clamp.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pinocchio as pin

from sim2real import terms
from sim2real.assets import resolve_urdf
from sim2real.contract import Contract
from sim2real.deploy.runtime.contract_check import check_params, check_urdf
from sim2real.deploy.runtime.filters import all_finite
from sim2real.deploy.runtime.integrators import make_integrator
from sim2real.deploy.runtime.joints import JointProfile
from sim2real.deploy.runtime.observations import action_history_length, ObservationBuilder
from sim2real.deploy.runtime.params import load_params, params_from_dict, QuadrotorParams
from sim2real.deploy.runtime.policy import PolicyRunner
from sim2real.deploy.runtime.quadrotor import QuadrotorProfile
from sim2real.deploy.runtime.sensors import Sample, SensorStore
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


class Runtime:
    """Latest-state store, observation builder, policy, integrator, safety chain, state."""

    def __init__(self, contract: Contract, params, policy: PolicyRunner,
                 robot_model: pin.Model | None = None):
        """Check params (and the policy graph) against contract; ContractError/ParamError."""
        check_params(contract, params, robot_model)
        self.contract, self.params, self.policy = contract, params, policy
        self.robot_model = robot_model
        """Pinocchio model of the URDF (None when built without one)."""
        self.builder = ObservationBuilder(contract)
        policy.check_sizes(contract)
        self.integrator = make_integrator(contract, action_history_length(contract))
        profile_cls = QuadrotorProfile if isinstance(params, QuadrotorParams) else JointProfile
        self.profile = profile_cls(contract, params, self.integrator)
        self.command_kind = self.profile.command_kind
        self.rate_hz = float(params.rate_hz)
        self.period_s = 1.0 / self.rate_hz
        self.store = SensorStore()
        self.machine = StateMachine(params.soft_start_s)
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
        """Load the policy (policy_path or params.policy_file) and check it against the URDF."""
        policy = PolicyRunner(Path(policy_path or params.policy_file))
        model = check_urdf(policy.contract, resolve_urdf(params.urdf_file))
        return cls(policy.contract, params, policy, model)

    @property
    def state(self) -> str:
        """Current state name."""
        return self.machine.state

    def put(self, stream: str, sample: Sample) -> None:
        """Store the latest sample of a stream (non-finite samples latch at the next tick)."""
        self.store.put(stream, sample)

    def observation(self) -> np.ndarray:
        """The policy input (1, observation_size) float32 from the latest samples."""
        return self.builder.build(self.profile.observation_inputs(self.store))

    def step(self, now_s: float) -> StepResult:
        """One control tick at steady-clock time now_s [s]."""
        with np.errstate(all='ignore'):
            return self._step(now_s)

    def _step(self, now_s: float) -> StepResult:
        """step() without the floating-point warnings of garbage inputs."""
        nonfinite = self.store.take_nonfinite()
        machine, command = self.machine, None
        inference_s = action = None
        if machine.armed:
            reason = (f'nan:{nonfinite[0]}' if nonfinite
                      else self.profile.latch_reason(self.store, now_s))
            if not reason:
                fraction = machine.soft_start_fraction(now_s)
                obs = self.observation()
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
        return StepResult(command, machine.state, machine.reason, inference_s, action)

    def _latch(self, reason: str, now_s: float) -> None:
        """Enter the latched fallback with reason."""
        was = self.machine.state
        self.machine.latch(reason, now_s)
        if was != FALLBACK:
            log.warning('fallback latched: %s', reason)
            self.profile.on_latch(self.store, self.machine)

    def enable(self, now_s: float) -> tuple[bool, str]:
        """Arm, or re-enable after a latch; refused unless sensors are fresh and finite."""
        if self.machine.armed:
            return True, 'already armed'
        pending = self.store.pending_nonfinite()
        with np.errstate(all='ignore'):
            reason = (f'nan:{pending[0]}' if pending
                      else self.profile.enable_reason(self.store, now_s))
        if reason:
            return False, reason
        self.profile.on_enable(self.store, now_s)
        self.machine.enable(now_s)
        return True, ''

    def disable(self, now_s: float) -> None:
        """Back to inactive (motors off / limp)."""
        self.machine.disable()

    def estop(self, now_s: float) -> None:
        """Latched fallback with reason 'estop'."""
        self._latch('estop', now_s)
