"""`policy_node`: runs an exported policy at a fixed rate behind the safety chain (rclpy shell).

Everything that decides anything lives in ``sim2real.deploy.runtime`` (ROS-free, time
injected); this node only moves messages in and out and reports timing:

- looks the robot (parameter ``robot``) up in ``sim2real.deploy.robots``; the robot's
  ``ros_io`` subscribes its streams through this node (sensor-data QoS, samples aged from
  their DDS arrival) and creates its command publishers (the quadrotor's: odom, imu,
  setpoint in, crazyswarm2's ``cmd_vel_legacy`` Twist or rotor speeds out; the quadruped's:
  ``sensor_msgs/JointState`` matched BY NAME, a base IMU with orientation, a ``cmd_vel``
  Twist in, position targets in contract order (a ros2_control forward position controller's
  input) and optional kp / kd arrays out, nothing while disarmed);
- every 1/rate_hz, on a control-loop thread of its own (``deploy.control_loop``, as
  ros2_control's node runs its loop apart from its executor), takes every sensor message DDS
  holds (the sensor subscriptions are in a callback group the executor never serves, with a
  history of SENSOR_HISTORY messages; samples are aged from their DDS arrival time),
  then calls ``Runtime.step`` with the steady clock, hands the command to the robot's I/O
  and publishes ``~/state`` (``std_msgs/String``: ``state`` or ``state:reason``); a
  single-threaded executor on the main thread serves services, operator commands and the
  diagnostics timer, each under the lock the tick holds;
- services ``~/enable`` (``std_srvs/SetBool``: true arms or re-enables after a latched fallback,
  false disarms) and ``~/estop`` (``std_srvs/Trigger``);
- ``/diagnostics`` (``diagnostic_msgs/DiagnosticArray``): achieved rate, period error and
  inference time p50/p99, safety state, and the robot I/O's own figures (the quadruped's
  Pinocchio leg-odometry base velocity, ``leg_odometry_v{x,y,z}_m_s``, base frame).

Run: ``ros2 run sim2real policy_node --ros-args --params-file config/quadrotor.yaml
-p policy_file:=policy.onnx`` (or ``ros2 launch sim2real quadrotor.launch.py``).
"""

from __future__ import annotations

from pathlib import Path
import threading
import time
import typing

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
import rclpy
from rclpy.callback_groups import CallbackGroup
from rclpy.exceptions import InvalidParameterTypeException
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import QoSDurabilityPolicy, QoSHistoryPolicy, QoSProfile, QoSReliabilityPolicy
from rclpy.signals import SignalHandlerOptions
from std_msgs.msg import String
from std_srvs.srv import SetBool, Trigger

from sim2real.contract import ContractError
from sim2real.deploy import ros_msgs
from sim2real.deploy.control_loop import FixedRateLoop
from sim2real.deploy.loop_stats import LoopStats
from sim2real.deploy.node_params import check_overrides
from sim2real.deploy.record.msgdefs import type_name
from sim2real.deploy.record.node_recorder import NodeRecorder
from sim2real.deploy.robots import ros_io_of
from sim2real.deploy.runtime import ParamError, Runtime, Sample, parameter_defaults
from sim2real.deploy.runtime.ood import BandCheck, OodWindow
from sim2real.deploy.runtime.params import params_class

NODE_NAME = 'policy_node'
SENSOR_HISTORY = 100
"""Sensor messages DDS keeps per stream between two ticks (the tick takes them all): a
1 kHz joint-state stream under a 10 Hz loop loses none."""
SENSOR_QOS = QoSProfile(history=QoSHistoryPolicy.KEEP_LAST, depth=SENSOR_HISTORY,
                        reliability=QoSReliabilityPolicy.BEST_EFFORT,
                        durability=QoSDurabilityPolicy.VOLATILE)
"""The sensor-data profile (best effort, volatile) with room for every message of a tick."""
_LEVELS = {'inactive': DiagnosticStatus.OK, 'soft_start': DiagnosticStatus.OK,
           'active': DiagnosticStatus.OK, 'fallback': DiagnosticStatus.ERROR}


def declared_parameters(robot: str) -> dict:
    """Names and defaults of every parameter the node declares for a robot class."""
    return dict(parameter_defaults(robot))


