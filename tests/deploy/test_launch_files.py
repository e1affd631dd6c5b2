"""Launch files and parameter files: everything they name exists and every parameter is declared.

`ros2 launch` is not installable from PyPI, so the launch files are parsed, not run: each
launch_ros Node(...) must name an installed sim2real executable, parameter files that exist
and are installed under share/sim2real, and only parameters its node declares.
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


def _param_files(call: ast.Call) -> list[Path]:
    """Parameter files named as PathJoinSubstitution([FindPackageShare(..), dir, file])."""
    tree = ast.parse(ast.unparse(call))
    files = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, 'id', '') == 'PathJoinSubstitution':
            parts = [e.value for e in node.args[0].elts if isinstance(e, ast.Constant)]
            files.append(ROOT.joinpath(*parts))
    return files


def _launch_files_with_params(path: Path) -> list[Path]:
    """Parameter files a launch file defaults to (its PathJoinSubstitutions)."""
    return _param_files(ast.parse(path.read_text(encoding='utf-8')))


def test_there_are_launch_files_for_the_robot_and_the_hil_bring_up():
    """launch/ holds quadrotor.launch.py and hil_quadrotor.launch.py."""
    names = {p.name for p in LAUNCH_FILES}
    assert {'quadrotor.launch.py', 'hil_quadrotor.launch.py'} <= names


@pytest.mark.parametrize('path', LAUNCH_FILES, ids=lambda p: p.name)
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
