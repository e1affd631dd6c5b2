"""The deploy-side robot registry: robot name -> the folder holding everything of that robot.

A robot's folder `deploy/robots/<robot>/` holds, one module per side: ``params.py`` and
``profile.py`` (node parameters, runtime profile), ``runtime.py`` (``RUNTIME``: ROS-free),
``ros_io.py`` (``ROS_IO``: the policy node's topics), ``bridge_sim.py`` and ``bridge.py``
(``BRIDGE``: its simulated twin, ROS-free), ``bridge_io.py`` (``BRIDGE_IO``: the twin's
topics in the bridge node). Shared modules look a robot up here by name and never branch on
it. Modules are imported when first asked for, so a side loads only what it runs. Robots
outside this package register themselves through their plug-in's ``register_robots()``
(`sim2real.plugins`), run when the registry is first asked for.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from sim2real.plugins import load_plugins

ROBOTS: dict[str, str] = {
    'hand': 'sim2real.deploy.robots.hand',
    'quadrotor': 'sim2real.deploy.robots.quadrotor',
    'quadruped': 'sim2real.deploy.robots.quadruped',
}
"""Robot name -> package of its folder."""


def register_robot(name: str, package: str) -> None:
    """Add a robot whose folder is the importable package `package`."""
    if name in ROBOTS and ROBOTS[name] != package:
        raise ValueError(f'robot "{name}" is already registered as {ROBOTS[name]}')
    ROBOTS[name] = package


def robot_names() -> list[str]:
    """Registered robot names (plug-ins' too), sorted."""
    load_plugins('register_robots')
    return sorted(ROBOTS)


def robot_module(name: str, part: str) -> ModuleType:
    """Module `part` of robot name's folder; KeyError listing the registered robots."""
    if name not in ROBOTS:
        load_plugins('register_robots')
    if name not in ROBOTS:
        raise KeyError(f'"{name}" is not a registered robot; registered: '
                       f'{", ".join(robot_names())} (sim2real.deploy.robots)')
    return importlib.import_module(f'{ROBOTS[name]}.{part}')


def runtime_of(name: str):
    """The RobotRuntime of robot name (its runtime.RUNTIME)."""
    return robot_module(name, 'runtime').RUNTIME


def ros_io_of(name: str):
    """The ROS I/O factory of robot name (its ros_io.ROS_IO: (node, params) -> RobotIo)."""
    return robot_module(name, 'ros_io').ROS_IO


def bridge_io_of(name: str):
    """The bridge node's I/O factory of robot name (its bridge_io.BRIDGE_IO: (node, p, sim))."""
    return robot_module(name, 'bridge_io').BRIDGE_IO
