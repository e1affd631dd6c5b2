"""The package's layers, read from its source (AST): imports go down the table, never in a cycle.

Every import counts, at module level or inside a function: a lazy import still ties the
layers together. Importing a module's own parent package is implicit in Python and not an
edge. The table is docs/architecture.md's; a new top-level module must be given a
place in it.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = {'sim2real': ROOT / 'sim2real', 'sim2real.tasks': ROOT / 'tasks',
           'sim2real.deploy': ROOT / 'deploy'}
"""Import name -> folder (setup.py's package_dir)."""

BASE = ('sim2real', 'sim2real.contract', 'sim2real.contract_digest', 'sim2real.terms',
        'sim2real.urdf', 'sim2real.assets', 'sim2real.verdict', 'sim2real.device',
        'sim2real.algo_cfg', 'sim2real.overrides', 'sim2real.onnx_io', 'sim2real.plugins',
        'sim2real.atomic')
"""Modules every layer may use: the contract, shared maths, configs, file locations, the
plug-in loader, whole-file writes."""

LAYERS = {
    'sim2real.sim': 'sim',
    'sim2real.mdp': 'mdp',
    'sim2real.tasks': 'tasks',
    'sim2real.rl': 'rl',
    'sim2real.export': 'export',
    'sim2real.training': 'app',
    'sim2real.policy_io': 'app',
    'sim2real.evaluate': 'app',
    'sim2real.render': 'app',
    'sim2real.robustness': 'app',
    'sim2real.robustness_design': 'app',
    'sim2real.robustness_report': 'app',
    'sim2real.focus': 'app',
    'sim2real.interop': 'interop',
    'sim2real.isaaclab': 'isaaclab',
    'sim2real.deploy.runtime': 'deploy.runtime',
    'sim2real.deploy.robots': 'deploy.runtime',
    'sim2real.deploy.ros_io': 'deploy',
    'sim2real.deploy.bridge': 'deploy.bridge',
    'sim2real.deploy': 'deploy',
    'sim2real.hil': 'hil',
    'sim2real.sysid': 'sysid',
    'sim2real.cli': 'cli',
}
"""Module prefix -> layer (the longest prefix wins); a robot's deploy folder is split by
ROBOT_PARTS."""

ROBOT_PARTS = {'params': 'deploy.runtime', 'profile': 'deploy.runtime',
               'runtime': 'deploy.runtime', 'landing': 'deploy.runtime',
               'cmd_vel_legacy': 'deploy.runtime',
               'twist_check': 'deploy.runtime', 'bridge_sim': 'deploy.bridge',
               'bridge': 'deploy.bridge', 'faults': 'deploy.bridge', 'variant': 'deploy.bridge',
               'excitation': 'deploy.runtime', 'ros_io': 'deploy',
               'bridge_io': 'deploy', 'hil': 'hil', 'report': 'deploy'}
"""Module of a robot's deploy folder (sim2real.deploy.robots.<robot>.<module>) -> its layer:
one folder per robot, each module on the side that runs it."""

ALLOWED = {
    'base': (),
    'isaaclab': ('base',),
    'sim': ('base',),
    'mdp': ('base', 'sim'),
    'tasks': ('base', 'sim', 'mdp', 'isaaclab'),
    'rl': ('base', 'sim'),
    'export': ('base', 'mdp', 'rl'),
    'app': ('base', 'sim', 'mdp', 'tasks', 'rl', 'export'),
    'interop': ('base', 'sim', 'mdp', 'tasks', 'rl', 'export', 'app', 'isaaclab'),
    'deploy.runtime': ('base',),
    'deploy.bridge': ('base', 'sim', 'deploy.runtime'),
    'deploy': ('base', 'deploy.runtime', 'deploy.bridge'),
    'hil': ('base', 'deploy.runtime', 'deploy.bridge', 'deploy'),
    'sysid': ('base', 'sim', 'mdp', 'tasks', 'deploy.runtime', 'deploy.bridge', 'deploy'),
    'cli': ('base', 'sim', 'mdp', 'tasks', 'rl', 'export', 'app', 'interop',
            'deploy.runtime', 'deploy.bridge', 'deploy', 'hil', 'sysid'),
}
"""Layer -> the layers it may import besides its own. Training (sim, mdp, tasks, rl, export,
app; interop reads other stacks' runs into it) and deployment (deploy.runtime,
deploy.bridge, deploy ROS shells, hil) share only the base; `tasks` and `rl` do not know
each other (training defaults are `algo_cfg` data); `isaaclab` runs in an Isaac Lab venv
(no MuJoCo 4) and uses only the base; a robot's Isaac Lab env builder (in `tasks`) uses it."""


def modules() -> dict[str, Path]:
    """Every module of the package: import name -> file."""
    out = {}
    for base, folder in SOURCES.items():
        for path in sorted(folder.rglob('*.py')):
            parts = [p for p in path.relative_to(folder).with_suffix('').parts
                     if p != '__init__']
            out['.'.join([base, *parts])] = path
    return out


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package's modules that module name imports (anywhere in its body)."""
    out = set()
    package = name.split('.') if path.name == '__init__.py' else name.split('.')[:-1]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith('sim2real'))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parent = package[:len(package) - node.level + 1]
                source = '.'.join(parent + ([node.module] if node.module else []))
            else:
                source = node.module or ''
            if not source.startswith('sim2real'):
                continue
            subs = {f'{source}.{a.name}' for a in node.names} & set(known)
            out.update(subs)
            if len(subs) < len(node.names):
                out.add(source)
    return {m for m in out if m != name and not name.startswith(m + '.')}


