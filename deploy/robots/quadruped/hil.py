"""The quadruped's HIL scenarios: stand up and walk at a commanded speed, then one run per fault.

Each scenario starts the way an operator would: disarm, reset the bridge (robot standing on
the driver's PD at the default pose), arm; the node's stand-up soft start moves the joints to
the default pose, then the policy walks at the commanded velocity, which the monitor publishes
on cmd_vel at 20 Hz throughout.

Verdicts (sim2real.hil.scenarios describes the conditions):
- 'tolerate' (drops, small delays): no fall and no limit violation (a latch is safe too);
- 'latch' (NaN, frozen or late sensors; the operator's cmd_vel lost): the node's fallback
  within 2 control ticks of the latch condition, damping commanded afterwards (kp 0 on the
  kp topic when the node publishes gains), no limit violation. Falling is not judged: a
  robot in damping sinks to the floor, which is the safe outcome;
- 'watchdog' (lost position targets): the bridge's driver watchdog damps within 2 control
  ticks of its command timeout;
- 'push' (faults.py: the base dragged at 3 m/s): the node's fallback, for the runaway
  ('leg_odometry') or for the tilt it causes, within PUSH_TICKS of the moment the true speed
  passed the latch's 2.5 m/s threshold.

The nominal walk also reports the leg-odometry estimate against ground truth (the node
publishes it every tick on ``~/leg_odometry``): the mean absolute error of its forward and
lateral velocity, with a floor on the forward one (LEG_ODOMETRY_ERROR_M_S).
"""

from __future__ import annotations

import math
import time

import numpy as np

from geometry_msgs.msg import TwistStamped
from std_msgs.msg import Float64MultiArray

from sim2real import terms
from sim2real.deploy import ros_msgs
from sim2real.hil import identify as identify_run, joint_runs, metrics
from sim2real.hil.monitor import HilMonitor
from sim2real.hil.robot import RobotHil
from sim2real.hil.scenarios import FaultCase, Scenario
from sim2real.hil.verdicts import NominalBound
from sim2real.verdict import Floor

COMMAND_M_S = (0.5, 0.0, 0.0)
"""The walking command of the nominal run and of every fault run [vx m/s, vy m/s, rad/s]."""
FALL_HEIGHT_M = 0.15
"""Base height below which the robot has fallen (the training env's base_too_low) [m]."""
FALL_TILT_RAD = 1.0
"""Tilt beyond which the robot has fallen (the training env's bad_orientation) [rad]."""
NOMINAL_LIN_VEL_ERROR_MPS = 0.15
"""Largest mean planar velocity error of the nominal walk (the flat task's 0.1 m/s over
randomized episodes, plus the stand-up's first seconds of walking)."""
LEG_ODOMETRY_ERROR_M_S = 0.1
"""Largest mean absolute error of the leg-odometry forward velocity in the nominal walk."""
PUSH_TICKS = 50
"""Ticks (1.0 s, most of the fault's observation window) the node may take to fall back
after the true speed passes the leg-odometry latch's threshold. Kinematic leg odometry
assumes stance feet stand still; all four feet sliding under the drag, it reads far below
the true speed: HIL flight logs show estimates of 0.04-1.7 m/s for up to 0.5 s at a true
3.0 m/s (latched after 3-6 ticks in most runs, 10-31 in some; once the robot tipped first and
the tilt latch took it after 17). Only an accelerometer-aided estimate would see a drag with
every foot sliding at once; until the node has one this bound says "caught within the
window", not "caught fast"."""
PUSH_REASONS = ('leg_odometry', 'tilt')
"""Fallbacks that answer the drag: the runaway seen, or the tilt it causes."""
TIMEOUT_KEYS = {'joint_states': 'joint_state_timeout_s', 'cmd_vel': 'command_timeout_s'}
"""The node's timeout parameter of the bridge's joint_states stream and of the operator's
cmd_vel (which the monitor publishes)."""


def faults(node: dict, bridge: dict) -> dict[str, FaultCase]:
    """The quadruped's fault cases (cmd_vel_loss is the monitor's, all others the bridge's)."""
    cases = [
        FaultCase('drop', 'tolerate'),
        FaultCase('delay', 'tolerate'),
        FaultCase('frozen_joint_states', 'latch', 'stale', ('joint_states',)),
        FaultCase('frozen_imu', 'latch', 'stale', ('imu',)),
        FaultCase('nan_joint_states', 'latch', 'effect', ('joint_states',)),
        FaultCase('nan_imu', 'latch', 'effect', ('imu',)),
        FaultCase('latency_spike', 'latch', 'stale', ('joint_states', 'imu')),
        FaultCase('command_loss', 'watchdog', 'timeout'),
        FaultCase('cmd_vel_loss', 'latch', 'stale', ('cmd_vel',)),
        FaultCase('push', 'latch', 'effect', ('joint_states',), max_ticks=PUSH_TICKS,
                  reasons=PUSH_REASONS),
    ]
    return {c.name: c for c in cases}


