"""The anchor of the deploy-loop bench: a plain rclpy policy node, and the sensor load source.

``python -m bench.plain_node node --policy P --rate-hz 500 --out stats.json``: the policy
node as most people write it: a MultiThreadedExecutor (default callback groups), odom and imu
subscriptions that keep the latest message, a create_timer at rate_hz whose callback builds
the observation with numpy, runs the ONNX policy on onnxruntime (1 intra-op / 1 inter-op
thread) and publishes a geometry_msgs/Twist on ``cmd_vel_legacy``. It times its own ticks
with time.monotonic into LoopStats and writes ``LoopStats.summary()`` to --out on SIGINT.
Its ``~/enable`` (std_srvs/SetBool) only restarts the statistics, so that the bench measures
the same window on both nodes. ``--executor single``: the same node on a SingleThreadedExecutor
(the bench's control).

``python -m bench.plain_node load --rate-hz 500 --out load.json``: publishes
nav_msgs/Odometry on ``odom`` and sensor_msgs/Imu on ``imu`` at rate_hz each (sensor-data
QoS; a vehicle hovering still at [0, 0, 1.5] m, stamps advancing) and writes the achieved
rates to --out on SIGINT.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
import signal
import time

from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
import numpy as np
import onnxruntime as ort
import rclpy
from rclpy.executors import (ExternalShutdownException, MultiThreadedExecutor,
                             SingleThreadedExecutor)
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data
from rclpy.signals import SignalHandlerOptions
from sensor_msgs.msg import Imu
from std_srvs.srv import SetBool

from sim2real import terms
from sim2real.contract import CONTRACT_KEY
from sim2real.deploy.robots.quadrotor.cmd_vel_legacy import THRUST_MAPS, to_cmd_vel_legacy
from sim2real.deploy.loop_stats import LoopStats

HOVER_POS_M = (0.0, 0.0, 1.5)
"""Position the load source reports, and the anchor's hover target [m; world]."""
GRAVITY_M_S2 = 9.81


def quat_to_rotmat(w: float, x: float, y: float, z: float) -> np.ndarray:
    """Rotation matrix [world <- body] of a unit quaternion (w, x, y, z)."""
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


