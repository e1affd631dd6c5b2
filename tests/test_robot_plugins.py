"""Robots are plug-ins: shared deploy, HIL and CLI modules never name one.

Every registered robot's name is searched in the code of those modules (identifiers and
string literals; docstrings, which explain, are left out). A robot's own folder
(deploy/robots/<robot>/) and the registry naming it are where such names belong.
"""

import ast
from pathlib import Path
import re

import pytest

from sim2real.deploy.robots import ROBOTS

ROOT = Path(__file__).resolve().parents[1]
SHARED = [p for folder in ('deploy', 'sim2real/hil', 'sim2real/cli')
          for p in sorted((ROOT / folder).rglob('*.py')) if 'robots' not in p.parts]


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the docstring constants of a module, its classes, functions and attributes."""
    out = set()
    for node in ast.walk(tree):
        body = getattr(node, 'body', None)
        if not isinstance(body, list):
            continue
        for i, stmt in enumerate(body):
            is_text = (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
                       and isinstance(stmt.value.value, str))
            if is_text and (i == 0 or isinstance(body[i - 1], (ast.Assign, ast.AnnAssign))):
                out.add(id(stmt.value))
    return out


def words(text: str) -> list[str]:
    """Lower-case words of an identifier or string: split at non-letters and camelCase."""
    return [w.lower() for w in re.findall(r'[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+', text)]


def names_robot(text: str, robot: str) -> bool:
    """True when text holds the robot's name as whole words (a plural s allowed): 'hand' is
    in hand_profile, HandRuntime and 'hand-rotate', not in SignalHandlerOptions or handle."""
    pattern = r'\b' + ' '.join(words(robot)) + r's?\b'
    return re.search(pattern, ' '.join(words(text))) is not None


def robot_names_in(source: str, robots) -> list[tuple[int, str]]:
    """(line, text) of every identifier or non-docstring string literal naming a robot."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = '' if id(node) in docs else node.value
        elif isinstance(node, ast.Name):
            text = node.id
        elif isinstance(node, ast.Attribute):
            text = node.attr
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            text = node.name
        else:
            continue
        if any(names_robot(text, robot) for robot in robots):
            found.append((node.lineno, text))
    return found


def test_shared_deploy_hil_and_cli_modules_name_no_robot():
    assert len(SHARED) > 20 and set(ROBOTS) >= {'hand', 'quadrotor', 'quadruped'}
    named = {str(p.relative_to(ROOT)): robot_names_in(p.read_text(), ROBOTS) for p in SHARED}
    assert {k: v for k, v in named.items() if v} == {}


def test_the_check_finds_a_branch_on_a_robot_name():
    planted = ('"""Docstrings may say quadrotor."""\n'
               'def f(p):\n'
               '    """Nor here: quadruped."""\n'
               '    if p.robot == "quadruped":\n'
               '        return quadrotor_profile\n')
    assert robot_names_in(planted, ('quadrotor', 'quadruped')) == [
        (4, 'quadruped'), (5, 'quadrotor_profile')]


def test_a_robot_name_is_matched_as_whole_words():
    planted = ('import signal\n'
               'def f(p, default_int_handler):\n'
               '    handle = signal.SignalHandlerOptions\n'
               '    if p.task == "hand-rotate":\n'
               '        return HandRuntime, hand_profile, toy_arms\n')
    assert robot_names_in(planted, ('hand', 'toy_arm')) == [
        (4, 'hand-rotate'), (5, 'HandRuntime'), (5, 'hand_profile'), (5, 'toy_arms')]


@pytest.mark.parametrize('robot', ['hand', 'quadrotor', 'quadruped'])
def test_every_robot_folder_has_each_side(robot):
    """Each registered robot's folder gives the runtime entry (its params class a dataclass
    with a robot field), the ROS I/O and bridge I/O classes, the bridge twin (streams, whose
    faults the bridge accepts) and the HIL profile (fault cases of its own streams)."""
    import dataclasses

    from sim2real.deploy.bridge.params import bridge_of, declared_parameters, fault_names
    from sim2real.deploy.robots import bridge_io_of, robot_names, ros_io_of, runtime_of
    from sim2real.hil.robot import hil_of
    from sim2real.hil.runner import load_sections, params_path

    assert robot in robot_names()
    runtime = runtime_of(robot)
    assert dataclasses.is_dataclass(runtime.params_cls)
    assert 'robot' in {f.name for f in dataclasses.fields(runtime.params_cls)}
    assert runtime.command_interfaces and callable(runtime.make_profile)
    assert callable(ros_io_of(robot)) and callable(bridge_io_of(robot))
    bridge = bridge_of(robot)
    assert bridge.streams and declared_parameters(robot)['robot'] == robot
    node, bridge_cfg = load_sections(params_path(robot))
    assert node['robot'] == bridge_cfg['robot'] == robot
    cases = hil_of(robot).faults(node, bridge_cfg)
    bridge_faults = [c for c in cases.values() if c.name in fault_names(robot)]
    assert cases and len(bridge_faults) >= len(cases) - 1   # at most one of the monitor's
