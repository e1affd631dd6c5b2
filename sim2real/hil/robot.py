"""What `sim2real hil` runs for a robot: its HIL profile, found in the robot's folder.

A robot's folder declares ``hil.HIL`` (a RobotHil): its fault cases, scenario timing, how the
monitor decodes the node's command, its nominal and fault runs, the figures of its nominal
run and the bound it is judged on. The runner looks the robot up and never asks which it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from sim2real.deploy.robots import robot_module


def _no_floors(sc) -> tuple:
    """No floors beyond the robot's bound."""
    return ()


def _nothing(mon) -> None:
    """No set-up or tear-down."""


def _no_policy_faults(contract) -> tuple:
    """No faults beyond those of every policy."""
    return ()


@dataclass(frozen=True)
class RobotHil:
    """A robot's HIL scenarios and verdicts."""

    faults: Callable
    """faults(node params, bridge params) -> {name: FaultCase}."""
    scenario: Callable
    """scenario(node params, bridge params, **overrides) -> Scenario."""
    monitor_args: Callable
    """monitor_args(node params, contract) -> HilMonitor keyword arguments (the command's
    message type and decoder, a kp topic, a cmd_vel topic)."""
    nominal: Callable
    """nominal(monitor, scenario, duration_s) -> the nominal run's figures (with
    'limit_violations', 'states_seen', 'received_state_rate_hz', 'diagnostics')."""
    fault_run: Callable
    """fault_run(monitor, scenario, case) -> the fault run's figures (with 'recovered_safe',
    'ticks_to_safe', 'limit_violations', 'expect')."""
    result: Callable
    """result(nominal figures, diagnostics) -> the robot's keys of the JSON result."""
    bound: Callable
    """bound(scenario) -> the NominalBound the nominal run is judged on."""
    floors: Callable = _no_floors
    """floors(scenario) -> further sim2real.verdict.Floor on the nominal run's figures."""
    start: Callable = _nothing
    """start(monitor): before the nodes are awaited (e.g. the operator's cmd_vel)."""
    stop: Callable = _nothing
    """stop(monitor): after the last scenario."""
    identify: Callable | None = None
    """identify(monitor, scenario, excitation) -> the identification run's figures
    ('states_seen', 'fell', 'limit_violations', 'window_s'); None: the robot has none."""
    policy_faults: Callable = _no_policy_faults
    """policy_faults(contract) -> further FaultCase of streams only some policies read (the
    hand's cube tracker, for a policy that observes the cube)."""


def hil_of(robot: str) -> RobotHil:
    """The registered robot's HIL profile; ValueError listing the robots."""
    try:
        return robot_module(robot, 'hil').HIL
    except KeyError as exc:
        raise ValueError(exc.args[0]) from None
