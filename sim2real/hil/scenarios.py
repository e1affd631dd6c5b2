"""What every robot's HIL scenarios share: fault cases, scenario timing, latch conditions.

A robot's scenarios (its folder's ``hil.py``) run nominal operation, then one run per
injected fault, judged on the bridge's ground truth. Each re-launches the robot the way an
operator would (disarm, reset the bridge, arm); faults are switched through the bridge's
`active_faults` parameter. A fault is judged by what it should cause:
- 'tolerate' (drops, small delays): no crash, no limit violation; ticks_to_safe is 0;
- 'latch' (NaN, frozen or late sensors): the node's fallback within 2 control ticks of the
  moment its latch condition holds (the first NaN message is out; or the last fresh message
  of a stream, as the bridge reports it, is older than the node's timeout), safe afterwards,
  no limit violation;
- 'watchdog' (lost commands): the bridge's driver watchdog within 2 control ticks of its
  command timeout.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import math


from sim2real.hil.monitor import HilMonitor


@dataclass(frozen=True)
class FaultCase:
    """One injectable fault and the outcome it must have."""

    name: str
    expect: str
    """'tolerate', 'latch' or 'watchdog'."""
    condition: str = ''
    """When the latch condition holds: 'effect' (the first faulted message is out), 'stale'
    (the last fresh message of a stream is older than the node's timeout for it) or
    'timeout' (onset + the bridge's command timeout)."""
    streams: tuple[str, ...] = ()
    """Sensor streams the fault acts on."""
    max_ticks: int = 2
    """Most control ticks from the condition to the safe state (a latch read through a
    filter needs more: the leg-odometry speed's)."""
    reasons: tuple[str, ...] = ()
    """The latch reasons the fallback may give (any one of them; empty: any reason)."""

    def accepts(self, reason: str) -> bool:
        """Whether a fallback for reason answers this fault."""
        return not self.reasons or reason in self.reasons


@dataclass
class Scenario:
    """Timing of one HIL run and the limits it is judged against."""

    node: dict
    """policy_node parameters (from the parameter file)."""
    bridge: dict
    """sim_bridge parameters."""
    settle_s: float = 3.0
    """Flight time after release before the nominal measurement starts."""
    fault_settle_s: float = 1.5
    """Flight time after release before a fault is switched on."""
    observe_s: float = 1.2
    """How long a fault stays on."""
    tolerate_error_m: float = 0.3
    """Largest distance to the target a tolerated fault may cause."""
    timeout_keys: dict = field(default_factory=dict)
    """The node's timeout parameter of a bridge stream whose name is not
    '<stream>_timeout_s'."""
    joint_names: tuple[str, ...] = ()
    """The policy's joints in contract order, the order of the node's commands (set by the
    runner from the contract; empty for a robot without joints)."""

    @property
    def period_s(self) -> float:
        """Control period of the policy node [s]."""
        return 1.0 / self.node['rate_hz']


def is_number(text: str) -> bool:
    """True for strings float() accepts."""
    try:
        float(text)
    except ValueError:
        return False
    return True


LOOKBACK_S = 1.0
"""How far before the onset's arrival a fault's bridge events are looked for [s]."""


def condition_time(mon: HilMonitor, sc: Scenario, case: FaultCase, onset: dict) -> float:
    """Steady time at which the fault's latch (or watchdog) condition starts to hold."""
    effect = first_effect(mon, onset)
    if case.condition == 'effect':
        return effect['monotonic_s'] if effect else math.inf
    if case.condition == 'stale':
        fresh_s = dict(onset['last_fresh_s'])
        if effect and effect['stream'] in effect.get('last_fresh_s', {}):
            fresh_s[effect['stream']] = effect['last_fresh_s'][effect['stream']]
        return min(fresh_s[s] + sc.node[sc.timeout_keys.get(s, f'{s}_timeout_s')]
                   for s in case.streams)
    if case.condition == 'timeout':
        return onset['monotonic_s'] + sc.bridge['command_timeout_s']
    return onset['monotonic_s']


def first_effect(mon: HilMonitor, onset: dict) -> dict | None:
    """The bridge's 'fault_effect' event of the onset's fault (its first changed sample sent,
    with the last fresh send of each stream by then), None before or without one.

    A stale condition starts from the stream's last fresh message sent: the effect knows it
    where the onset cannot (samples offered before the onset, held in transport, go out
    fresh after it).
    """
    effects = mon.events_since(onset['received_s'] - LOOKBACK_S, 'fault_effect')
    return next((e for e in effects if e['fault'] == onset.get('fault')), None)


def diag_number(mon: HilMonitor, key: str) -> float:
    """A figure of the node's latest diagnostics (since its last enable), NaN if absent."""
    value = mon.diagnostics.get(key, '')
    return float(value) if is_number(value) else math.nan


def watchdog_trip_s(mon: HilMonitor, onset: dict) -> float | None:
    """Steady time of the bridge's first driver-watchdog trip at or after the fault's onset
    (a trip before the fault began is no answer to it); None without one."""
    events = mon.events_since(onset['received_s'] - LOOKBACK_S, 'watchdog')
    trips = [e['monotonic_s'] for e in events if e['monotonic_s'] >= onset['monotonic_s']]
    return trips[0] if trips else None


def judged_window(case: FaultCase, onset_s: float, t_safe_s: float) -> dict:
    """{'judged_window_s': (LOOKBACK_S before onset, the safe tick)} for a latch or watchdog,
    where a simulator stall can fake the outcome (verdicts.stall_doubt); {} for tolerate."""
    if case.expect == 'tolerate':
        return {}
    return {'judged_window_s': (onset_s - LOOKBACK_S, t_safe_s)}
