"""The quadrotor's HIL scenarios: hover, then one flight per fault, judged on ground truth.

Each flight starts the way an operator would: disarm, reset the bridge (vehicle held at its
start pose), arm; the bridge releases it when the commanded thrust lifts it. 'tolerate'
faults must stay near the target (or be safe in fallback); after a 'latch' or 'watchdog'
the vehicle must stay level (tilt below the node's limit) and not crash. In every fault
flight the motors must never be off while the vehicle is in the air (a landing decision
taken on bad evidence). The odometry faults of the twin's own (faults.py): one glitched
sample with a gap after it must be flown through or descended from; a world-frame twist is
switched on before the launch (the frames part only while the vehicle moves at a heading,
as it does from the launch point to the target) and must latch within 2 ticks of the
moment the node's twist check can see it.
"""

from __future__ import annotations

import math
import time

import numpy as np
from geometry_msgs.msg import PointStamped, Twist
from std_msgs.msg import Float64MultiArray

from sim2real.deploy import ros_msgs
from sim2real.deploy.robots.quadrotor.cmd_vel_legacy import thrust_map
from sim2real.deploy.robots.quadrotor.ros_io import command_from_twist
from sim2real.hil import identify as identify_run, joint_runs, metrics
from sim2real.hil.monitor import HilMonitor
from sim2real.hil.robot import RobotHil
from sim2real.hil.scenarios import (
    condition_time, diag_number, FaultCase, is_number, judged_window, Scenario, watchdog_trip_s)
from sim2real.hil.verdicts import NominalBound

NOMINAL_ERROR_M = 0.1
"""Largest mean distance to the target in the nominal hover (the hover task's success
tolerance)."""


def faults(node: dict, bridge: dict) -> dict[str, FaultCase]:
    """The quadrotor's fault cases."""
    cases = [
        FaultCase('drop', 'tolerate'),
        FaultCase('delay', 'tolerate'),
        FaultCase('frozen_odom', 'latch', 'stale', ('odom',)),
        FaultCase('frozen_imu', 'latch', 'stale', ('imu',)),
        FaultCase('nan_odom', 'latch', 'effect', ('odom',)),
        FaultCase('nan_imu', 'latch', 'effect', ('imu',)),
        FaultCase('latency_spike', 'latch', 'stale', ('odom', 'imu')),
        FaultCase('command_loss', 'watchdog', 'timeout'),
        FaultCase('glitch_odom', 'tolerate'),
        FaultCase('twist_frame_odom', 'latch', 'effect', ('odom',), reasons=('odom_twist',)),
    ]
    return {c.name: c for c in cases}


BEFORE_LAUNCH = ('twist_frame_odom',)
"""Faults switched on before the launch, not 1.5 s into the hover."""
RESET_SETTLE_S = 0.25
"""Wait after the bridge's reset before arming: one twist-check window past the jump [s]."""
AIRBORNE_M = 0.15
"""Above this height (ground truth) motors off is a fall, not a landing [m]."""


def scenario(node: dict, bridge: dict, **overrides) -> Scenario:
    """Timing: 3 s of flight before the nominal measurement, faults 1.5 s after release."""
    return Scenario(node=node, bridge=bridge, **overrides)


def target_w(sc: Scenario) -> np.ndarray:
    """Hover target [m; world]."""
    return np.asarray(sc.node['hover_target_m'], dtype=float)


def bound(sc: Scenario) -> NominalBound:
    """The nominal run: mean distance to the hover target."""
    return NominalBound('hover_error_m', NOMINAL_ERROR_M, 'hover error', 'm')


def monitor_args(node: dict, contract) -> dict:
    """The node's command as the monitor decodes it: cmd_vel_legacy's Twist (the thrust
    through the node's legacy_thrust_map) or rotor speeds."""
    if node['command_interface'] == 'cmd_vel_legacy':
        legacy = thrust_map(node.get('legacy_thrust_map', 'battery_compensated'))

        def decode(msg):
            thrust_n, rates = command_from_twist(msg, legacy)
            return np.r_[thrust_n, rates]
        return {'command_type': Twist, 'decode': decode}
    return {'command_type': Float64MultiArray, 'decode': ros_msgs.from_float64_array}


