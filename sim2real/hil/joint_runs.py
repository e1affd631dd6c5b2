"""HIL runs any joint robot shares: limit checks of position targets and gains, and the fault
run (launch, inject, observe, judge the node's fallback or the bridge's watchdog).

A joint robot's HIL profile supplies what differs: how a run launches (its operator's
streams), faults only the monitor can inject (an operator stream it stops), and whether
the robot fell.
"""

from __future__ import annotations

import logging
import time
from typing import Callable

import numpy as np

from sim2real.deploy.runtime.sensors import DISCOVERY_HINT, DISCOVERY_S
from sim2real.hil import metrics
from sim2real.hil.monitor import HilError, HilMonitor
from sim2real.hil.scenarios import (
    condition_time, FaultCase, is_number, judged_window, Scenario, watchdog_trip_s)

log = logging.getLogger(__name__)

STALLED_ARM_S = 5.0
"""How long an enable refused just after a stall of the simulated robot is asked again [s];
a stream that is really gone stays refused."""
STALL_LOOKBACK_S = 1.0
"""How recent that stall must be [s] (its event reaches the monitor after the stall)."""


def arm(mon: HilMonitor, transient: tuple[str, ...], timeout_s: float) -> float:
    """Enable the node; the steady time of the accepted enable [s].

    A refusal the node marks as DDS discovery (a stream not heard from since its start,
    DISCOVERY_HINT: the node stops saying so DISCOVERY_S after its start) is retried every
    50 ms for as long as the node says so, whatever the robot; one within STALL_LOOKBACK_S
    of a stall of the simulated robot (a stalled machine: every stream late at once, a robot
    still shaken by the physics catching up) for up to STALLED_ARM_S; one for a reason
    containing one of transient (the last samples of the previous scenario's fault) until
    timeout_s.
    """
    t_start, said = time.monotonic(), False
    while True:
        t_enable = time.monotonic()
        try:
            mon.enable(True)
            return t_enable
        except HilError as exc:
            waited_s = t_enable - t_start
            discovery = DISCOVERY_HINT in str(exc) and waited_s <= DISCOVERY_S
            stalled = waited_s <= STALLED_ARM_S and bool(
                mon.events_since(time.monotonic() - STALL_LOOKBACK_S, 'stall'))
            if stalled and not said:
                log.warning('%s, just after the simulated robot stalled: asking again', exc)
                said = True
            listed = any(k in str(exc) for k in transient) and waited_s <= timeout_s
            if not (discovery or stalled or listed):
                raise
            time.sleep(0.05)


def limits_in_contract_order(node: dict, joint_names) -> tuple[np.ndarray, np.ndarray]:
    """The node's pos_min_rad and pos_max_rad (listed in its joint_names order) in the
    contract's joint order; as listed when either order is unknown."""
    low, high = np.asarray(node['pos_min_rad']), np.asarray(node['pos_max_rad'])
    listed = list(node.get('joint_names') or [])
    if joint_names and listed:
        order = [listed.index(name) for name in joint_names]
        low, high = low[order], high[order]
    return low, high


def target_violations(targets, low_rad, high_rad) -> int:
    """Commands (T, n) with a non-finite target or one outside [low, high] (per joint)."""
    targets = np.asarray(targets, dtype=float).reshape(len(targets), -1)
    with np.errstate(invalid='ignore'):
        bad = ~np.isfinite(targets) | (targets < low_rad - 1e-9) | (targets > high_rad + 1e-9)
    return int(bad.any(axis=1).sum())


def violations(mon: HilMonitor, sc: Scenario, t0_s: float, t1_s: float) -> int:
    """Position targets (contract order) outside the node's joint limits or non-finite;
    negative or non-finite gains. (Torque feasibility needs q at the command's instant: it
    is checked by the runtime's own tests, not judged here.)"""
    count = 0
    cmds = mon.window('commands', t0_s, t1_s)
    if cmds:
        low, high = limits_in_contract_order(sc.node, sc.joint_names)
        count += target_violations([c[1] for c in cmds], low, high)
    gains = mon.window('gains', t0_s, t1_s)
    if gains:
        kp = np.array([g[1] for g in gains])
        with np.errstate(invalid='ignore'):
            count += int((~np.isfinite(kp) | (kp < 0.0)).any(axis=1).sum())
    return count


def damped_after(mon: HilMonitor, t_fallback_s: float | None, t_end_s: float) -> bool:
    """Every kp array the node sent after its fallback began is zero (True without gains)."""
    if t_fallback_s is None:
        return False
    gains = mon.window('gains', t_fallback_s + 0.005, t_end_s)
    return all(np.all(g[1] == 0.0) for g in gains)


