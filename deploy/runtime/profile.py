"""What the Runtime asks of a robot: the profile interface, and a robot's runtime entry.

A robot's folder (`sim2real.deploy.robots.<robot>.runtime`) declares a RobotRuntime: its
node parameters, how its profile is built and how its parameters are checked against a
contract. The Runtime looks the robot up by the parameter ``robot`` and never asks which
robot it drives.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Protocol, runtime_checkable

import numpy as np

from sim2real.contract import Contract
from sim2real.deploy.runtime.integrators import Integrator
from sim2real.deploy.runtime.sensors import Sample, SensorStore, Watchdog
from sim2real.deploy.runtime.state_machine import StateMachine


@runtime_checkable
class RobotProfile(Protocol):
    """A robot's sensor streams, latches, commands and fallback, behind the Runtime."""

    command_kind: str
    """What StepResult.command holds ('thrust_body_rates', 'joint_position', ...)."""
    shapes: dict[str, dict[str, tuple[int, ...]]]
    """Stream -> array name -> shape each sample must hold."""
    watchdogs: list[Watchdog]
    """Staleness checks of the streams."""

    def convert(self, stream: str, sample: Sample) -> Sample:
        """A received sample in the form the store keeps (SampleError if it cannot be)."""

    def off_command(self, store: SensorStore) -> np.ndarray:
        """The command while inactive (motors off, limp)."""

    def latch_reason(self, store: SensorStore, now_s: float) -> str:
        """Why the fallback must latch now ('' when nothing is wrong)."""

    def enable_reason(self, store: SensorStore, now_s: float) -> str:
        """Why arming must be refused now ('' to arm)."""

    def observation_inputs(self, store: SensorStore, now_s: float) -> dict:
        """The inputs the observation terms read."""

    def on_enable(self, store: SensorStore, now_s: float) -> None:
        """Arming: seed the integrator and the soft start."""

    def on_latch(self, store: SensorStore, machine: StateMachine) -> None:
        """The fallback latched: remember what it needs."""

    def armed_command(self, action: np.ndarray, fraction: float,
                      store: SensorStore) -> np.ndarray:
        """The policy's action through the integrator and the safety filters."""

    def fallback_command(self, store: SensorStore, now_s: float,
                         machine: StateMachine) -> np.ndarray:
        """The latched fallback's command."""

    def last_resort(self, now_s: float, machine: StateMachine) -> np.ndarray:
        """A command that reads no sensor, for when computing one failed."""

    def final_clamp(self, command: np.ndarray, state: str,
                    store: SensorStore | None) -> np.ndarray:
        """The last limits every command passes."""

    def estimates(self) -> dict[str, np.ndarray]:
        """Quantities the robot estimates this tick, by name with units ({} for none)."""


@dataclass(frozen=True)
class RobotRuntime:
    """A robot's runtime side."""

    params_cls: type
    """Dataclass of the policy node's parameters (config/<robot>.yaml, policy_node)."""
    make_profile: Callable[[Contract, Any, Integrator], RobotProfile]
    """profile(contract, params, integrator)."""
    check_params: Callable[..., None]
    """check(contract, params, pinocchio model or None): ContractError / ParamError."""
    command_interfaces: dict[str, tuple[str, ...]]
    """Node command_interface -> the action kinds it can carry."""