def launch(mon: HilMonitor, timeout_s: float = 5.0, fault: str = '') -> float:
    """Disarm, reset the bridge (then switch fault on, if any), arm; returns the steady time
    the bridge released the vehicle."""
    mon.enable(False)
    mon.reset_bridge()
    if fault:
        mon.set_faults(fault)
    # the reset moved the vehicle at once: the node's twist check sees a position jump until
    # its window (0.2 s) is past it, so wait one window and retry a refusal for that reason
    time.sleep(RESET_SETTLE_S)
    t_arm = joint_runs.arm(mon, ('odom_twist',), 1.0)
    mon.wait_for(lambda: mon.events_since(t_arm, 'released'), timeout_s,
                 'the bridge to release the vehicle (thrust never reached hover)')
    return mon.events_since(t_arm, 'released')[0]['monotonic_s']


def _violations(mon: HilMonitor, sc: Scenario, t0_s: float, t1_s: float) -> int:
    """Command-limit and geofence violations recorded in [t0, t1]."""
    cmds = mon.window('commands', t0_s, t1_s)
    count = 0
    if cmds and len(cmds[0][1]) == 4 and sc.node['command_interface'] == 'cmd_vel_legacy':
        values = np.array([c[1] for c in cmds])
        count += metrics.command_violations(
            values[:, 0], values[:, 1:], sc.node['thrust_max_n'],
            sc.node['max_body_rate_rad_s'], sc.node['thrust_min_n'])
    elif cmds:
        values = np.array([c[1] for c in cmds])
        count += int((~np.isfinite(values)).any(axis=1).sum())
    truth = mon.window('ground_truth', t0_s, t1_s)
    if truth:
        count += metrics.geofence_violations(np.array([g[1] for g in truth]),
                                             sc.node['geofence_min_m'],
                                             sc.node['geofence_max_m'])
    return count


def _truth(mon: HilMonitor, t0_s: float, t1_s: float):
    """Ground-truth times, positions, quaternions in [t0, t1]."""
    truth = mon.window('ground_truth', t0_s, t1_s)
    if not truth:
        return np.zeros(0), np.zeros((0, 3)), np.zeros((0, 4))
    return (np.array([g[0] for g in truth]), np.array([g[1] for g in truth]),
            np.array([g[2] for g in truth]))


def nominal(mon: HilMonitor, sc: Scenario, duration_s: float) -> dict:
    """Launch, settle, hover for duration_s: hover error, loop timing, violations."""
    t_release = launch(mon)
    time.sleep(sc.settle_s)
    t0 = time.monotonic()
    time.sleep(duration_s)
    t1 = time.monotonic()
    times, pos, _quat = _truth(mon, t0, t1)
    states = mon.window('states', t0, t1)
    time.sleep(sc.node['diagnostics_period_s'] + 0.2)   # a diagnostics message after t1
    diag = {k: float(v) for k, v in mon.diagnostics.items() if is_number(v)}
    return {
        'hover_error_m': metrics.hover_error_m(times, pos, target_w(sc), t0, t1),
        'max_error_m': metrics.max_error_m(times, pos, target_w(sc), t0, t1),
        'states_seen': sorted({s for _t, s in states}),
        'received_state_rate_hz': (len(states) - 1) / (t1 - t0) if len(states) > 1 else 0.0,
        'limit_violations': _violations(mon, sc, t_release, t1),
        'diagnostics': diag,
        'rate_window_s': (t_release, t1),
    }


