"""policy_node decodes sensor messages from CDR bytes with rosbags: the runtime must get the
same values as from rclpy's own message classes, for every message type it reads."""

from __future__ import annotations

import numpy as np
import pytest
from geometry_msgs.msg import PointStamped, PoseStamped, Twist
from nav_msgs.msg import Odometry
from rclpy.serialization import serialize_message
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64MultiArray

from sim2real.deploy import ros_msgs
from sim2real.deploy.record.msgdefs import type_name


def _odometry() -> Odometry:
    """An odometry message with a distinct value in every field the runtime reads."""
    msg = ros_msgs.make_odometry({'pos_w': [1.5, -2.25, 3.0],
                                  'quat_wxyz': [0.5, 0.5, -0.5, 0.5],
                                  'lin_vel_b': [0.1, 0.2, -0.3],
                                  'ang_vel_b': [-1.0, 2.0, 0.25]}, 12.345678901)
    msg.pose.covariance[7] = 4.0
    return msg


def _imu() -> Imu:
    """An IMU message with orientation, rates and specific force."""
    return ros_msgs.make_imu_with_orientation(
        {'quat_wxyz': [0.0, 1.0, 0.0, 0.0], 'ang_vel_b': [0.5, -0.5, 3.0],
         'lin_acc_b': [0.0, 0.0, 9.81]}, 7.000000001)


def _joint_state() -> JointState:
    """Twelve named joints in the vendor's order."""
    return ros_msgs.make_joint_state([f'j{i}' for i in range(12)], np.linspace(-1, 1, 12),
                                     np.arange(12.0), np.zeros(12), 3.5)


CASES = [
    (Odometry, _odometry, ros_msgs.odometry_to_values),
    (Imu, _imu, ros_msgs.imu_to_values),
    (Imu, _imu, ros_msgs.imu_orientation_to_values),
    (JointState, _joint_state, ros_msgs.joint_state_to_values),
    (PointStamped, lambda: ros_msgs.make_point_stamped([0.5, -1.0, 2.0], 4.25),
     ros_msgs.point_to_values),
    (PoseStamped, lambda: ros_msgs.make_pose_stamped([1.0, 2.0, 3.0], [0.0, 0.0, 0.0, 1.0],
                                                     2.5, 'world'),
     ros_msgs.pose_stamped_to_values),
    (PoseStamped, lambda: ros_msgs.make_pose_stamped([1.0, 2.0, 3.0], [0.5, 0.5, 0.5, 0.5],
                                                     2.5, 'world'),
     ros_msgs.pose_orientation_to_values),
    (Twist, lambda: ros_msgs.make_twist(0.4, -0.1, 0.7), ros_msgs.twist_to_velocity_command),
    (Float64MultiArray, lambda: ros_msgs.float64_array([1.0, -2.0, 3.5]),
     ros_msgs.from_float64_array),
]


def _same(a, b) -> None:
    """Equal nested values: arrays exactly, names and stamps as they are."""
    if isinstance(a, tuple):
        for x, y in zip(a, b, strict=True):
            _same(x, y)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for key in a:
            _same(a[key], b[key])
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    else:
        assert a == b


@pytest.mark.parametrize('msg_type, make, to_values', CASES,
                         ids=[f'{c[0].__name__}-{c[2].__name__}' for c in CASES])
def test_decoded_bytes_give_the_runtime_the_values_rclpy_messages_give(msg_type, make,
                                                                       to_values):
    """The same message through rclpy's classes and through the CDR decoder: identical
    values, dtypes and stamps; decoded arrays are copies the runtime may write."""
    msg = make()
    decoded = ros_msgs.cdr_decoder(type_name(msg_type))(serialize_message(msg))
    ours = to_values(decoded)
    _same(ours, to_values(msg))
    for array in (ours[0].values() if isinstance(ours, tuple) else
                  [ours] if isinstance(ours, np.ndarray) else ours.values()):
        if isinstance(array, np.ndarray):
            array[...] = 0.0   # writable: not a view of the message's bytes


def test_a_type_outside_the_store_is_registered_from_its_installed_definitions(monkeypatch):
    """With rosbags' empty store, Odometry and every type it uses are read from the
    installed .msg files: the decoded pose is the one sent."""
    from rosbags.typesys import get_typestore, Stores
    empty = get_typestore(Stores.EMPTY)
    monkeypatch.setattr(ros_msgs, '_typestore', lambda: empty)
    ros_msgs.cdr_decoder.cache_clear()
    try:
        decoded = ros_msgs.cdr_decoder('nav_msgs/msg/Odometry')(serialize_message(_odometry()))
        assert 'std_msgs/msg/Header' in empty.fielddefs
        values, stamp_s = ros_msgs.odometry_to_values(decoded)
        assert values['pos_w'].tolist() == [1.5, -2.25, 3.0] and stamp_s == 12.345678901
    finally:
        ros_msgs.cdr_decoder.cache_clear()


def test_truncated_bytes_do_not_decode():
    """Half an odometry message raises (the node drops it and counts it)."""
    data = serialize_message(_odometry())
    with pytest.raises(Exception):
        ros_msgs.cdr_decoder('nav_msgs/msg/Odometry')(data[:len(data) // 2])