def scenario(node: dict, bridge: dict, **overrides) -> Scenario:
    """Timing: measure 2 s after the stand-up; faults 2 s into walking (overridable)."""
    values = {'settle_s': 2.0, 'fault_settle_s': node['soft_start_s'] + 2.0,
              'observe_s': 1.2, 'timeout_keys': TIMEOUT_KEYS}
    values.update(overrides)
    return Scenario(node=node, bridge=bridge, **values)


def launch(mon: HilMonitor, timeout_s: float = 2.0) -> float:
    """Disarm, reset the bridge (robot standing), arm; the steady time of the enable [s]."""
    mon.enable(False)
    mon.reset_bridge()
    mon.start_cmd_vel(*COMMAND_M_S)
    # right after start-up DDS discovery may still hold back cmd_vel
    return joint_runs.arm(mon, ('stale',), timeout_s)


def lin_vel_heading_xy(quat_wxyz, lin_vel_b) -> np.ndarray:
    """Base velocity in the heading (yaw-only) frame, xy [m/s], (T, 2)."""
    rotmat = terms.quat_to_rotmat(np.asarray(quat_wxyz, dtype=float))
    v_w = np.einsum('tij,tj->ti', rotmat, np.asarray(lin_vel_b, dtype=float))
    yaw = np.arctan2(rotmat[:, 1, 0], rotmat[:, 0, 0])
    cos, sin = np.cos(yaw), np.sin(yaw)
    return np.stack([cos * v_w[:, 0] + sin * v_w[:, 1], -sin * v_w[:, 0] + cos * v_w[:, 1]], 1)


def _truth(mon: HilMonitor, t0_s: float, t1_s: float):
    """Ground-truth positions, quaternions and body velocities in [t0, t1]."""
    truth = mon.window('ground_truth', t0_s, t1_s)
    vel = mon.window('ground_truth_vel', t0_s, t1_s)
    if not truth or len(vel) != len(truth):
        return np.zeros((0, 3)), np.zeros((0, 4)), np.zeros((0, 3))
    return (np.array([g[1] for g in truth]), np.array([g[2] for g in truth]),
            np.array([v[1] for v in vel]))


def fell(pos_w: np.ndarray, quat_wxyz: np.ndarray) -> bool:
    """Base below FALL_HEIGHT_M or tilted beyond FALL_TILT_RAD at any recorded time."""
    if not len(pos_w):
        return True
    return bool(pos_w[:, 2].min() < FALL_HEIGHT_M
                or metrics.tilt_rad(quat_wxyz).max() > FALL_TILT_RAD)


def leg_odometry_error(mon: HilMonitor, t0_s: float, t1_s: float) -> tuple[float, float]:
    """Mean absolute error [m/s] of the node's leg-odometry forward and lateral velocity
    (base frame) in [t0, t1] against the ground truth at or before each estimate; NaN
    without estimates."""
    estimates = mon.window('leg_odometry', t0_s, t1_s)
    truth = mon.window('ground_truth_vel', t0_s - 0.1, t1_s)
    if not estimates or not truth:
        return math.nan, math.nan
    times = np.array([t for t, _ in truth])
    errors = [np.abs(values[:2] - truth[max(np.searchsorted(times, t, 'right') - 1, 0)][1][:2])
              for t, values in estimates]
    return tuple(float(e) for e in np.mean(errors, axis=0))


def nominal(mon: HilMonitor, sc: Scenario, duration_s: float) -> dict:
    """Stand up, walk at COMMAND_M_S for duration_s: fell, velocity error, timing, violations."""
    t_enable = launch(mon)
    time.sleep(sc.node['soft_start_s'] + sc.settle_s)
    t0 = time.monotonic()
    time.sleep(duration_s)
    t1 = time.monotonic()
    pos, quat, vel_b = _truth(mon, t0, t1)
    error = math.nan
    if len(quat):
        v_h = lin_vel_heading_xy(quat, vel_b)
        error = float(np.linalg.norm(v_h - np.asarray(COMMAND_M_S[:2]), axis=1).mean())
    all_pos, all_quat, _ = _truth(mon, t_enable, t1)
    vx_error, vy_error = leg_odometry_error(mon, t0, t1)
    return {
        'leg_odometry_vx_error_m_s': vx_error,
        'leg_odometry_vy_error_m_s': vy_error,
        'fell': fell(all_pos, all_quat),
        'lin_vel_error_mps': error,
        'distance_m': float(np.linalg.norm(pos[-1, :2] - pos[0, :2])) if len(pos) else 0.0,
        **joint_runs.run_figures(mon, sc, t_enable, t0, t1)}


