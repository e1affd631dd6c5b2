"""ROS message <-> numpy conversions: quaternion order, frames, stamps, command fields."""

import math

import numpy as np
import pytest
from geometry_msgs.msg import Quaternion

from sim2real.deploy import ros_msgs
from sim2real.deploy.robots.quadrotor.cmd_vel_legacy import THRUST_MAPS
from sim2real.deploy.robots.quadrotor.ros_io import command_from_twist, twist_from_command

ODOM = {'pos_w': np.array([1.0, 2.0, 3.0]), 'quat_wxyz': np.array([0.5, 0.5, -0.5, 0.5]),
        'lin_vel_b': np.array([0.1, 0.2, 0.3]), 'ang_vel_b': np.array([-1.0, 0.0, 2.0])}


def test_quaternion_field_order():
    """wxyz (0.5, 0.5, -0.5, 0.5) -> msg x=0.5, y=-0.5, z=0.5, w=0.5 and back."""
    msg = Quaternion()
    ros_msgs.set_quat_msg(msg, [0.1, 0.2, 0.3, 0.4])
    assert (msg.x, msg.y, msg.z, msg.w) == (0.2, 0.3, 0.4, 0.1)
    assert ros_msgs.quat_msg_to_wxyz(msg).tolist() == [0.1, 0.2, 0.3, 0.4]


def test_odometry_round_trip_and_frames():
    """make_odometry -> odometry_to_values returns the same arrays, frames world/base_link."""
    msg = ros_msgs.make_odometry(ODOM, 12.25)
    assert msg.header.frame_id == 'world' and msg.child_frame_id == 'base_link'
    q = msg.pose.pose.orientation
    assert (q.x, q.y, q.z, q.w) == (0.5, -0.5, 0.5, 0.5)
    assert msg.twist.twist.angular.z == 2.0     # body-frame twist, no rotation
    values, stamp_s = ros_msgs.odometry_to_values(msg)
    assert stamp_s == 12.25
    for key, expected in ODOM.items():
        assert values[key].dtype == np.float64
        np.testing.assert_array_equal(values[key], expected)


def test_imu_round_trip_and_no_orientation():
    """make_imu sets orientation_covariance[0] = -1; imu_to_values returns the arrays."""
    imu = {'ang_vel_b': np.array([0.1, -0.2, 0.3]), 'lin_acc_b': np.array([0.0, 0.0, 9.81])}
    msg = ros_msgs.make_imu(imu, 3.5)
    assert msg.orientation_covariance[0] == -1.0 and msg.header.frame_id == 'base_link'
    values, stamp_s = ros_msgs.imu_to_values(msg)
    assert stamp_s == 3.5
    np.testing.assert_array_equal(values['ang_vel_b'], imu['ang_vel_b'])
    np.testing.assert_array_equal(values['lin_acc_b'], imu['lin_acc_b'])


def test_nan_values_survive_the_message():
    """NaN values (the nan_* faults) reach the reader as NaN."""
    imu = {'ang_vel_b': np.full(3, np.nan), 'lin_acc_b': np.full(3, np.nan)}
    values, _ = ros_msgs.imu_to_values(ros_msgs.make_imu(imu, 1.0))
    assert np.isnan(values['ang_vel_b']).all() and np.isnan(values['lin_acc_b']).all()


@pytest.mark.parametrize('stamp_s, sec, nanosec', [
    (0.0, 0, 0), (1.5, 1, 500_000_000), (1796051541.872851339, 1796051541, 872851339)])
def test_stamp_conversion(stamp_s, sec, nanosec):
    """Seconds -> (sec, nanosec) to the nanosecond (float64 resolution at 1.8e9 s: 0.24 us)."""
    stamp = ros_msgs.s_to_stamp(stamp_s)
    assert stamp.sec == sec and abs(stamp.nanosec - nanosec) <= 300
    assert ros_msgs.stamp_to_s(stamp) == pytest.approx(stamp_s, abs=1e-6)


def test_twist_command_round_trip():
    """0.24 N compensated, rates (1, -0.5, 0.25) -> z 32767.5, y 57.30, x -28.65, angular.z
    -14.32."""
    legacy = THRUST_MAPS['battery_compensated']
    msg = twist_from_command(0.24, [1.0, -0.5, 0.25], legacy)
    assert (msg.linear.z, msg.angular.x, msg.angular.y) == (32767.5, 0.0, 0.0)
    assert (msg.linear.y, msg.linear.x, msg.angular.z) == pytest.approx(
        (57.29578, -28.64789, -14.32394), abs=1e-5)
    thrust_n, rates = command_from_twist(msg, legacy)
    assert thrust_n == pytest.approx(0.24)
    np.testing.assert_allclose(rates, [1.0, -0.5, 0.25])


def test_float64_array_and_point():
    """Float64MultiArray carries 4 rotor speeds exactly; PointStamped gives pos_w and stamp."""
    speeds = np.array([1500.0, 1501.5, 1499.25, math.pi])
    np.testing.assert_array_equal(
        ros_msgs.from_float64_array(ros_msgs.float64_array(speeds)), speeds)
    values, stamp_s = ros_msgs.point_to_values(ros_msgs.make_point_stamped([0, 1, 1.5], 2.0))
    assert values['pos_w'].tolist() == [0.0, 1.0, 1.5] and stamp_s == 2.0


def test_info_steady_s_converts_a_dds_timestamp_to_the_steady_clock():
    """A message received 12 ms ago (system clock) was received 12 ms before steady now."""
    now_steady_s, now_system_ns = 100.0, 1_800_000_000_000_000_000
    info = {'received_timestamp': now_system_ns - 12_000_000, 'source_timestamp': 0}
    assert ros_msgs.info_steady_s(info, 'received_timestamp', now_steady_s,
                                  now_system_ns) == pytest.approx(99.988, abs=1e-9)


@pytest.mark.parametrize('info', [None, {}, {'received_timestamp': 0},
                                  {'received_timestamp': 1_800_000_000_500_000_000}])
def test_info_steady_s_without_a_usable_timestamp_is_now(info):
    """No timestamp (an rmw without them) or one from the future falls back to now."""
    assert ros_msgs.info_steady_s(info, 'received_timestamp', 100.0,
                                  1_800_000_000_000_000_000) == 100.0
