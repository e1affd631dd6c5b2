"""sim_bridge over real DDS: a subprocess on a private domain, checked from this process."""

import contextlib
import gc
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
from rcl_interfaces.srv import SetParameters
import rclpy
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import String
from std_srvs.srv import Trigger

from sim2real.deploy import ros_msgs
from sim2real.deploy.robots.quadrotor.cmd_vel_legacy import THRUST_MAPS

RATES_HZ = {'odom': 200.0, 'imu': 500.0}
QUADRUPED_PARAMS = Path(__file__).resolve().parents[3] / 'config' / 'quadruped.yaml'
HAND_PARAMS = QUADRUPED_PARAMS.parent / 'hand.yaml'


@pytest.fixture
def domain_env(monkeypatch):
    """A private ROS_DOMAIN_ID (1..100, from the pid) on localhost, here and for children."""
    domain = os.getpid() % 100 + 1
    monkeypatch.setenv('ROS_DOMAIN_ID', str(domain))
    monkeypatch.setenv('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    return domain


@contextlib.contextmanager
def running_bridge(log_path, ros_args):
    """The sim_bridge process with ros_args (output to log_path); SIGINT, then kill."""
    out = open(log_path, 'w')
    proc = subprocess.Popen([sys.executable, '-m', 'sim2real.deploy.sim_bridge', '--ros-args',
                             *ros_args], stdout=out, stderr=subprocess.STDOUT)
    try:
        yield proc
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        out.close()


@pytest.fixture
def bridge(domain_env, tmp_path):
    """The quadrotor sim_bridge with the spec's rates (log in tmp_path)."""
    with running_bridge(tmp_path / 'sim_bridge.log', [
            '-p', 'robot:=quadrotor', '-p', f'odom_rate_hz:={RATES_HZ["odom"]}',
            '-p', f'imu_rate_hz:={RATES_HZ["imu"]}']) as proc:
        yield proc


@contextlib.contextmanager
def listening(domain: int, streams: dict):
    """A node in this process logging (DDS arrival time, msg) per sensor topic of streams."""
    context = Context()
    rclpy.init(context=context, domain_id=domain)
    node = rclpy.create_node('br_listener', context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    log = {topic: [] for topic in streams}
    sensor_qos = QoSProfile(depth=200, reliability=ReliabilityPolicy.BEST_EFFORT)
    for topic, msg_type in streams.items():
        node.create_subscription(msg_type, topic, lambda m, info, t=topic: log[t].append(
            (ros_msgs.arrival_steady_s(info), m)), sensor_qos)
    try:
        yield node, executor, log
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown(context=context)


@pytest.fixture
def listener(domain_env):
    """The quadrotor's odom and imu logs, bridge events and a set_parameters client."""
    with listening(domain_env, {'odom': Odometry, 'imu': Imu}) as (node, executor, log):
        log['events'] = []
        node.create_subscription(String, '/sim_bridge/events', lambda m: log['events'].append(
            json.loads(m.data)), 50)
        client = node.create_client(SetParameters, '/sim_bridge/set_parameters')
        yield node, executor, log, client


def received_over_2_s(executor, log, topics) -> dict:
    """(arrival, msg) per topic of what arrived in 2.6 s, once discovery and start-up are
    past."""
    assert spin_for(executor, 30.0, lambda: all(log[t] for t in topics)), 'no data from bridge'
    spin_for(executor, 0.5)
    start = time.monotonic()
    spin_for(executor, 2.6)
    return {t: [(arrived, m) for arrived, m in log[t] if arrived >= start] for t in topics}


def assert_sampled_at(entries, rate_hz: float, topic: str) -> None:
    """(arrival, msg) entries of a stream sampled at rate_hz of simulated time, over 2 s of
    stamps: stamps that rise, at least 90 % of the steps regular (shorter than 1.5 periods:
    a lost sample or skipped physics makes a longer one), and their mean 1 / rate_hz within
    2 % (200 Hz on 2 ms physics steps alternates 4 and 6 ms). Stamps, not arrival times: a
    loaded 2-core VM delays the listener (466 arrivals in a second of a 500 Hz stream,
    2026-12-03), and a bridge stalled past its 100 ms catch-up skips physics."""
    stamps_s = np.array([ros_msgs.stamp_to_s(m.header.stamp) for _, m in entries])
    assert stamps_s[-1] >= stamps_s[0] + 2.0, topic   # 2.6 s of arrivals span 2 s of stamps
    steps_s = np.diff(stamps_s)
    assert np.all(steps_s > 0.0), topic
    regular = steps_s[steps_s < 1.5 / rate_hz]
    assert regular.size >= 0.9 * steps_s.size, (topic, regular.size, steps_s.size)
    assert regular.mean() == pytest.approx(1.0 / rate_hz, rel=0.02), topic


def spin_for(executor, duration_s, until=lambda: False):
    """Spin until duration_s passed or until() is true; returns whether until() became true."""
    end = time.monotonic() + duration_s
    while time.monotonic() < end:
        if until():
            return True
        executor.spin_once(timeout_sec=0.01)
    return until()


def set_active_faults(executor, client, value):
    """Call the bridge's set_parameters for active_faults; returns the SetParametersResult."""
    request = SetParameters.Request(parameters=[Parameter(name='active_faults', value=(
        ParameterValue(type=ParameterType.PARAMETER_STRING, string_value=value)))])
    future = client.call_async(request)
    assert spin_for(executor, 5.0, future.done)
    return future.result().results[0]


def test_rates_and_nan_fault_over_dds(bridge, listener):
    """odom 200 Hz and imu 500 Hz by their stamps (assert_sampled_at); set_parameters
    nan_imu -> NaN imu."""
    _, executor, log, client = listener
    received = received_over_2_s(executor, log, RATES_HZ)
    for topic, rate_hz in RATES_HZ.items():
        assert_sampled_at(received[topic], rate_hz, topic)
    assert np.isfinite(log['imu'][-1][1].angular_velocity.x)

    rejected = set_active_faults(executor, client, 'nan_imu, nan_gps')
    assert not rejected.successful and "'nan_gps'" in rejected.reason
    assert set_active_faults(executor, client, 'nan_imu').successful
    applied_s = time.monotonic()
    assert spin_for(executor, 2.0, lambda: any(
        t > applied_s and np.isnan(m.angular_velocity.x) for t, m in log['imu']))
    assert spin_for(executor, 2.0, lambda: any(
        e['event'] == 'fault_on' and e['fault'] == 'nan_imu' for e in log['events']))
    assert np.isfinite(log['odom'][-1][1].pose.pose.position.z)   # odom is not faulted


def test_commands_release_watchdog_and_reset_over_dds(bridge, listener):
    """Hover Twists (linear.z 26696) release the vehicle; silence trips the watchdog; reset."""
    node, executor, log, _ = listener
    truth = []
    node.create_subscription(Odometry, '/sim_bridge/ground_truth',
                             lambda m: truth.append(m.pose.pose.position.z), 10)
    cmd_pub = node.create_publisher(Twist, 'cmd_vel_legacy', 10)
    reset = node.create_client(Trigger, '/sim_bridge/reset')
    assert spin_for(executor, 30.0, lambda: truth and log['imu']), 'no data from bridge'

    def events():
        """Names of the events received so far."""
        return [e['event'] for e in log['events']]

    hover = Twist()
    hover.linear.z = THRUST_MAPS['battery_compensated'].to_command(0.27)   # > hover 0.2649 N
    # 200 Hz from a thread of its own, garbage collection held off: a full collection of
    # the messages this process logged paused it for 120 ms, past the 0.1 s watchdog
    stop = threading.Event()
    publisher = threading.Thread(target=lambda: [
        cmd_pub.publish(hover) for _ in iter(lambda: stop.wait(0.005), True)])
    gc.collect()
    gc.disable()
    try:
        publisher.start()
        spin_for(executor, 1.0)
    finally:
        stop.set()
        publisher.join()
        gc.enable()
    assert 'released' in events() and 'watchdog' not in events()
    assert spin_for(executor, 1.0, lambda: 'watchdog' in events())
    assert truth[-1] != 1.5
    future = reset.call_async(Trigger.Request())
    assert spin_for(executor, 5.0, future.done) and future.result().success
    assert spin_for(executor, 2.0, lambda: 'reset' in events() and truth[-1] == 1.5)


def test_quadruped_bridge_publishes_joint_states_and_imu_at_500_hz(domain_env, tmp_path):
    """A Go2's low-level state rate: JointState (12 joints) and Imu each at 500 Hz by their
    stamps (assert_sampled_at)."""
    with running_bridge(tmp_path / 'sim_bridge.log', [
            '--params-file', str(QUADRUPED_PARAMS), '-p', 'joint_states_rate_hz:=500.0',
            '-p', 'imu_rate_hz:=500.0']):
        with listening(domain_env, {'joint_states': JointState, 'imu': Imu}) as (
                _, executor, log):
            for topic, entries in received_over_2_s(executor, log, log).items():
                assert_sampled_at(entries, 500.0, topic)
            assert len(log['joint_states'][-1][1].name) == 12
            assert len(set(m.header.stamp.nanosec for _, m in log['imu'][-50:])) == 50


def test_hand_bridge_publishes_the_tracked_cube_at_15_hz(domain_env, tmp_path):
    """config/hand.yaml's bridge: the cube's PoseStamped at the tracker's 15 Hz by its stamps,
    in the 'mount' frame, a unit quaternion, within 2 cm of where the cube rests (5 mm of
    noise per axis), beside the 100 Hz joint states."""
    from geometry_msgs.msg import PoseStamped
    from sim2real.sim.in_hand import in_hand_model
    rest_m = in_hand_model(Path(HAND_PARAMS).parents[1] / 'urdf' / 'hand.urdf',
                           0.005)[1].object_spawn_pos_m
    with running_bridge(tmp_path / 'sim_bridge.log', ['--params-file', str(HAND_PARAMS)]):
        with listening(domain_env, {'cube_pose': PoseStamped, 'joint_states': JointState}) as (
                _, executor, log):
            received = received_over_2_s(executor, log, log)
            assert_sampled_at(received['cube_pose'], 15.0, 'cube_pose')
            assert_sampled_at(received['joint_states'], 100.0, 'joint_states')
            for _, msg in received['cube_pose']:
                assert msg.header.frame_id == 'mount'
                quat = ros_msgs.quat_msg_to_wxyz(msg.pose.orientation)
                assert np.linalg.norm(quat) == pytest.approx(1.0, abs=1e-9)
                pos = np.array([msg.pose.position.x, msg.pose.position.y, msg.pose.position.z])
                assert np.linalg.norm(pos - rest_m) < 0.02


def test_a_frozen_streams_effect_names_its_last_fresh_send_after_a_transport_delay(
        domain_env, tmp_path):
    """With 0.2 s of sensor transport, odom samples offered before frozen_odom's onset go out
    fresh after it: the fault_effect event gives the send time of the last of them (what a
    node's stale watchdog counts from), not the onset's earlier snapshot; the listener's last
    new odom stamp arrives within 0.1 s of it."""
    with running_bridge(tmp_path / 'sim_bridge.log', [
            '-p', 'robot:=quadrotor', '-p', 'sensor_latency_s:=0.2']), \
            listening(domain_env, {'odom': Odometry}) as (node, executor, log):
        events = []
        node.create_subscription(String, '/sim_bridge/events', lambda m: events.append(
            json.loads(m.data)), 50)
        client = node.create_client(SetParameters, '/sim_bridge/set_parameters')
        assert spin_for(executor, 30.0, lambda: len(log['odom']) > 20), 'no odom from bridge'
        assert set_active_faults(executor, client, 'frozen_odom').successful
        assert spin_for(executor, 3.0, lambda: any(
            e['event'] == 'fault_effect' for e in events))
        spin_for(executor, 0.3)
    onset = next(e for e in events if e['event'] == 'fault_on')
    effect = next(e for e in events if e['event'] == 'fault_effect')
    assert effect['fault'] == 'frozen_odom' and effect['stream'] == 'odom'
    assert onset['last_fresh_s']['odom'] < onset['monotonic_s']
    last_fresh_s = effect['last_fresh_s']['odom']
    assert onset['monotonic_s'] + 0.1 < last_fresh_s < effect['monotonic_s']
    stamps = [ros_msgs.stamp_to_s(m.header.stamp) for _, m in log['odom']]
    arrived_s = log['odom'][int(np.argmax(stamps))][0]
    assert 0.0 <= arrived_s - last_fresh_s < 0.1
