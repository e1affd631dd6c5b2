"""toyarm's HIL scenarios: hold a reach target, then one run per fault of its joint stream.

The monitor plays the operator: it publishes the target (PointStamped, base frame) at
20 Hz from the start. Nominal run: disarm, reset the bridge (arm at rest), arm; after the
soft start the policy reaches for the target for the measured duration. It is judged on
the tip's peak speed (a safety bound: the arm never swings faster than PEAK_TIP_SPEED_M_S)
besides the shared checks (active throughout, no limit violation); the reach error is
reported, not judged (a policy of a few iterations does not reach yet).
"""

from __future__ import annotations

import threading
import time

from geometry_msgs.msg import PointStamped
import numpy as np
from std_msgs.msg import Float64MultiArray

from sim2real.deploy import ros_msgs
from sim2real.hil import joint_runs
from sim2real.hil.monitor import HilMonitor
from sim2real.hil.robot import RobotHil
from sim2real.hil.scenarios import FaultCase, Scenario
from sim2real.hil.verdicts import NominalBound

TARGET_B_M = (0.35, -0.2)
"""The reach target [m; base frame xy]."""
TARGET_RATE_HZ = 20.0
"""Rate the monitor publishes the target at [Hz]."""
PEAK_TIP_SPEED_M_S = 1.0
"""Largest tip speed of the nominal run [m/s]."""


def faults(node: dict, bridge: dict) -> dict[str, FaultCase]:
    """Faults of the joint stream and of the commands."""
    cases = [FaultCase('drop', 'tolerate'),
             FaultCase('frozen_joint_states', 'latch', 'stale', ('joint_states',)),
             FaultCase('nan_joint_states', 'latch', 'effect', ('joint_states',)),
             FaultCase('command_loss', 'watchdog', 'timeout')]
    return {c.name: c for c in cases}


def scenario(node: dict, bridge: dict, **overrides) -> Scenario:
    """Measure 1 s after the soft start; faults 1 s after it."""
    values = {'settle_s': 1.0, 'fault_settle_s': node['soft_start_s'] + 1.0, 'observe_s': 1.0,
              'timeout_keys': {'joint_states': 'joint_state_timeout_s'}}
    values.update(overrides)
    return Scenario(node=node, bridge=bridge, **values)


class _Target:
    """The operator's target, published from a thread of the monitor's process."""

    def __init__(self):
        """Nothing published yet."""
        self.publisher, self.thread = None, None
        self.running = threading.Event()

    def start(self, mon: HilMonitor, topic: str) -> None:
        """Publish TARGET_B_M on topic at TARGET_RATE_HZ until stop() (once)."""
        if self.running.is_set():
            return
        self.publisher = mon.create_publisher(PointStamped, topic, 10)
        self.running.set()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        """Publish while running."""
        msg = PointStamped()
        msg.header.frame_id = 'base_link'
        msg.point.x, msg.point.y = TARGET_B_M
        while self.running.is_set():
            self.publisher.publish(msg)
            time.sleep(1.0 / TARGET_RATE_HZ)

    def stop(self, mon: HilMonitor) -> None:
        """Stop publishing."""
        self.running.clear()
        if self.thread is not None:
            self.thread.join(timeout=1.0)


_TARGET = _Target()


def launch(mon: HilMonitor, sc: Scenario) -> float:
    """Operator's target on the node's target_topic, disarm, reset the bridge (arm at rest),
    arm; the steady time of the enable [s]."""
    _TARGET.start(mon, '/' + sc.node.get('target_topic', 'target').lstrip('/'))
    mon.enable(False)
    mon.reset_bridge()
    t_enable = time.monotonic()
    mon.enable(True)
    return t_enable


def nominal(mon: HilMonitor, sc: Scenario, duration_s: float) -> dict:
    """Reach for the target for duration_s after the soft start: tip speed, reach error."""
    t_enable = launch(mon, sc)
    time.sleep(sc.node['soft_start_s'] + sc.settle_s)
    t0 = time.monotonic()
    time.sleep(duration_s)
    t1 = time.monotonic()
    truth = mon.window('ground_truth', t_enable, t1)
    times = np.array([g[0] for g in truth])
    tip = np.array([g[1][:2] for g in truth]).reshape(-1, 2)
    # the simulator's own tip velocity: differences of positions over arrival times read
    # messages that DDS delivered together (a loaded machine) as metres per millisecond
    vel = mon.window('ground_truth_vel', t_enable, t1)
    speed = np.linalg.norm(np.array([v[1][:2] for v in vel]).reshape(-1, 2), axis=1)
    window = times >= t0
    return {
        'tip_speed_max_m_s': float(speed.max()) if len(speed) else float('nan'),
        'reach_error_m': float(np.linalg.norm(tip[window] - TARGET_B_M, axis=1).mean())
        if window.any() else float('nan'),
        **joint_runs.run_figures(mon, sc, t_enable, t0, t1)}


def fault_run(mon: HilMonitor, sc: Scenario, case: FaultCase) -> dict:
    """The shared joint-robot fault run (a fixed base never falls)."""
    return joint_runs.fault_run(mon, sc, case, lambda m: launch(m, sc))


def result(run: dict, diag: dict) -> dict:
    """The nominal run's figures in the JSON."""
    return {'tip_speed_max_m_s': run['tip_speed_max_m_s'],
            'reach_error_m': run['reach_error_m'], 'target_b_m': list(TARGET_B_M)}


HIL = RobotHil(
    faults=faults, scenario=scenario,
    monitor_args=lambda node, contract: {'command_type': Float64MultiArray,
                                         'decode': ros_msgs.from_float64_array},
    nominal=nominal, fault_run=fault_run, result=result,
    bound=lambda sc: NominalBound('tip_speed_max_m_s', PEAK_TIP_SPEED_M_S, 'peak tip speed',
                                  'm/s'),
    stop=_TARGET.stop)
