"""Arming a node right after its launch, over real DDS: a refusal the node marks as DDS
discovery is retried for as long as the node says so, whatever transient reasons the robot's
HIL profile lists; any other refusal ends the run at once."""

import threading
import time

import numpy as np
import pytest
import rclpy
from std_srvs.srv import SetBool

from sim2real.deploy.runtime.sensors import DISCOVERY_S, Sample, SensorStore, Watchdog
from sim2real.hil.joint_runs import arm
from sim2real.hil.monitor import HilError

WATCHDOG = Watchdog('joint_state', 0.1, 'joint_state_timeout_s', '/joint_states')


class EnableService:
    """policy_node/enable answered as the runtime answers it: refused while the joint_state
    watchdog is stale, with the watchdog's own explanation."""

    def __init__(self, started_s: float):
        """A node whose clock of start is started_s (steady) and whose store is empty."""
        self.store = SensorStore()
        self.started_s = started_s
        self.calls = 0
        self.node = rclpy.create_node('policy_node')
        self.node.create_service(SetBool, '/policy_node/enable', self._on_enable)
        self.executor = rclpy.executors.SingleThreadedExecutor()
        self.executor.add_node(self.node)
        self.thread = threading.Thread(target=self.executor.spin, daemon=True)
        self.thread.start()

    def receive(self) -> None:
        """A joint_state message arrives now."""
        now_s = time.monotonic()
        self.store.put('joint_state', Sample({'q': np.zeros(2)}, now_s, now_s))

    def _on_enable(self, request, response):
        self.calls += 1
        now_s = time.monotonic()
        if WATCHDOG.stale(self.store, now_s):
            response.success = False
            explained = WATCHDOG.explain(self.store, now_s, self.started_s)
            response.message = f'stale:joint_state ({explained})'
        else:
            response.success = True
        return response

    def close(self) -> None:
        """Stop serving."""
        self.executor.shutdown()
        self.thread.join()
        self.node.destroy_node()


@pytest.fixture
def ros(hil_monitor):
    """The monitor on its private domain."""
    return hil_monitor


def test_a_stream_still_in_discovery_is_waited_for_beyond_the_robots_retry_time(ros):
    """joint_state arrives 1.5 s after the first enable; the profile retries nothing for
    0.2 s, yet arm waits for it and returns the accepted enable's time (1.5 s or later)."""
    service = EnableService(time.monotonic())
    try:
        t0 = time.monotonic()
        threading.Timer(1.5, service.receive).start()
        t_enable = arm(ros, ('odom_twist',), 0.2)
        assert 1.5 <= t_enable - t0 < 3.0
        assert service.calls > 5
    finally:
        service.close()


def test_a_stream_silent_past_discovery_is_an_error_at_once(ros):
    """A node up for longer than DISCOVERY_S without joint_state: its refusal asks whether the
    topic is published, and arm raises it at its first answer."""
    service = EnableService(time.monotonic() - DISCOVERY_S - 1.0)
    try:
        t0 = time.monotonic()
        with pytest.raises(HilError, match='is /joint_states published and remapped'):
            arm(ros, ('odom_twist',), 0.2)
        assert service.calls == 1
        assert time.monotonic() - t0 < 5.0
    finally:
        service.close()


def test_a_transient_reason_is_retried_only_for_the_robots_time(ros):
    """A stale refusal listed as transient by the profile, on a node past discovery: retried
    for timeout_s (0.3 s), then raised."""
    service = EnableService(time.monotonic() - DISCOVERY_S - 1.0)
    try:
        t0 = time.monotonic()
        with pytest.raises(HilError, match='stale:joint_state'):
            arm(ros, ('stale:',), 0.3)
        assert 0.3 <= time.monotonic() - t0 < 3.0
        assert service.calls >= 3
    finally:
        service.close()


def test_a_stale_refusal_just_after_a_simulator_stall_is_asked_again(ros):
    """A node past discovery refusing 'stale:joint_state' (the quadrotor's profile lists no
    stale reason): with the bridge's 'stall' event just received, arm asks again until the
    stream is back (0.6 s later); without one, the refusal ends the run at its first answer
    (test_a_stream_silent_past_discovery_is_an_error_at_once)."""
    from std_msgs.msg import String
    node = rclpy.create_node('sim_bridge')
    events = node.create_publisher(String, '/sim_bridge/events', 10)
    service = EnableService(time.monotonic() - DISCOVERY_S - 1.0)
    try:
        events.publish(String(data='{"event": "stall", "fault": "", "lag_ms": 70.0, '
                                   f'"monotonic_s": {time.monotonic()}}}'))
        ros.wait_for(lambda: ros.events_since(0.0, 'stall'), 5.0, 'the stall event')
        t0 = time.monotonic()
        threading.Timer(0.6, service.receive).start()
        t_enable = arm(ros, ('odom_twist',), 0.2)
        assert 0.6 <= t_enable - t0 < 1.0 and service.calls > 5
    finally:
        service.close()
        node.destroy_node()