def identify(mon: HilMonitor, sc: Scenario, excitation) -> dict:
    """Stand up, then walk the excitation's velocity commands; what identify_run.verdict
    judges."""
    t_enable = launch(mon)
    mon.start_cmd_vel(0.0, 0.0, 0.0)
    time.sleep(sc.node['soft_start_s'])
    t0, t1 = identify_run.play(excitation, lambda command: mon.start_cmd_vel(*command))
    mon.start_cmd_vel(*COMMAND_M_S)
    pos, quat, _ = _truth(mon, t_enable, t1)
    return {**joint_runs.run_figures(mon, sc, t_enable, t0, t1), 'fell': fell(pos, quat),
            'window_s': (t0, t1)}


def _inject(mon: HilMonitor, case: FaultCase) -> dict:
    """Switch the fault on; the onset as the bridge reports it (cmd_vel_loss: the monitor)."""
    if case.name == 'cmd_vel_loss':
        onset_s = time.monotonic()
        last_sent_s = mon.stop_cmd_vel()
        return {'fault': case.name, 'monotonic_s': onset_s, 'received_s': onset_s,
                'last_fresh_s': {'cmd_vel': last_sent_s}}
    return joint_runs.inject_bridge_fault(mon, case)


def _clear(mon: HilMonitor, case: FaultCase) -> None:
    """Switch the fault off again."""
    if case.name == 'cmd_vel_loss':
        mon.start_cmd_vel(*COMMAND_M_S)
    else:
        joint_runs.clear_bridge_fault(mon, case)


def _fell(mon: HilMonitor, t0_s: float, t1_s: float) -> bool:
    """Whether the robot fell in [t0, t1] (ground truth)."""
    pos, quat, _ = _truth(mon, t0_s, t1_s)
    return fell(pos, quat)


def fault_run(mon: HilMonitor, sc: Scenario, case: FaultCase) -> dict:
    """Launch, walk (or stand up), inject one fault for observe_s, judge on [onset, end]
    (sim2real.hil.joint_runs.fault_run)."""
    return joint_runs.fault_run(mon, sc, case, launch, _inject, _clear, _fell)


def bound(sc: Scenario) -> NominalBound:
    """The nominal run: mean planar velocity error against the command."""
    return NominalBound('lin_vel_error_mps', NOMINAL_LIN_VEL_ERROR_MPS, 'velocity error',
                        'm/s')


def monitor_args(node: dict, contract) -> dict:
    """Position targets (and kp arrays when the node publishes gains); the monitor is the
    operator publishing cmd_vel."""
    kp_topic = node.get('kp_command_topic', '')
    return {'command_type': Float64MultiArray, 'decode': ros_msgs.from_float64_array,
            'kp_topic': kp_topic and '/' + kp_topic,
            'cmd_vel_topic': '/' + node['velocity_command_topic'],
            'series': {'leg_odometry': (TwistStamped, '/policy_node/leg_odometry',
                                        lambda msg: ros_msgs.xyz(msg.twist.linear))}}


def result(run: dict, diag: dict) -> dict:
    """The nominal walk's figures in the JSON."""
    return {'leg_odometry_vx_m_s': diag.get('leg_odometry_vx_m_s', float('nan')),
            'leg_odometry_vx_error_m_s': run['leg_odometry_vx_error_m_s'],
            'leg_odometry_vy_error_m_s': run['leg_odometry_vy_error_m_s'],
            'fell': run['fell'], 'lin_vel_error_mps': run['lin_vel_error_mps'],
            'commanded_m_s': list(COMMAND_M_S), 'distance_m': run['distance_m']}


HIL = RobotHil(faults=faults, scenario=scenario, monitor_args=monitor_args, nominal=nominal,
               fault_run=fault_run, result=result, bound=bound,
               floors=lambda sc: (Floor('leg_odometry_vx_error_m_s', '<=',
                                        LEG_ODOMETRY_ERROR_M_S),),
               identify=identify, start=lambda mon: mon.start_cmd_vel(*COMMAND_M_S),
               stop=lambda mon: mon.stop_cmd_vel())
