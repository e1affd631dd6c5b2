"""Launch files and parameter files: everything they name exists and every parameter is declared.

`ros2 launch` is not installable from PyPI, so the launch files are parsed, not run: each
launch_ros Node(...) must name an installed sim2real executable, parameter files that exist
and are installed under share/sim2real, and only parameters its node declares. The generic
files (policy.launch.py, hil.launch.py) take robot:=NAME and read config/NAME.yaml: they are
checked against every robot's file; a robot's own launch files are thin includes of them.
"""

import ast
import importlib
from pathlib import Path

import pytest
import yaml

from sim2real.deploy import policy_node, sim_bridge
from tests.test_packaging import run_setup

ROOT = Path(__file__).resolve().parents[2]
LAUNCH_FILES = sorted((ROOT / 'launch').glob('*.launch.py'))
GENERIC = ('policy.launch.py', 'hil.launch.py')
ROBOT_CONFIGS = sorted((ROOT / 'config').glob('*.yaml'))
DECLARED = {
    'policy_node': lambda robot: set(policy_node.declared_parameters(robot)),
    'sim_bridge': lambda robot: set(sim_bridge.declared_parameters(robot)),
}


def _node_calls(path: Path) -> list[ast.Call]:
    """Every Node(...) call in a launch file."""
    tree = ast.parse(path.read_text(encoding='utf-8'))
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call)
            and getattr(n.func, 'id', None) == 'Node']


def _kwarg(call: ast.Call, name: str):
    """The value node of keyword `name` in a call."""
    return next(k.value for k in call.keywords if k.arg == name)


def _robot_file(element: ast.AST) -> bool:
    """Whether a path element is [LaunchConfiguration('robot'), '.yaml']."""
    return (isinstance(element, ast.List) and len(element.elts) == 2
            and getattr(element.elts[0].func, 'id', '') == 'LaunchConfiguration'
            and element.elts[0].args[0].value == 'robot' and element.elts[1].value == '.yaml')


def _param_files(call: ast.Call) -> list[Path]:
    """Parameter files named as PathJoinSubstitution([FindPackageShare(..), dir, file]); a
    file named by the robot argument stands for every robot's config/<robot>.yaml."""
    tree = ast.parse(ast.unparse(call))
    files = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, 'id', '') == 'PathJoinSubstitution':
            elements = node.args[0].elts
            parts = [e.value for e in elements if isinstance(e, ast.Constant)]
            if any(_robot_file(e) for e in elements):
                assert parts == ['config']
                files.extend(ROBOT_CONFIGS)
            else:
                files.append(ROOT.joinpath(*parts))
    return files


def _launch_files_with_params(path: Path) -> list[Path]:
    """Parameter files a launch file defaults to (its PathJoinSubstitutions)."""
    return _param_files(ast.parse(path.read_text(encoding='utf-8')))


def test_there_are_launch_files_for_the_robot_and_the_hil_bring_up():
    """launch/ holds the generic files and, per robot config, its thin includes."""
    names = {p.name for p in LAUNCH_FILES}
    assert set(GENERIC) <= names
    robots = [f.stem for f in ROBOT_CONFIGS]
    assert robots == ['hand', 'quadrotor', 'quadruped']
    for robot in robots:
        assert {f'{robot}.launch.py', f'hil_{robot}.launch.py'} <= names


@pytest.mark.parametrize('path', [p for p in LAUNCH_FILES if p.name not in GENERIC],
                         ids=lambda p: p.name)
def test_a_robot_launch_file_includes_a_generic_one_with_its_robot(path):
    """quadruped.launch.py = policy.launch.py robot:=quadruped; hil_X = hil.launch.py."""
    tree = ast.parse(path.read_text(encoding='utf-8'))
    assert _node_calls(path) == []
    joins = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
             and getattr(n.func, 'id', '') == 'PathJoinSubstitution']
    assert len(joins) == 1
    parts = [e.value for e in joins[0].args[0].elts if isinstance(e, ast.Constant)]
    robot = path.name.removesuffix('.launch.py').removeprefix('hil_')
    expected = 'hil.launch.py' if path.name.startswith('hil_') else 'policy.launch.py'
    assert parts == ['launch', expected]
    arguments = [n for n in ast.walk(tree) if isinstance(n, ast.Dict)]
    assert [(k.value, v.value) for d in arguments for k, v in zip(d.keys, d.values)] == [
        ('robot', robot)]
    assert (ROOT / 'config' / f'{robot}.yaml').is_file()


@pytest.mark.parametrize('path', [ROOT / 'launch' / name for name in GENERIC],
                         ids=lambda p: p.name)
def test_launch_file_names_existing_executables_files_and_declared_parameters(path):
    """Each Node names a sim2real console script, existing parameter files, declared params."""
    scripts = dict(s.replace(' ', '').split('=') for s in
                   run_setup(ROOT)['entry_points']['console_scripts'])
    calls = _node_calls(path)
    assert calls, f'{path.name} starts no node'
    param_files = _launch_files_with_params(path)
    assert param_files and all(f.is_file() for f in param_files), param_files
    for call in calls:
        assert _kwarg(call, 'package').value == 'sim2real'
        executable = _kwarg(call, 'executable').value
        assert executable in scripts, f'{executable} is not a console script'
        module, func = scripts[executable].split(':')
        assert callable(getattr(importlib.import_module(module), func))
        name = _kwarg(call, 'name').value
        for f in param_files:
            section = yaml.safe_load(f.read_text())[name]['ros__parameters']
            robot = section.get('robot', 'quadrotor')
            declared = DECLARED[name](robot)
            assert set(section) <= declared, set(section) - declared
            inline = [k.value for d in ast.walk(_kwarg(call, 'parameters'))
                      if isinstance(d, ast.Dict) for k in d.keys]
            assert set(inline) <= declared, set(inline) - declared