def parameter_types(robot: str) -> dict[str, Parameter.Type]:
    """The ROS type of each list parameter (ROS cannot infer an empty list's type)."""
    hints = typing.get_type_hints(params_class('policy_node', robot))
    return {name: (Parameter.Type.STRING_ARRAY if hint == list[str]
                   else Parameter.Type.DOUBLE_ARRAY)
            for name, hint in hints.items() if typing.get_origin(hint) is list}


class TakenByTheTick(CallbackGroup):
    """The sensor subscriptions' group: the executor never waits on them nor runs their
    callbacks; the control tick (and an enable) takes what they hold. At 1000 sensor
    messages a second the executor would otherwise wake, rebuild its wait set and dispatch
    three times as often as the loop ticks."""

    def can_execute(self, entity) -> bool:
        """Never by the executor."""
        return False

    def beginning_execution(self, entity) -> bool:
        """Never by the executor."""
        return False

    def ending_execution(self, entity) -> None:
        """Nothing began."""


class PolicyNode(Node):
    """Thin ROS shell around ``Runtime`` (see module docstring)."""

    def __init__(self):
        """Declare parameters, build the runtime (refusing any contract mismatch), wire topics."""
        super().__init__(NODE_NAME)
        robot = self.declare_parameter('robot', '').value   # required: a registered robot
        values = self._declare_all(declared_parameters(robot))
        runtime = Runtime.from_values(values)
        self._recorder = (NodeRecorder(values, runtime, self.get_name())
                          if runtime.params.record else None)
        self._runtime = self.runtime = (self._recorder.runtime if self._recorder is not None
                                        else runtime)
        params = self._runtime.params
        self._stats = LoopStats(self._runtime.rate_hz)
        self._ood = OodWindow(BandCheck(self._runtime.contract),
                              round(params.ood_window_s * self._runtime.rate_hz))
        self._state = ''
        self._sensor_subs = []
        self._undecodable = 0
        self._lock = threading.Lock()
        """Held by each tick and by every executor callback that touches the runtime."""
        self._taken_by_tick = TakenByTheTick()
        self._sensor_streams: list[str] = []
        self._io = ros_io_of(params.robot)(self, params)
        self._state_pub = self.create_publisher(String, '~/state', 10)
        self._diag_pub = self.create_publisher(DiagnosticArray, '/diagnostics', 10)
        self.create_service(SetBool, '~/enable', self._on_enable)
        self.create_service(Trigger, '~/estop', self._on_estop)
        self._loop_failed = self.create_guard_condition(self._raise_loop_error)
        self._loop = FixedRateLoop(self._runtime.period_s, self._on_tick, self._lock,
                                   timing=self._stats.loop_timing,
                                   on_error=lambda exc: self._loop_failed.trigger(),
                                   priority=params.loop_priority, report=self._loop_report,
                                   idle=(self._recorder.drain if self._recorder is not None
                                         else None))
        self.create_timer(params.diagnostics_period_s, self._publish_diagnostics)
        self.get_logger().info(
            f'policy {params.policy_file} ({self._runtime.contract.task}) at '
            f'{self._runtime.rate_hz:g} Hz, command {params.command_interface} on '
            f'{self._io.command_topic}; call {self.get_name()}/enable to arm')
        if self._recorder is not None:
            self.get_logger().info(f'recording to {self._recorder.recorder.cfg.folder} '
                                   '(parameter record: false switches it off)')

    def _declare_all(self, defaults: dict) -> dict:
        """Declare every parameter with its typed default; reject overrides nobody declared."""
        values = {'robot': self.get_parameter('robot').value}
        list_types = parameter_types(values['robot'])
        for name, default in defaults.items():
            if name == 'robot':
                continue
            if name in list_types and not default:   # declared by type: [] carries none
                value = self.declare_parameter(name, list_types[name]).value
                values[name] = [] if value is None else list(value)
            else:
                values[name] = self.declare_parameter(name, default).value
        check_overrides(self, values)
        return values

    # -- sensors ----------------------------------------------------------------------
    def subscribe_sensor(self, msg_type, topic: str, to_values, stream: str,
                         sensor_qos: bool = True) -> None:
        """A runtime stream from topic: to_values(msg) -> (values, stamp_s), aged by DDS
        arrival; sensor_qos (best effort, taken by the tick, counted in the observation age)
        or the default QoS (an occasional stream such as a setpoint, served by the
        executor)."""
        def handle(msg, info):
            self._put(stream, *to_values(msg), info)
        if not sensor_qos:
            self._subscribe(msg_type, topic, handle, 10)
            return
        self._sensor_streams.append(stream)
        self._sensor_subs.append(
            self._subscribe(msg_type, topic, handle, SENSOR_QOS, self._taken_by_tick))

    def subscribe_command(self, msg_type, topic: str, to_values, stream: str) -> None:
        """An operator stream without a stamp (a Twist): its arrival time is its stamp."""
        def handle(msg, info):
            received_s = ros_msgs.arrival_steady_s(info)
            self._runtime.put(stream, Sample(to_values(msg), received_s, received_s))
        self._subscribe(msg_type, topic, handle, 10)

    def _subscribe(self, msg_type, topic: str, on_message, qos,
                   group: CallbackGroup | None = None):
        """A subscription taking topic's messages as CDR bytes: the flight recorder (when on)
        logs the bytes as received, and on_message(msg, info) gets them decoded
        (ros_msgs.cdr_decoder). In the tick's group the tick takes them; otherwise the
        executor serves them under the tick's lock. Bytes that do not decode are dropped and
        counted (undecodable_messages), as DDS drops a sample it cannot deserialize."""
        ros_type = type_name(msg_type)
        decode, resolved = ros_msgs.cdr_decoder(ros_type), self.resolve_topic_name(topic)
        recorder = self._recorder

        def handle(data, info):
            if recorder is not None:
                recorder.message(resolved, ros_type, data, info)
            try:
                msg = decode(data)
            except Exception as exc:   # noqa: B902 -- whatever the decoder met, drop it
                self._undecodable += 1
                self.get_logger().error(f'{resolved}: dropped a message that is not '
                                        f'{ros_type} ({exc!r})', throttle_duration_sec=5.0)
                return
            on_message(msg, info)

        def handle_locked(data, info):
            with self._lock:
                handle(data, info)
        if group is self._taken_by_tick:
            return self.create_subscription(msg_type, topic, handle, qos, callback_group=group,
                                            raw=True)
        return self.create_subscription(msg_type, topic, handle_locked, qos, raw=True)

    def _observation_age_s(self) -> float | None:
        """Age of the oldest sensor sample this tick uses, by its header stamp [s].

        Stamps are compared with this machine's clock: exact when the driver stamps on it
        (the HIL bridge, a local driver), offset by the clocks' difference otherwise.
        """
        now = self.get_clock().now().nanoseconds * 1e-9
        samples = [self._runtime.store.latest(s) for s in self._sensor_streams]
        if not samples or any(s is None for s in samples):
            return None
        return max(now - s.stamp_s for s in samples)

    def _put(self, stream: str, values: dict, stamp_s: float, info: dict) -> None:
        """Hand a converted message to the runtime's store, timed by its DDS arrival.

        The arrival time (rmw's received_timestamp on the steady clock), not the callback's,
        ages the sample: a callback delayed by a busy executor must not make a stream look
        fresher (or staler) than it is.
        """
        self._runtime.put(stream, Sample(values, stamp_s, ros_msgs.arrival_steady_s(info)))

    # -- control loop -----------------------------------------------------------------
    def start_loop(self) -> None:
        """Start the control loop's thread (its first tick one period from now)."""
        self._loop.start()

    def stop_loop(self) -> None:
        """Stop the control loop after the tick in progress."""
        self._loop.stop()

    def _loop_report(self, text: str, refused: bool) -> None:
        """The loop thread's scheduling, logged once (a warning where it was refused)."""
        (self.get_logger().warning if refused else self.get_logger().info)(text)

    def _raise_loop_error(self) -> None:
        """On the executor: the loop thread failed; its exception ends spin() and the node."""
        raise RuntimeError('control loop stopped') from self._loop.error

    def _on_tick(self) -> None:
        """One control tick (the loop thread, under the lock): runtime step, command, state.
        Never blocks."""
        ros_msgs.take_pending(self._sensor_subs)   # the newest samples, aged by arrival
        now_s = time.monotonic()
        result = self._runtime.step(now_s)
        self._stats.tick(now_s, result.inference_s, self._observation_age_s())
        self._ood.add(result.observation)
        self._io.publish(result.command, result.state)
        state = f'{result.state}:{result.reason}' if result.reason else result.state
        if state != self._state:
            self.get_logger().info(f'safety state {self._state or "start"} -> {state}')
            self._state = state
        self._state_pub.publish(String(data=state))

    def _publish_diagnostics(self) -> None:
        """Loop timing and safety state on /diagnostics. The timing percentiles are taken
        outside the tick's lock (LoopStats reads while the tick appends): a tick never
        waits for them."""
        figures = self._stats.summary()
        with self._lock:
            self._diag_pub.publish(self._diagnostics(figures))

    def _diagnostics(self, figures: dict[str, float]) -> DiagnosticArray:
        """The policy loop's status: timing figures, safety state, OOD shares, I/O and
        recorder."""
        status = DiagnosticStatus(
            level=_LEVELS.get(self._state.split(':')[0], DiagnosticStatus.WARN),
            name=f'{self.get_name()}: policy loop', hardware_id=self._runtime.contract.robot,
            message=self._state or 'starting')
        status.values = [KeyValue(key=k, value=f'{v:.6g}') for k, v in figures.items()]
        status.values.append(KeyValue(key='safety_state', value=self._state))
        status.values.append(KeyValue(key='loop_scheduling', value=self._loop.scheduling))
        status.values.append(KeyValue(key='undecodable_messages', value=str(self._undecodable)))
        shares = self._ood.shares()
        status.values += [KeyValue(key=f'ood_share.{name}', value=f'{share:.3g}')
                          for name, share in shares.items()]
        flagged = [f'{name} {share:.0%}' for name, share in shares.items()
                   if share > self._runtime.params.ood_warn_share]
        if flagged and status.level == DiagnosticStatus.OK:
            status.level = DiagnosticStatus.WARN
            status.message += '; outside the training band: ' + ', '.join(flagged)
        status.values += [KeyValue(key=key, value=f'{value:.4g}')
                          for key, value in self._io.diagnostics().items()]
        if self._recorder is not None:
            status.values += [KeyValue(key=key, value=f'{value:.0f}')
                              for key, value in self._recorder.diagnostics().items()]
        msg = DiagnosticArray(status=[status])
        msg.header.stamp = self.get_clock().now().to_msg()
        return msg

    def save_timing(self) -> None:
        """The loop's tick timing to the file of parameter timing_file (if set); a file it
        cannot write is logged, never raised: the node is shutting down."""
        path = self._runtime.params.timing_file
        if not path:
            return
        try:
            self._stats.save(Path(path).expanduser())
        except OSError as exc:
            self.get_logger().error(f'timing_file: {exc}')

    def close_recorder(self) -> None:
        """Write what the recorder holds and finish its file."""
        if self._recorder is not None:
            self._recorder.close()

    # -- services ---------------------------------------------------------------------
    def _on_enable(self, request: SetBool.Request, response: SetBool.Response):
        """Arm / re-enable (true) or disarm (false)."""
        with self._lock:
            self._enable(request.data, response)
        self.get_logger().info(f'enable({request.data}): {response.message}')
        return response

    def _enable(self, arm: bool, response: SetBool.Response) -> None:
        """Arm / re-enable (arm) or disarm, answering in response."""
        if arm:
            ros_msgs.take_pending(self._sensor_subs)   # judged on what has arrived
            response.success, response.message = self._runtime.enable(time.monotonic())
            if response.success:
                self._stats.reset()
        else:
            self._runtime.disable(time.monotonic())
            response.success, response.message = True, 'disarmed'

    def _on_estop(self, request: Trigger.Request, response: Trigger.Response):
        """Emergency stop: latched fallback until re-enabled."""
        with self._lock:
            self._runtime.estop(time.monotonic())
        response.success, response.message = True, 'estop latched'
        self.get_logger().warning('estop latched')
        return response


def main(args=None) -> int:
    """Console entry point `policy_node`."""
    # SIGINT raises KeyboardInterrupt in spin() instead of invalidating the context under it
    ros_msgs.interrupt_on_sigint()
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    try:
        try:
            node = PolicyNode()
        except (ContractError, ParamError, FileNotFoundError,
                InvalidParameterTypeException) as exc:
            rclpy.logging.get_logger(NODE_NAME).fatal(f'refusing to start: {exc}')
            return 2
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        try:
            node.start_loop()
            executor.spin()
        except (KeyboardInterrupt, ExternalShutdownException):
            pass
        finally:
            node.stop_loop()
            node.save_timing()
            node.close_recorder()
            node.destroy_node()
    finally:
        rclpy.try_shutdown()
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
