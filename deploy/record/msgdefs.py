"""ROS 2 message definitions as MCAP schemas: the .msg text of a type followed by that of
every type it uses, separated as rosbag2 separates them, read from the installed interfaces."""

from __future__ import annotations

import functools
import importlib
import os
from pathlib import Path
import sys

SEPARATOR = '=' * 80
"""The line between definitions in a concatenated ros2msg schema."""


def _prefixes(package: str) -> list[Path]:
    """Install prefixes that may hold share/<package>: the ament prefixes, this Python's,
    and the one the package's Python module was installed under."""
    prefixes = [Path(p) for p in os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep) if p]
    prefixes.append(Path(sys.prefix))
    try:
        module = importlib.import_module(package)
        prefixes.append(Path(module.__file__).resolve().parents[4])   # lib/pythonX/site-pkgs
    except (ImportError, TypeError, IndexError):
        pass
    return prefixes


def msg_file(package: str, name: str) -> Path:
    """share/<package>/msg/<name>.msg; FileNotFoundError naming the places searched."""
    tried = []
    for prefix in _prefixes(package):
        path = prefix / 'share' / package / 'msg' / f'{name}.msg'
        if path.is_file():
            return path
        tried.append(str(path))
    raise FileNotFoundError(f'no definition of {package}/msg/{name}: tried {", ".join(tried)}')


@functools.lru_cache(maxsize=None)
def _definition(package: str, name: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    """(.msg text, the (package, name) of each non-primitive field type)."""
    from rosidl_adapter.parser import parse_message_string
    text = msg_file(package, name).read_text(encoding='utf-8')
    spec = parse_message_string(package, name, text)
    used = tuple((f.type.pkg_name, f.type.type) for f in spec.fields
                 if not f.type.is_primitive_type())
    return text, used


def split_type(ros_type: str) -> tuple[str, str]:
    """'sensor_msgs/msg/Imu' or 'sensor_msgs/Imu' -> ('sensor_msgs', 'Imu')."""
    parts = ros_type.split('/')
    if len(parts) == 3 and parts[1] == 'msg':
        return parts[0], parts[2]
    if len(parts) == 2:
        return parts[0], parts[1]
    raise ValueError(f'{ros_type!r} is not a ROS message type (package/msg/Name)')


@functools.lru_cache(maxsize=None)
def concatenated(ros_type: str) -> str:
    """The schema text of a type: its .msg, then every type it uses once, depth first,
    each after the separator and an 'MSG: package/Name' line."""
    package, name = split_type(ros_type)
    text, used = _definition(package, name)
    parts, seen, todo = [text.rstrip('\n')], {(package, name)}, list(used)
    while todo:
        dep = todo.pop(0)
        if dep in seen:
            continue
        seen.add(dep)
        dep_text, dep_used = _definition(*dep)
        parts.append(f'{SEPARATOR}\nMSG: {dep[0]}/{dep[1]}\n{dep_text.rstrip(chr(10))}')
        todo.extend(dep_used)
    return '\n'.join(parts) + '\n'


def type_name(message_class) -> str:
    """'sensor_msgs/msg/Imu' of a generated ROS 2 message class."""
    module = message_class.__module__.split('.')[0]
    return f'{module}/msg/{message_class.__name__}'
