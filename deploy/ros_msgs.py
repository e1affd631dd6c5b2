"""ROS 2 message <-> numpy conversions shared by the policy node and the HIL bridge.

Readers return plain ``(values, stamp_s)`` tuples: ``values`` maps the runtime's field names
to float64 arrays and ``stamp_s`` is the header stamp in seconds (source clock). Quaternions
are (w, x, y, z) in our arrays and (x, y, z, w) fields in geometry_msgs/Quaternion.
nav_msgs/Odometry carries the pose in ``header.frame_id`` (world) and the twist in
``child_frame_id`` (body), so ``lin_vel_b`` and ``ang_vel_b`` map to it without rotation.
"""

from __future__ import annotations

import functools
import signal
import time
from typing import Callable

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import PointStamped, PoseStamped, Twist
from nav_msgs.msg import Odometry
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64MultiArray


WORLD_FRAME = 'world'
BODY_FRAME = 'base_link'


def stamp_to_s(stamp: Time) -> float:
    """Seconds of a builtin_interfaces/Time."""
    return stamp.sec + stamp.nanosec * 1e-9


def s_to_stamp(stamp_s: float) -> Time:
    """builtin_interfaces/Time of a time in seconds (rounded to the nanosecond)."""
    total_ns = int(round(stamp_s * 1e9))
    return Time(sec=total_ns // 1_000_000_000, nanosec=total_ns % 1_000_000_000)


def info_steady_s(info: dict | None, key: str, now_steady_s: float,
                  now_system_ns: int) -> float:
    """Steady-clock time [s] of a message-info timestamp (rmw, system clock [ns]).

    key: 'received_timestamp' (when DDS delivered the message to this process) or
    'source_timestamp' (when the publisher wrote it; same clock only on one machine). A
    missing or zero timestamp (an rmw without them) or one in the future gives now_steady_s.
    """
    stamp_ns = (info or {}).get(key) or 0
    if stamp_ns <= 0:
        return now_steady_s
    return now_steady_s - max(0.0, (now_system_ns - stamp_ns) * 1e-9)


def arrival_steady_s(info: dict | None) -> float:
    """Steady time at which DDS delivered a message to this process (now when unknown)."""
    return info_steady_s(info, 'received_timestamp', time.monotonic(), time.time_ns())


def published_steady_s(info: dict | None) -> float:
    """Steady time at which a publisher on this machine wrote a message (now when unknown)."""
    return info_steady_s(info, 'source_timestamp', time.monotonic(), time.time_ns())


@functools.lru_cache(maxsize=None)
def _typestore():
    """rosbags' store of the ROS 2 Jazzy message types (more registered as they come)."""
    from rosbags.typesys import get_typestore, Stores
    return get_typestore(Stores.ROS2_JAZZY)


@functools.lru_cache(maxsize=None)
def cdr_decoder(ros_type: str) -> Callable[[bytes], object]:
    """fn(CDR bytes) -> the message as an object with the type's fields, by rosbags'
    deserializer generated for the type: 3 to 5 times cheaper than rclpy building its
    Python message classes (60-95 us for an Odometry), which a node pays at every message
    of a kilohertz stream. Arrays come as numpy arrays (read-only views: copy before
    writing). A type outside the Jazzy set is registered from its installed .msg files."""
    from rosbags.typesys import get_types_from_msg
    from sim2real.deploy.record.msgdefs import concatenated, SEPARATOR
    store = _typestore()
    if ros_type not in store.fielddefs:
        first, *used = concatenated(ros_type).split(SEPARATOR + '\n')
        types = get_types_from_msg(first, ros_type)
        for part in used:
            header, _, text = part.partition('\n')
            name = header.removeprefix('MSG: ').strip()
            package, _, short = name.partition('/')
            types.update(get_types_from_msg(text, f'{package}/msg/{short}'))
        store.register(types)
    return functools.partial(store.deserialize_cdr, typename=ros_type)


def take_pending(subscriptions) -> None:
    """Run each subscription's callback (msg, message info) on every message DDS holds.

    The executor serves subscriptions between other callbacks; a loop that must act on the
    newest data (a control tick, a physics step) takes what has arrived itself first.
    """
    for sub in subscriptions:
        with sub.handle:
            while (taken := sub.handle.take_message(sub.msg_type, sub.raw)) is not None:
                sub.callback(*taken)


def _xyz(vec) -> np.ndarray:
    """(3,) float64 array of a Vector3 or Point."""
    return np.array([vec.x, vec.y, vec.z], dtype=np.float64)


xyz = _xyz
"""(3,) float64 array of a Vector3 or Point (for a robot's own messages)."""


def _set_xyz(vec, values) -> None:
    """Write a (3,) array into a Vector3 or Point."""
    vec.x, vec.y, vec.z = (float(v) for v in values)


def quat_msg_to_wxyz(quat) -> np.ndarray:
    """(w, x, y, z) array of a geometry_msgs/Quaternion (fields x, y, z, w)."""
    return np.array([quat.w, quat.x, quat.y, quat.z], dtype=np.float64)


def set_quat_msg(quat, quat_wxyz) -> None:
    """Write a (w, x, y, z) array into a geometry_msgs/Quaternion."""
    quat.w, quat.x, quat.y, quat.z = (float(v) for v in quat_wxyz)


def odometry_to_values(msg: Odometry) -> tuple[dict[str, np.ndarray], float]:
    """pos_w [m], quat_wxyz [world<-body], lin_vel_b [m/s], ang_vel_b [rad/s]; stamp [s]."""
    values = {'pos_w': _xyz(msg.pose.pose.position),
              'quat_wxyz': quat_msg_to_wxyz(msg.pose.pose.orientation),
              'lin_vel_b': _xyz(msg.twist.twist.linear),
              'ang_vel_b': _xyz(msg.twist.twist.angular)}
    return values, stamp_to_s(msg.header.stamp)


def imu_to_values(msg: Imu) -> tuple[dict[str, np.ndarray], float]:
    """ang_vel_b [rad/s] and lin_acc_b [m/s^2, specific force; body frame]; stamp [s]."""
    values = {'ang_vel_b': _xyz(msg.angular_velocity),
              'lin_acc_b': _xyz(msg.linear_acceleration)}
    return values, stamp_to_s(msg.header.stamp)


def imu_orientation_to_values(msg: Imu) -> tuple[dict[str, np.ndarray], float]:
    """quat_wxyz [world<-base], ang_vel_b [rad/s], lin_acc_b [m/s^2]; stamp [s].

    An Imu that declares no orientation (orientation_covariance[0] == -1) gives a NaN
    quaternion, which the runtime's NaN guard refuses.
    """
    values, stamp_s = imu_to_values(msg)
    quat = quat_msg_to_wxyz(msg.orientation)
    if msg.orientation_covariance[0] == -1.0:
        quat = np.full(4, np.nan)
    values['quat_wxyz'] = quat
    return values, stamp_s


def joint_state_to_values(msg: JointState) -> tuple[dict, float]:
    """names (the driver's order), pos_rad, vel_rad_s as they come; stamp [s]. The runtime
    matches them to the contract's joints by name (joint_state.JointStateMapper)."""
    return {'names': list(msg.name), 'pos_rad': np.array(msg.position, dtype=np.float64),
            'vel_rad_s': np.array(msg.velocity, dtype=np.float64)}, stamp_to_s(
        msg.header.stamp)


def pose_stamped_to_values(msg: PoseStamped) -> tuple[dict[str, np.ndarray], float]:
    """pos_m [m] and quat_wxyz of a tracked pose (in its header's frame); stamp [s]."""
    return ({'pos_m': _xyz(msg.pose.position),
             'quat_wxyz': quat_msg_to_wxyz(msg.pose.orientation)},
            stamp_to_s(msg.header.stamp))


def pose_orientation_to_values(msg: PoseStamped) -> dict[str, np.ndarray]:
    """quat_wxyz of an operator's PoseStamped whose position does not matter (a goal; its
    stamp is not used: operators often leave it zero)."""
    return {'quat_wxyz': quat_msg_to_wxyz(msg.pose.orientation)}


def make_pose_stamped(pos_m, quat_wxyz, stamp_s: float, frame_id: str) -> PoseStamped:
    """geometry_msgs/PoseStamped of a position [m] and orientation in frame_id."""
    msg = PoseStamped()
    msg.header.stamp = s_to_stamp(stamp_s)
    msg.header.frame_id = frame_id
    _set_xyz(msg.pose.position, pos_m)
    set_quat_msg(msg.pose.orientation, quat_wxyz)
    return msg


def twist_to_velocity_command(msg: Twist) -> dict[str, np.ndarray]:
    """velocity_command [vx m/s, vy m/s, yaw rate rad/s] of an operator's cmd_vel Twist."""
    return {'velocity_command': np.array([msg.linear.x, msg.linear.y, msg.angular.z],
                                         dtype=np.float64)}


def make_joint_state(names, pos_rad, vel_rad_s, effort_nm, stamp_s: float) -> JointState:
    """sensor_msgs/JointState of per-joint arrays (names in the driver's order)."""
    msg = JointState()
    msg.header.stamp = s_to_stamp(stamp_s)
    msg.name = list(names)
    msg.position = [float(v) for v in pos_rad]
    msg.velocity = [float(v) for v in vel_rad_s]
    msg.effort = [float(v) for v in effort_nm]
    return msg


def make_imu_with_orientation(values: dict, stamp_s: float, frame_id: str = BODY_FRAME) -> Imu:
    """sensor_msgs/Imu with orientation quat_wxyz [world<-base], gyro and specific force."""
    msg = make_imu(values, stamp_s, frame_id)
    msg.orientation_covariance[0] = 0.0
    set_quat_msg(msg.orientation, values['quat_wxyz'])
    return msg


def make_twist(vx_m_s: float, vy_m_s: float, yaw_rate_rad_s: float) -> Twist:
    """geometry_msgs/Twist velocity command (linear x, y [m/s], angular z [rad/s])."""
    msg = Twist()
    msg.linear.x, msg.linear.y, msg.angular.z = float(vx_m_s), float(vy_m_s), float(
        yaw_rate_rad_s)
    return msg


def point_to_values(msg: PointStamped) -> tuple[dict[str, np.ndarray], float]:
    """Setpoint pos_w [m; world frame] of a PointStamped; stamp [s]."""
    return {'pos_w': _xyz(msg.point)}, stamp_to_s(msg.header.stamp)


def make_odometry(values: dict, stamp_s: float, frame_id: str = WORLD_FRAME,
                  child_frame_id: str = BODY_FRAME) -> Odometry:
    """nav_msgs/Odometry of odom values (pose in frame_id, twist in child_frame_id)."""
    msg = Odometry()
    msg.header.stamp = s_to_stamp(stamp_s)
    msg.header.frame_id = frame_id
    msg.child_frame_id = child_frame_id
    _set_xyz(msg.pose.pose.position, values['pos_w'])
    set_quat_msg(msg.pose.pose.orientation, values['quat_wxyz'])
    _set_xyz(msg.twist.twist.linear, values['lin_vel_b'])
    _set_xyz(msg.twist.twist.angular, values['ang_vel_b'])
    return msg


def make_imu(values: dict, stamp_s: float, frame_id: str = BODY_FRAME) -> Imu:
    """sensor_msgs/Imu of imu values; orientation_covariance[0] = -1 (no orientation)."""
    msg = Imu()
    msg.header.stamp = s_to_stamp(stamp_s)
    msg.header.frame_id = frame_id
    msg.orientation_covariance[0] = -1.0
    _set_xyz(msg.angular_velocity, values['ang_vel_b'])
    _set_xyz(msg.linear_acceleration, values['lin_acc_b'])
    return msg


def make_point_stamped(pos_w, stamp_s: float, frame_id: str = WORLD_FRAME) -> PointStamped:
    """geometry_msgs/PointStamped of a position [m; world frame]."""
    msg = PointStamped()
    msg.header.stamp = s_to_stamp(stamp_s)
    msg.header.frame_id = frame_id
    _set_xyz(msg.point, pos_w)
    return msg


def float64_array(values) -> Float64MultiArray:
    """std_msgs/Float64MultiArray of a 1-D array (no layout, as forward controllers take)."""
    return Float64MultiArray(data=[float(v) for v in np.asarray(values).reshape(-1)])


def from_float64_array(msg: Float64MultiArray) -> np.ndarray:
    """float64 array (a copy) of a Float64MultiArray's data."""
    return np.array(msg.data, dtype=np.float64)


def interrupt_on_sigint() -> None:
    """Make SIGINT raise KeyboardInterrupt, even if the launcher ignored it.

    A non-interactive shell starts background jobs (``cmd &``, ``nohup``) with SIGINT ignored,
    the ignore survives exec, and Python then installs no handler: the node would not stop on
    the SIGINT of ``ros2 launch`` or the HIL runner and would be killed 5 s later.
    """
    signal.signal(signal.SIGINT, signal.default_int_handler)


def subscribe_joint_targets(node, topic: str, sim) -> None:
    """A joint robot's twin in the bridge node: Float64MultiArray position targets [rad] on
    topic go to sim.set_targets (its driver's joint order) at their arrival time; a refused
    one is reported as such."""
    def on_targets(msg: Float64MultiArray, info: dict) -> None:
        now_s = arrival_steady_s(info)
        targets = from_float64_array(msg)
        node.apply_command(lambda t_s: sim.set_targets(targets, t_s), now_s,
                           'non-finite or mis-sized targets')
    node.subscribe_command(Float64MultiArray, topic, on_targets)
