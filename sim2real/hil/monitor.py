"""`hil_monitor`: records what the HIL run needs over DDS and drives the nodes' services.

It listens where a bench engineer would: the node's command and state topics, the bridge's
ground truth and events, /diagnostics; and it calls the same services an operator would
(policy_node/enable, sim_bridge/reset, sim_bridge/set_parameters).
"""

from __future__ import annotations

from functools import partial
import json
import logging
import math
import threading
import time

from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
import numpy as np
from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
from rcl_interfaces.srv import SetParameters
from rclpy.executors import (
    ExternalShutdownException, ShutdownException, SingleThreadedExecutor)
from rclpy.exceptions import InvalidHandle
from rclpy.node import Node
from std_msgs.msg import Float64MultiArray, String
from std_srvs.srv import SetBool, Trigger

from sim2real.deploy import ros_msgs

log = logging.getLogger(__name__)

CMD_VEL_RATE_HZ = 20.0
"""Rate of the operator's velocity commands [Hz] (a joystick teleop node's typical rate)."""
CLOSE_TIMEOUT_S = 10.0
"""How long close() waits for the spin thread to leave the executor [s]."""
CATCH_UP_S = 5.0
"""Longest wait for the monitor to receive what the nodes published before a window's end
[s]: on a CPU shared by the node, the simulator and the monitor, its executor falls behind
by up to a second (measured on a 2-core VM), and a window read before then misses its end."""
HEARTBEATS = ('states', 'ground_truth')
"""Series the nodes publish at a fixed rate whatever happens (the node's state each tick,
the simulator's ground truth): once each holds an entry published after t, the monitor has
taken everything published before t (one executor takes each topic in order)."""
QUEUE_DEPTH = 1000
"""Subscription depth: a monitor seconds behind loses nothing of a 500 Hz topic."""
SPIN_TIMEOUT_S = 0.01
"""Longest the monitor's thread waits for the executor before it takes the topics' messages
itself [s]."""
SLOW_SPIN_S = 0.2
"""An intake round of the monitor's thread longer than this is logged (its figures lag)."""


class HilError(RuntimeError):
    """The HIL run could not proceed (a node died, a service did not answer)."""