def layer_of(name: str) -> str | None:
    """The layer of a module; None for a top-level module given no place."""
    if name in BASE:
        return 'base'
    parts = name.split('.')
    if parts[:3] == ['sim2real', 'deploy', 'robots'] and len(parts) == 5:
        return ROBOT_PARTS.get(parts[4])
    for prefix in sorted(LAYERS, key=len, reverse=True):
        if name == prefix or name.startswith(prefix + '.'):
            return LAYERS[prefix]
    return None


@pytest.fixture(scope='module')
def graph():
    """Module -> imported modules of the package."""
    known = modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def test_every_module_has_a_layer(graph):
    assert len(graph) > 100
    assert [m for m in graph if layer_of(m) is None] == []


def test_imports_go_down(graph):
    wrong = []
    for name, targets in sorted(graph.items()):
        mine = layer_of(name)
        for target in sorted(targets):
            theirs = layer_of(target) or 'base'
            if theirs != mine and theirs not in ALLOWED[mine]:
                wrong.append(f'{name} ({mine}) imports {target} ({theirs})')
    assert wrong == []


def test_no_import_cycle(graph):
    cycles = strongly_connected(graph)
    assert [sorted(c) for c in cycles if len(c) > 1] == []


def test_a_planted_upward_import_and_cycle_are_found(tmp_path):
    known = {'sim2real.sim.a': tmp_path / 'a.py', 'sim2real.sim.b': tmp_path / 'b.py',
             'sim2real.rl.c': tmp_path / 'c.py'}
    known['sim2real.sim.a'].write_text('def f():\n    from sim2real.sim import b\n')
    known['sim2real.sim.b'].write_text('from sim2real.sim.a import f\nimport sim2real.rl.c\n')
    known['sim2real.rl.c'].write_text('x = 1\n')
    graph = {n: imports(n, p, known) for n, p in known.items()}
    assert graph['sim2real.sim.a'] == {'sim2real.sim.b'}
    assert graph['sim2real.sim.b'] == {'sim2real.sim.a', 'sim2real.rl.c'}
    assert layer_of('sim2real.rl.c') not in ALLOWED[layer_of('sim2real.sim.b')]
    assert [sorted(c) for c in strongly_connected(graph) if len(c) > 1] == [
        ['sim2real.sim.a', 'sim2real.sim.b']]


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of graph (iterative)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next((c for c in children if c in graph), None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                out.append(component)
    return out