def inject_bridge_fault(mon: HilMonitor, case: FaultCase) -> dict:
    """Switch a bridge fault on; its onset event as the bridge reports it."""
    t_set = time.monotonic()
    mon.set_faults(case.name)
    mon.wait_for(lambda: mon.events_since(t_set, 'fault_on'), 2.0, f'{case.name} to start')
    return mon.events_since(t_set, 'fault_on')[0]


def clear_bridge_fault(mon: HilMonitor, case: FaultCase) -> None:
    """Switch the bridge's faults off."""
    mon.set_faults('')


def never_fell(mon: HilMonitor, t0_s: float, t1_s: float) -> bool:
    """A robot that cannot fall (a fixed base)."""
    return False


def fault_run(mon: HilMonitor, sc: Scenario, case: FaultCase, launch: Callable,
              inject: Callable = inject_bridge_fault, clear: Callable = clear_bridge_fault,
              fell: Callable = never_fell) -> dict:
    """Launch, run fault_settle_s, inject one fault for observe_s, judge on [onset, end].

    launch(mon) -> steady time of the enable; inject(mon, case) -> the onset event
    (monotonic_s, received_s, last_fresh_s per stream); fell(mon, t0, t1) -> bool.
    'tolerate': safe when it did not fall (or fell back); 'latch': the node's fallback
    within 2 ticks of the condition, damping commanded after it; 'watchdog': the bridge's
    driver watchdog within 2 ticks of its command timeout. Any limit violation fails.
    """
    t_enable = launch(mon)
    time.sleep(sc.fault_settle_s)
    onset_event = inject(mon, case)
    onset = onset_event['monotonic_s']
    time.sleep(sc.observe_s)
    t_end = time.monotonic()
    clear(mon, case)
    count = violations(mon, sc, t_enable, t_end)
    states = mon.window('states', onset - 0.1, t_end)
    state_times, state_names = [s[0] for s in states], [s[1] for s in states]
    fallback_times = [t for t, s in states if s.startswith('fallback')]
    t_fallback = fallback_times[0] if fallback_times else None
    fell_now = fell(mon, onset, t_end)
    t_cond = condition_time(mon, sc, case, onset_event)
    if case.expect == 'tolerate':
        ticks, t_safe = 0, t_end
        safe = not fell_now or t_fallback is not None
    elif case.expect == 'latch':
        ticks = metrics.ticks_to_safe(state_times, state_names, t_cond)
        reason = next((s.partition(':')[2] for s in state_names if s.startswith('fallback')),
                      '')
        safe = (ticks is not None and ticks <= case.max_ticks and damped_after(
            mon, t_fallback, t_end) and case.accepts(reason))
        t_safe = t_end if t_fallback is None else t_fallback
    else:
        t_trip = watchdog_trip_s(mon, onset_event)
        t_safe = t_end if t_trip is None else t_trip
        ticks = metrics.ticks_between(t_cond, t_trip, sc.period_s)
        safe = ticks is not None and ticks <= case.max_ticks
    return {
        'recovered_safe': bool(safe and count == 0),
        'ticks_to_safe': -1 if ticks is None else int(ticks),
        'limit_violations': int(count),
        'expect': case.expect,
        'max_ticks': case.max_ticks,
        'expected_reasons': list(case.reasons),
        'fallback': t_fallback is not None,
        'final_state': state_names[-1] if state_names else '',
        'fell': fell_now,
        'condition_after_onset_s': round(t_cond - onset, 4),
        'fallback_after_onset_s': None if t_fallback is None else round(t_fallback - onset, 4),
        **metrics.fallback_facts(state_times, state_names, onset),
        **judged_window(case, onset, t_safe),
    }


def run_figures(mon: HilMonitor, sc: Scenario, t_enable_s: float, t0_s: float,
                t1_s: float) -> dict:
    """What every joint robot's nominal run reports beside its own figures: the node's states
    and their rate in [t0, t1], the limit violations since the enable and the diagnostics of
    a message sent after t1 (this waits for it)."""
    states = mon.window('states', t0_s, t1_s)
    time.sleep(sc.node['diagnostics_period_s'] + 0.2)
    rate = (len(states) - 1) / (t1_s - t0_s) if len(states) > 1 else 0.0
    return {'states_seen': sorted({s for _t, s in states}), 'received_state_rate_hz': rate,
            'limit_violations': violations(mon, sc, t_enable_s, t1_s),
            'diagnostics': {k: float(v) for k, v in mon.diagnostics.items() if is_number(v)}}