class PlainPolicyNode(Node):
    """Latest-message subscriptions, a timer that runs the ONNX policy, a Twist publisher."""

    def __init__(self, policy_path: str, rate_hz: float):
        """Load the policy and its action scales; wire topics and the timer."""
        super().__init__('plain_policy_node')
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(policy_path, options,
                                            providers=['CPUExecutionProvider'])
        self.input_name = self.session.get_inputs()[0].name
        meta = self.session.get_modelmeta().custom_metadata_map
        contract = json.loads(meta[CONTRACT_KEY])
        action = contract['action']['params']
        terms_ = {t['name']: t for t in contract['observations']}
        self.hover_thrust_n = action['hover_thrust_n']
        self.max_thrust_n = action['max_collective_thrust_n']
        self.thrust_map = THRUST_MAPS['battery_compensated']
        self.max_rate_rad_s = action['max_body_rate_rad_s']
        self.target_m = np.array(HOVER_POS_M)
        # each term's values of this and the last ticks, newest first, as the contract sizes
        # them: the last N outputs (action_history's size / 4), H ticks of each velocity
        self.last_actions = np.zeros((terms_['action_history']['size'] // 4, 4))
        self.lin_vel_hist = np.zeros((terms_['lin_vel_b']['history_length'], 3))
        self.ang_vel_hist = np.zeros((terms_['ang_vel_b']['history_length'], 3))
        self.odom: Odometry | None = None
        self.imu: Imu | None = None
        self.stats = LoopStats(rate_hz)
        self.create_subscription(Odometry, 'odom', self.on_odom, qos_profile_sensor_data)
        self.create_subscription(Imu, 'imu', self.on_imu, qos_profile_sensor_data)
        self.pub = self.create_publisher(Twist, 'cmd_vel_legacy', 10)
        self.create_service(SetBool, '~/enable', self.on_enable)
        self.create_timer(1.0 / rate_hz, self.on_tick)

    def on_odom(self, msg: Odometry) -> None:
        """Keep the latest odometry."""
        self.odom = msg

    def on_imu(self, msg: Imu) -> None:
        """Keep the latest IMU message."""
        self.imu = msg

    def on_enable(self, request: SetBool.Request, response: SetBool.Response):
        """Restart the loop statistics (the bench's measurement window starts)."""
        self.stats.reset()
        response.success, response.message = True, 'statistics restarted'
        return response

    def observation(self) -> np.ndarray:
        """(1, N) float32: position error, rotation matrix, body velocity and gyro of the
        last ticks (newest first), the last actions."""
        pose, twist = self.odom.pose.pose, self.odom.twist.twist
        pos_m = np.array([pose.position.x, pose.position.y, pose.position.z])
        q = pose.orientation
        lin_vel = np.array([twist.linear.x, twist.linear.y, twist.linear.z])
        gyro = self.imu.angular_velocity
        ang_vel = np.array([gyro.x, gyro.y, gyro.z])
        self.lin_vel_hist = np.vstack([np.clip(0.5 * lin_vel, -5.0, 5.0),
                                       self.lin_vel_hist[:-1]])
        self.ang_vel_hist = np.vstack([np.clip(0.25 * ang_vel, -10.0, 10.0),
                                       self.ang_vel_hist[:-1]])
        obs = np.concatenate([
            np.clip(self.target_m - pos_m, -2.0, 2.0),
            quat_to_rotmat(q.w, q.x, q.y, q.z).reshape(-1),
            self.lin_vel_hist.reshape(-1), self.ang_vel_hist.reshape(-1),
            self.last_actions.reshape(-1)])
        return obs.astype(np.float32)[None, :]

    def on_tick(self) -> None:
        """Observation, policy, Twist; the tick time and the inference time into the stats."""
        now_s = time.monotonic()
        if self.odom is None or self.imu is None:
            self.stats.tick(now_s)
            return
        obs = self.observation()
        start = time.perf_counter()
        out = self.session.run(None, {self.input_name: obs})[0]
        inference_s = time.perf_counter() - start
        action = np.clip(out[0].astype(np.float64), -1.0, 1.0)
        self.last_actions = np.vstack([action, self.last_actions[:-1]])
        thrust_n = float(terms.collective_thrust_n(action[0:1], self.hover_thrust_n,
                                                   self.max_thrust_n)[0])
        lx, ly, lz, az = to_cmd_vel_legacy(thrust_n, action[1:] * self.max_rate_rad_s,
                                           self.thrust_map)
        msg = Twist()
        msg.linear.x, msg.linear.y, msg.linear.z, msg.angular.z = lx, ly, lz, az
        self.pub.publish(msg)
        self.stats.tick(now_s, inference_s)


def run_node(args: argparse.Namespace) -> None:
    """Spin the anchor until SIGINT (MultiThreadedExecutor: one thread per usable CPU)."""
    node = PlainPolicyNode(args.policy, args.rate_hz)
    executor = MultiThreadedExecutor() if args.executor == 'multi' else SingleThreadedExecutor()
    executor.add_node(node)
    try:
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        executor.shutdown()
        threads = len(os.sched_getaffinity(0)) if args.executor == 'multi' else 1
        summary = dict(node.stats.summary(), executor=type(executor).__name__,
                       executor_threads=threads)
        Path(args.out).write_text(json.dumps(summary, indent=2))
        node.destroy_node()


def sensor_messages() -> tuple[Odometry, Imu]:
    """Odometry of a vehicle hovering still at HOVER_POS_M, and the matching IMU message."""
    odom = Odometry()
    odom.header.frame_id, odom.child_frame_id = 'world', 'base_link'
    odom.pose.pose.position.x, odom.pose.pose.position.y, odom.pose.pose.position.z = (
        HOVER_POS_M)
    odom.pose.pose.orientation.w = 1.0
    imu = Imu()
    imu.header.frame_id = 'base_link'
    imu.orientation_covariance[0] = -1.0
    imu.linear_acceleration.z = GRAVITY_M_S2
    return odom, imu


def run_load(args: argparse.Namespace) -> None:
    """Publish odom and imu at rate_hz each, on absolute deadlines, until SIGINT."""
    node = Node('deploy_loop_load')
    odom_pub = node.create_publisher(Odometry, 'odom', qos_profile_sensor_data)
    imu_pub = node.create_publisher(Imu, 'imu', qos_profile_sensor_data)
    odom, imu = sensor_messages()
    period_s = 1.0 / args.rate_hz
    start_s = next_s = last_s = time.monotonic()
    sent, max_gap_s = 0, 0.0
    try:
        while True:
            stamp = node.get_clock().now().to_msg()
            odom.header.stamp = imu.header.stamp = stamp
            odom_pub.publish(odom)
            imu_pub.publish(imu)
            sent += 1
            now_s = time.monotonic()
            max_gap_s, last_s = max(max_gap_s, now_s - last_s), now_s
            next_s += period_s
            time.sleep(max(0.0, next_s - time.monotonic()))
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        duration_s = time.monotonic() - start_s
        summary = {'rate_hz_each': sent / duration_s, 'messages_per_s': 2 * sent / duration_s,
                   'odom_sent': sent, 'imu_sent': sent, 'duration_s': duration_s,
                   'max_publish_gap_ms': max_gap_s * 1e3}
        Path(args.out).write_text(json.dumps(summary, indent=2))
        node.destroy_node()


def main() -> None:
    """Entry point: `node` (the anchor) or `load` (the sensor load source)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('role', choices=['node', 'load'])
    parser.add_argument('--rate-hz', type=float, default=500.0,
                        help='timer rate (node) or rate of each stream (load) [Hz]')
    parser.add_argument('--policy', help='ONNX policy (node)')
    parser.add_argument('--out', required=True, help='summary JSON written at exit')
    parser.add_argument('--executor', choices=['multi', 'single'], default='multi',
                        help='node: the executor (the bench uses multi; single for checks)')
    args, _ = parser.parse_known_args()
    # Python's own SIGINT handler (KeyboardInterrupt in the main thread): the loops end between
    # two ticks instead of publishing into a context that rclpy's handler already shut down;
    # installed explicitly because a parent started in the background may ignore SIGINT
    signal.signal(signal.SIGINT, signal.default_int_handler)
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    try:
        if args.role == 'node':
            run_node(args)
        else:
            run_load(args)
    finally:
        rclpy.try_shutdown()


if __name__ == '__main__':
    main()
