"""The HIL monitor over real DDS: a window waits until the monitor has taken what was
published before its end, and says so when a node stops publishing."""

import threading
import time

import pytest
import rclpy
from std_msgs.msg import Float64MultiArray, String

from sim2real.deploy import ros_msgs
from sim2real.hil.monitor import HilError, HilMonitor

RATE_HZ = 100.0


@pytest.fixture
def monitor(hil_monitor):
    """The HilMonitor on its private domain, with a publisher of the node's state."""
    mon = hil_monitor
    node = rclpy.create_node('state_publisher')
    pub = node.create_publisher(String, '/policy_node/state', 10)
    stop = threading.Event()

    def publish():
        while not stop.is_set():
            pub.publish(String(data='active'))
            time.sleep(1.0 / RATE_HZ)
    thread = threading.Thread(target=publish, daemon=True)
    thread.start()
    mon.wait_for(lambda: len(mon.window('states', 0.0)) >= 10, 10.0, 'states to arrive')
    yield mon, stop
    stop.set()
    thread.join()
    node.destroy_node()


def test_a_window_waits_for_what_a_busy_monitor_has_not_taken_yet(monitor):
    """With the monitor's executor held up for 0.4 s, a window ending now still ends within
    two publish periods of now (read at once, it would end 0.4 s early)."""
    mon, _stop = monitor
    mon._lock.acquire()   # the executor's state callback waits here, as under CPU load
    threading.Timer(0.4, mon._lock.release).start()
    time.sleep(0.4)
    t_end = time.monotonic() - 0.05   # published messages after the lock was taken
    states = mon.window('states', t_end - 1.0, t_end)
    assert t_end - states[-1][0] < 2.0 / RATE_HZ


def test_a_window_after_a_node_stopped_publishing_is_an_error_naming_it(monitor):
    """The state topic going quiet: catching up with a later time fails naming 'states'
    after the timeout, instead of judging a window that misses its end."""
    mon, stop = monitor
    stop.set()
    time.sleep(0.1)
    t0 = time.monotonic()
    with pytest.raises(HilError, match='published on states'):
        mon.catch_up(time.monotonic(), timeout_s=0.3)
    assert 0.3 <= time.monotonic() - t0 < 1.0


def test_the_operators_command_keeps_its_rate_while_the_intake_is_held_up(monitor):
    """The velocity command goes out on its own thread: with the intake held up 0.6 s (as
    under CPU load), a listener still receives it at >= 15 Hz of its 20 Hz; the command
    stops at stop_cmd_vel, whose time is that of the last one sent."""
    from geometry_msgs.msg import Twist
    mon, _stop = monitor
    listener = rclpy.create_node('cmd_vel_listener')
    arrivals = []
    listener.create_subscription(Twist, '/cmd_vel_test', lambda m, info: arrivals.append(
        ros_msgs.arrival_steady_s(info)), 50)
    operator = HilMonitor('/cmd2', Float64MultiArray, ros_msgs.from_float64_array,
                          cmd_vel_topic='/cmd_vel_test')
    try:
        operator.start_cmd_vel(0.5)
        deadline = time.monotonic() + 10.0
        while len(arrivals) < 3 and time.monotonic() < deadline:
            rclpy.spin_once(listener, timeout_sec=0.05)
        operator._lock.acquire()   # the intake's callbacks wait here
        t0 = time.monotonic()
        try:
            while time.monotonic() < t0 + 0.6:
                rclpy.spin_once(listener, timeout_sec=0.01)
        finally:
            operator._lock.release()
        during = [t for t in arrivals if t0 <= t <= t0 + 0.6]
        assert len(during) >= 9, during
        last_sent_s = operator.stop_cmd_vel()
        t_stop = time.monotonic()
        while time.monotonic() < t_stop + 0.3:
            rclpy.spin_once(listener, timeout_sec=0.01)
        assert last_sent_s <= t_stop and max(arrivals) < t_stop + 0.05
    finally:
        operator.close()
        listener.destroy_node()