class HilMonitor(Node):
    """Subscriptions that record on the steady clock; service clients.

    The nodes' outputs (commands, gains, states, ground truth) are timed by when they were
    published, events and diagnostics by when they arrived here. A window that ends at t waits
    until the monitor has taken what was published before t (catch_up).
    """

    def __init__(self, command_topic: str, command_type, decode, kp_topic: str = '',
                 cmd_vel_topic: str = '', series: dict | None = None):
        """command_type: the node's command message type, decode(msg) -> its values (the
        robot's HIL profile gives both); topic names are global. kp_topic: record the node's
        kp arrays; cmd_vel_topic: publish the operator's velocity command there
        (start_cmd_vel) at CMD_VEL_RATE_HZ; series: {name: (message type, topic,
        to_values)} more of the node's outputs, recorded as (publish time, values) under
        name (a robot's own estimates)."""
        super().__init__('hil_monitor')
        self._lock = threading.Lock()
        self.states: list[tuple[float, str]] = []
        self.commands: list[tuple[float, np.ndarray]] = []
        self.gains: list[tuple[float, np.ndarray]] = []
        """(publish time, kp array) from kp_topic."""
        self.ground_truth: list[tuple[float, np.ndarray, np.ndarray]] = []
        self.ground_truth_vel: list[tuple[float, np.ndarray]] = []
        """(publish time, base velocity [m/s; body frame]) of each ground-truth message."""
        self.events: list[dict] = []
        self.diagnostics: dict[str, str] = {}
        self.diagnostics_s = -np.inf
        """Steady time the node's diagnostics above arrived [s]."""
        self.enabled_s = -np.inf
        """Steady time the node last answered an enable(True) [s] (its loop statistics
        start over at an enable)."""
        self._decode = decode
        self._caught_up_s = -np.inf
        self._streams = [
            self.create_subscription(command_type, command_topic, self._on_command,
                                     QUEUE_DEPTH),
            self.create_subscription(String, '/policy_node/state', self._on_state, QUEUE_DEPTH),
            self.create_subscription(Odometry, '/sim_bridge/ground_truth', self._on_truth,
                                     QUEUE_DEPTH)]
        """The fixed-rate topics, taken in batches (see _spin)."""
        self.create_subscription(String, '/sim_bridge/events', self._on_event, QUEUE_DEPTH)
        self.create_subscription(DiagnosticArray, '/diagnostics', self._on_diag, 10)
        if kp_topic:
            self._streams.append(self.create_subscription(
                Float64MultiArray, kp_topic, self._on_gains, QUEUE_DEPTH))
        for name, (msg_type, topic, to_values) in (series or {}).items():
            setattr(self, name, [])
            self._streams.append(self.create_subscription(
                msg_type, topic, partial(self._on_series, name, to_values), QUEUE_DEPTH))
        self._cmd_vel: np.ndarray | None = None
        self._operator_lock = threading.Lock()
        self.cmd_vel_sent_s = -np.inf
        """Steady time of the last velocity command published [s]."""
        if cmd_vel_topic:
            self._cmd_vel_pub = self.create_publisher(Twist, cmd_vel_topic, 10)
        self._enable = self.create_client(SetBool, '/policy_node/enable')
        self._reset = self.create_client(Trigger, '/sim_bridge/reset')
        self._params = self.create_client(SetParameters, '/sim_bridge/set_parameters')
        self._executor = SingleThreadedExecutor()
        self._executor.add_node(self)
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()
        # the operator's stream on its own thread: its rate must not depend on how busy the
        # intake is (a HIL run once saw 0.8 s gaps in a cmd_vel served by the executor)
        self._operator = threading.Thread(target=self._operate, daemon=True)
        if cmd_vel_topic:
            self._operator.start()

    def _spin(self) -> None:
        """The monitor's thread: the executor for services, timers and events, and after
        each of its callbacks every message the fixed-rate topics hold, taken in one batch.
        (The executor alone serves one message per wait; at the ~300 messages a second of a
        HIL run, on a CPU the nodes share, it fell seconds behind.)"""
        while not self._stopping.is_set() and self.context.ok():
            started_s = time.monotonic()
            try:
                self._executor.spin_once(timeout_sec=SPIN_TIMEOUT_S)
                ros_msgs.take_pending(self._streams)
            except (ExternalShutdownException, ShutdownException, InvalidHandle):
                break
            if (took_s := time.monotonic() - started_s) > SLOW_SPIN_S:
                log.warning('one intake round of the monitor took %.2f s (a CPU too busy '
                            'for the nodes and the monitor?)', took_s)

    def _operate(self) -> None:
        """The operator's thread: the velocity command at CMD_VEL_RATE_HZ while one is set,
        on a fixed schedule (a late round is not made up)."""
        period_s = 1.0 / CMD_VEL_RATE_HZ
        next_s = time.monotonic()
        while not self._stopping.wait(max(0.0, next_s - time.monotonic())):
            next_s = max(next_s + period_s, time.monotonic())
            try:
                self._publish_cmd_vel()
            except (ExternalShutdownException, ShutdownException, InvalidHandle):
                break

    # -- recording --------------------------------------------------------------------
    def _on_command(self, msg, info: dict) -> None:
        values = self._decode(msg)
        with self._lock:
            self.commands.append((ros_msgs.published_steady_s(info), values))

    def _on_gains(self, msg: Float64MultiArray, info: dict) -> None:
        with self._lock:
            self.gains.append((ros_msgs.published_steady_s(info),
                               ros_msgs.from_float64_array(msg)))

    def _on_series(self, name: str, to_values, msg, info: dict) -> None:
        values = to_values(msg)
        with self._lock:
            getattr(self, name).append((ros_msgs.published_steady_s(info), values))

    def _publish_cmd_vel(self) -> None:
        """The operator's velocity command, while one is set (under the operator's lock: a
        stop_cmd_vel returns after the last one it lets out)."""
        with self._operator_lock:
            if self._cmd_vel is not None:
                self._cmd_vel_pub.publish(ros_msgs.make_twist(*self._cmd_vel))
                self.cmd_vel_sent_s = time.monotonic()

    def start_cmd_vel(self, vx_m_s: float, vy_m_s: float = 0.0,
                      yaw_rate_rad_s: float = 0.0) -> None:
        """Publish this velocity command at CMD_VEL_RATE_HZ from now on (one at once)."""
        with self._operator_lock:
            self._cmd_vel = np.array([vx_m_s, vy_m_s, yaw_rate_rad_s])
        self._publish_cmd_vel()

    def publisher(self, msg_type, topic: str):
        """A publisher of the operator's on topic (depth 10): a setpoint, a goal."""
        return self.create_publisher(msg_type, topic, 10)

    def now_s(self) -> float:
        """The node clock now [s] (what a message's stamp holds)."""
        return self.get_clock().now().nanoseconds * 1e-9

    def stop_cmd_vel(self) -> float:
        """Stop publishing velocity commands; the steady time of the last one sent [s]."""
        with self._operator_lock:
            self._cmd_vel = None
            return self.cmd_vel_sent_s

    def _on_state(self, msg: String, info: dict) -> None:
        with self._lock:
            self.states.append((ros_msgs.published_steady_s(info), msg.data))

    def _on_truth(self, msg: Odometry, info: dict) -> None:
        values, _stamp = ros_msgs.odometry_to_values(msg)
        published_s = ros_msgs.published_steady_s(info)
        with self._lock:
            self.ground_truth.append((published_s, values['pos_w'], values['quat_wxyz']))
            self.ground_truth_vel.append((published_s, values['lin_vel_b']))

    def _on_event(self, msg: String) -> None:
        event = json.loads(msg.data)
        event['received_s'] = time.monotonic()
        with self._lock:
            self.events.append(event)

    def _on_diag(self, msg: DiagnosticArray) -> None:
        for status in msg.status:
            if status.name.startswith('policy_node'):
                with self._lock:
                    self.diagnostics = {kv.key: kv.value for kv in status.values}
                    self.diagnostics_s = time.monotonic()

    # -- queries ----------------------------------------------------------------------
    def window(self, name: str, t0_s: float, t1_s: float = float('inf')) -> list:
        """Recorded entries of a series with their time in [t0, t1] (see the class); a
        finite t1 first waits for the monitor to catch up with it."""
        if math.isfinite(t1_s):
            self.catch_up(t1_s)
        with self._lock:
            return [e for e in getattr(self, name) if t0_s <= e[0] <= t1_s]

    def behind(self, t_s: float) -> list[str]:
        """The heartbeat series that have delivered entries but none published after t_s."""
        with self._lock:
            return [name for name in HEARTBEATS
                    if getattr(self, name) and getattr(self, name)[-1][0] <= t_s]

    def catch_up(self, t_s: float, timeout_s: float = CATCH_UP_S) -> None:
        """Wait until the monitor has taken everything published before t_s (steady) on
        the topics it records; HilError after timeout_s (the figures would miss their end)."""
        if self._caught_up_s >= t_s:
            return
        deadline_s = time.monotonic() + timeout_s
        while behind := self.behind(t_s):
            if time.monotonic() > deadline_s:
                raise HilError(
                    f'the monitor received nothing published on {", ".join(behind)} in the '
                    f'{timeout_s:g} s after the end of a window: its figures would miss that '
                    'end (a node stopped publishing, or a CPU too busy for the nodes and the '
                    'monitor)')
            time.sleep(0.005)
        waited_s = time.monotonic() + timeout_s - deadline_s
        if waited_s > 0.05:
            log.debug('the monitor took %.2f s to catch up with the end of a window', waited_s)
        self._caught_up_s = t_s

    def events_since(self, t0_s: float, kind: str | None = None) -> list[dict]:
        """Bridge events received after t0 (optionally of one kind)."""
        with self._lock:
            return [e for e in self.events if e['received_s'] >= t0_s
                    and (kind is None or e['event'] == kind)]

    def wait_for(self, predicate, timeout_s: float, what: str) -> None:
        """Poll predicate() until true; HilError naming `what` after timeout_s."""
        deadline = time.monotonic() + timeout_s
        while not predicate():
            if time.monotonic() > deadline:
                raise HilError(f'timed out after {timeout_s:g} s waiting for {what}')
            time.sleep(0.01)

    # -- services ---------------------------------------------------------------------
    def _call(self, client, request, timeout_s: float = 5.0):
        """Call a service and wait for the answer."""
        if not client.wait_for_service(timeout_sec=timeout_s):
            raise HilError(f'service {client.srv_name} is not available')
        future = client.call_async(request)
        self.wait_for(future.done, timeout_s, f'an answer from {client.srv_name}')
        return future.result()

    def enable(self, on: bool = True) -> str:
        """policy_node/enable; HilError when the node refuses."""
        answer = self._call(self._enable, SetBool.Request(data=on))
        if not answer.success:
            raise HilError(f'policy_node refused enable({on}): {answer.message}')
        if on:
            self.enabled_s = time.monotonic()
        return answer.message

    def reset_bridge(self) -> None:
        """sim_bridge/reset: vehicle back to its start pose, held, faults cleared."""
        answer = self._call(self._reset, Trigger.Request())
        if not answer.success:
            raise HilError(f'sim_bridge refused reset: {answer.message}')

    def set_faults(self, names: str) -> None:
        """Set the bridge's active_faults parameter ('' clears) through set_parameters."""
        value = ParameterValue(type=ParameterType.PARAMETER_STRING, string_value=names)
        request = SetParameters.Request(parameters=[Parameter(name='active_faults',
                                                              value=value)])
        result = self._call(self._params, request).results[0]
        if not result.successful:
            raise HilError(f'sim_bridge rejected active_faults={names!r}: {result.reason}')

    def close(self) -> None:
        """Stop spinning and destroy the node."""
        # the spin thread must be out of the executor before the node's handles go: a
        # callback finishing after destroy_node raises in that thread (InvalidHandle)
        deadline_s = time.monotonic() + CLOSE_TIMEOUT_S
        self._stopping.set()
        self._executor.shutdown(timeout_sec=CLOSE_TIMEOUT_S)
        self._thread.join(timeout=max(0.0, deadline_s - time.monotonic()))
        if self._operator.is_alive():
            self._operator.join(timeout=max(0.0, deadline_s - time.monotonic()))
        if self._thread.is_alive() or self._operator.is_alive():
            log.warning('the monitor did not stop spinning in %g s; its node is left to '
                        'the process exit', CLOSE_TIMEOUT_S)
            return
        self.destroy_node()
