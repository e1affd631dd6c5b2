"""The policy node's sensor subscriptions are taken by the tick, never by the executor: over
real DDS on a private localhost domain."""

from __future__ import annotations

import time

import pytest

N_MESSAGES = 60
"""Messages published between two 'ticks': more than the sensor-data profile's depth of 5."""


@pytest.fixture
def ros(monkeypatch):
    """rclpy on a private localhost domain for this test."""
    import rclpy
    from sim2real.hil.processes import private_domain_id, ros_environment
    for key, value in ros_environment(private_domain_id(), base={}).items():
        monkeypatch.setenv(key, value)
    rclpy.init()
    yield rclpy
    rclpy.shutdown()


def test_the_executor_leaves_sensor_messages_to_the_tick_which_takes_every_one(ros):
    """Sixty messages published between two ticks: spinning the executor runs its timer but
    no sensor callback; take_pending then delivers all sixty in order."""
    from rclpy.executors import SingleThreadedExecutor
    from std_msgs.msg import Float64MultiArray
    from sim2real.deploy import ros_msgs
    from sim2real.deploy.policy_node import SENSOR_QOS, TakenByTheTick
    node = ros.create_node('taken_by_tick_test')
    received, fired = [], []
    sub = node.create_subscription(Float64MultiArray, '/s', lambda msg, info: received.append(
        msg.data[0]), SENSOR_QOS, callback_group=TakenByTheTick())
    node.create_timer(0.01, lambda: fired.append(1))
    pub = node.create_publisher(Float64MultiArray, '/s', SENSOR_QOS)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    try:
        deadline = time.monotonic() + 10.0
        while pub.get_subscription_count() < 1 and time.monotonic() < deadline:
            time.sleep(0.05)   # discovery
        for i in range(N_MESSAGES):
            pub.publish(Float64MultiArray(data=[float(i)]))
        end = time.monotonic() + 0.5
        while time.monotonic() < end:
            executor.spin_once(timeout_sec=0.05)
        assert fired and received == []
        ros_msgs.take_pending([sub])
        assert received == [float(i) for i in range(N_MESSAGES)]
    finally:
        executor.shutdown()
        node.destroy_node()
