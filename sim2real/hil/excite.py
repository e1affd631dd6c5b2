"""`sim2real excite ROBOT`: the identification run's operator commands, sent to the policy
node of a real robot (the same schedule `sim2real hil ROBOT --scenario identify` sends the
simulated one), while its flight recorder logs what the robot does.

The commands go to the topic the node's parameter file names for the robot's operator
stream (``Excitation.topic_param``), at the excitation's rate; an interrupt sends the
schedule's last command (the hover target, a standstill) before it stops.
"""

from __future__ import annotations

import logging
from pathlib import Path
import time

import yaml

from sim2real.deploy import ros_msgs
from sim2real.deploy.robots import robot_module
from sim2real.deploy.runtime.excitation import Excitation
from sim2real.hil.identify import play

log = logging.getLogger(__name__)
WAIT_S = 5.0
"""Longest wait for the node's subscription to the operator topic [s]."""


def node_params(robot: str, path: Path, node_name: str = 'policy_node') -> dict:
    """The node's parameters: its ros__parameters in a ROS 2 parameter file over the
    robot's defaults (a file may leave topics at theirs); ValueError when the file has no
    such section."""
    import dataclasses
    raw = yaml.safe_load(Path(path).read_text(encoding='utf-8')) or {}
    try:
        given = dict(raw[node_name]['ros__parameters'])
    except (KeyError, TypeError):
        raise ValueError(f'{path}: no {node_name} ros__parameters') from None
    defaults = dataclasses.asdict(robot_module(robot, 'runtime').RUNTIME.params_cls())
    return {**defaults, **given}


def _message(excitation: Excitation):
    """(message type, make(values, stamp_s)) of the excitation's stream."""
    from geometry_msgs.msg import PointStamped, Twist
    makers = {'PointStamped': (PointStamped, ros_msgs.make_point_stamped),
              'Twist': (Twist, lambda values, _stamp_s: ros_msgs.make_twist(*values))}
    return makers[excitation.message]


def plan(robot: str, params: dict) -> tuple[Excitation, dict]:
    """The robot's excitation for the node parameters, and what the run will do (robot,
    what, duration, topic, message, commands)."""
    excitation = robot_module(robot, 'excitation').excitation(params)
    topic = '/' + params[excitation.topic_param].lstrip('/') if excitation.topic_param else ''
    return excitation, {'robot': robot, 'what': excitation.what,
                        'duration_s': excitation.duration_s, 'topic': topic,
                        'message': excitation.message, 'commands': len(excitation.times_s)}


def excite(robot: str, params: dict, dry_run: bool = False, wait_s: float = WAIT_S) -> dict:
    """Send the robot's identification commands to its node (after the node has subscribed
    to their topic, at most wait_s); the plan with the commands sent and the time taken."""
    excitation, summary = plan(robot, params)
    if dry_run or not excitation.message:
        return {**summary, 'sent': 0}
    log.info('excite %s: %s (%.0f s) on %s', robot, excitation.what, excitation.duration_s,
             summary['topic'])
    return {**summary, **send(excitation, summary['topic'], wait_s)}


def send(excitation: Excitation, topic: str, wait_s: float = WAIT_S) -> dict:
    """Publish the excitation's commands on topic on schedule, once something subscribes
    (ValueError after wait_s without); the commands sent and the time taken [s]."""
    import rclpy
    msg_type, make = _message(excitation)
    rclpy.init()
    node = rclpy.create_node('sim2real_excite')
    publisher = node.create_publisher(msg_type, topic, 10)
    sent = 0

    def publish(values) -> None:
        nonlocal sent
        publisher.publish(make(values, node.get_clock().now().nanoseconds * 1e-9))
        sent += 1
    try:
        deadline_s = time.monotonic() + wait_s
        while publisher.get_subscription_count() == 0:
            if time.monotonic() > deadline_s:
                raise ValueError(f'nothing subscribes to {topic} after {wait_s:g} s: is the '
                                 'policy node running, on this ROS_DOMAIN_ID?')
            time.sleep(0.05)
        try:
            t0_s, t1_s = play(excitation, publish)
        except KeyboardInterrupt:
            publish(excitation.values[-1])   # the hover target, a standstill
            log.warning('interrupted after %d commands: sent the last one (%s) and stopped',
                        sent, excitation.values[-1])
            raise
        return {'sent': sent, 'took_s': round(t1_s - t0_s, 2)}
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