def fault_run(mon: HilMonitor, sc: Scenario, case: FaultCase) -> dict:
    """Launch, settle, inject one fault for observe_s, and judge the outcome on [onset, end].

    The window ends before the fault is cleared, so what the node does once commands or
    sensors come back is not part of this fault's verdict.
    """
    t_set = time.monotonic()
    if case.name in BEFORE_LAUNCH:
        t_release = launch(mon, fault=case.name)
    else:
        t_release = launch(mon)
        time.sleep(sc.fault_settle_s)
        t_set = time.monotonic()
        mon.set_faults(case.name)
    mon.wait_for(lambda: mon.events_since(t_set, 'fault_on'), 2.0, f'{case.name} to start')
    onset_event = mon.events_since(t_set, 'fault_on')[0]
    # judged from the release when switched on before the launch (the node sat disarmed or
    # in the last flight's fallback, and the held vehicle's motors were off, until then)
    onset = t_release if case.name in BEFORE_LAUNCH else onset_event['monotonic_s']
    time.sleep(sc.observe_s)
    t_end = time.monotonic()
    mon.set_faults('')
    violations = _violations(mon, sc, t_release, t_end)
    times, pos, quat = _truth(mon, onset, t_end)
    tilt_max = float(metrics.tilt_rad(quat).max()) if len(quat) else math.nan
    crashed = bool(len(pos) == 0 or pos[:, 2].min() < 0.03 or tilt_max > math.pi / 2)
    cut_in_air = motors_off_in_air(mon, times, pos, onset, t_end)
    level = tilt_max < sc.node['max_tilt_rad']
    states = mon.window('states', onset - 0.1, t_end)
    state_times, state_names = [s[0] for s in states], [s[1] for s in states]
    fell_back = any(s.startswith('fallback') for s in state_names)
    t_cond = condition_time(mon, sc, case, onset_event)
    err = metrics.max_error_m(times, pos, target_w(sc), onset, t_end)
    if case.expect == 'tolerate':
        ticks, t_safe = 0, t_end
        safe = not crashed and (err <= sc.tolerate_error_m or fell_back)
    elif case.expect == 'latch':
        ticks = metrics.ticks_to_safe(state_times, state_names, t_cond)
        reason = next((s.partition(':')[2] for s in state_names if s.startswith('fallback')),
                      '')
        safe = (ticks is not None and ticks <= case.max_ticks and level and not crashed
                and case.accepts(reason))
        t_safe = next((t for t, s in states if s.startswith('fallback')), t_end)
    else:
        t_trip = watchdog_trip_s(mon, onset_event)
        ticks = metrics.ticks_between(t_cond, t_trip, sc.period_s)
        safe = ticks is not None and ticks <= case.max_ticks and level and not crashed
        t_safe = t_end if t_trip is None else t_trip
    return {
        'recovered_safe': bool(safe and violations == 0 and not cut_in_air),
        'motors_off_in_air': cut_in_air,
        'ticks_to_safe': -1 if ticks is None else int(ticks),
        'limit_violations': int(violations),
        'expect': case.expect,
        'max_ticks': case.max_ticks,
        'expected_reasons': list(case.reasons),
        'fallback': fell_back,
        'final_state': state_names[-1] if state_names else '',
        'max_tilt_rad': round(tilt_max, 4),
        'max_error_m': round(err, 4),
        'crashed': crashed,
        'observation_age_p99_ms': diag_number(mon, 'observation_age_p99_ms'),
        **metrics.fallback_facts(state_times, state_names, onset),
        **judged_window(case, onset, t_safe),
    }


def motors_off_in_air(mon: HilMonitor, times: np.ndarray, pos: np.ndarray, t0_s: float,
                      t1_s: float) -> bool:
    """Whether the node's motors-off command (every value zero: thrust and rates, or every
    rotor speed) went out in [t0, t1] while the vehicle (ground truth at or before it) was
    above AIRBORNE_M."""
    for t_cmd, values in mon.window('commands', t0_s, t1_s):
        before = np.searchsorted(times, t_cmd, side='right') - 1
        if not np.any(values) and before >= 0 and pos[before, 2] > AIRBORNE_M:
            return True
    return False


def result(run: dict, diag: dict) -> dict:
    """The nominal flight's figures in the JSON."""
    return {'hover_error_m': run['hover_error_m'], 'max_hover_error_m': run['max_error_m']}


def identify(mon: HilMonitor, sc: Scenario, excitation) -> dict:
    """Launch, settle, fly the excitation's setpoints; what identify_run.verdict judges."""
    publisher = mon.publisher(PointStamped, '/' + sc.node['setpoint_topic'].lstrip('/'))
    t_release = launch(mon)
    time.sleep(sc.settle_s)
    t0, t1 = identify_run.play(excitation, lambda pos_w: publisher.publish(
        ros_msgs.make_point_stamped(pos_w, mon.now_s())))
    times, pos, quat = _truth(mon, t_release, t1)
    crashed = bool(len(pos) == 0 or pos[:, 2].min() < 0.03
                   or metrics.tilt_rad(quat).max() > math.pi / 2)
    return {'states_seen': sorted({s for _t, s in mon.window('states', t0, t1)}),
            'fell': crashed, 'limit_violations': _violations(mon, sc, t_release, t1),
            'window_s': (t0, t1)}


HIL = RobotHil(faults=faults, scenario=scenario, monitor_args=monitor_args, nominal=nominal,
               fault_run=fault_run, result=result, bound=bound, identify=identify)
