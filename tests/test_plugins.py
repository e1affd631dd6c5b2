"""Plug-in discovery: packages named in SIM2REAL_PLUGINS or by an installed distribution's
entry point run their hooks once; a broken plug-in is named in the error."""

import os
from pathlib import Path
import subprocess
import sys

import pytest

from sim2real import plugins


@pytest.fixture
def plugin_dir(tmp_path, monkeypatch):
    """A sys.path folder for throwaway plug-in packages; forgets their hooks afterwards."""
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv(plugins.ENV_VAR, raising=False)
    before = set(plugins._done)
    yield tmp_path
    plugins._done.intersection_update(before)
    plugins.entry_point_packages.cache_clear()
    for name in [m for m in sys.modules if m.startswith('demo_plugin')]:
        del sys.modules[name]


def _package(folder, name: str, body: str) -> None:
    """Write package name with __init__ body."""
    (folder / name).mkdir()
    (folder / name / '__init__.py').write_text(body)


HOOKS = """CALLS = []
def register_tasks():
    CALLS.append('tasks')
def register_robots():
    CALLS.append('robots')
"""


def test_env_var_plugins_run_each_hook_once(plugin_dir, monkeypatch):
    """Two runs of each hook call it once; a package without a hook is skipped."""
    _package(plugin_dir, 'demo_plugin_a', HOOKS)
    _package(plugin_dir, 'demo_plugin_b', '')
    monkeypatch.setenv(plugins.ENV_VAR, 'demo_plugin_a, demo_plugin_b,')
    assert plugins.plugin_packages()[-2:] == ['demo_plugin_a', 'demo_plugin_b']
    assert plugins.load_plugins('register_robots') == ['demo_plugin_a']
    assert plugins.load_plugins('register_robots') == []
    assert plugins.load_plugins('register_tasks') == ['demo_plugin_a']
    assert sys.modules['demo_plugin_a'].CALLS == ['robots', 'tasks']


def test_entry_point_plugins_are_found(plugin_dir):
    """A distribution's entry point in group sim2real.plugins (dist-info on sys.path, as pip
    writes it) names the package."""
    _package(plugin_dir, 'demo_plugin_ep', HOOKS)
    info = plugin_dir / 'demo_plugin_ep-1.0.dist-info'
    info.mkdir()
    (info / 'METADATA').write_text('Metadata-Version: 2.1\nName: demo-plugin-ep\nVersion: 1.0\n')
    (info / 'entry_points.txt').write_text('[sim2real.plugins]\ndemo = demo_plugin_ep\n')
    plugins.entry_point_packages.cache_clear()   # read once per process: read again
    assert 'demo_plugin_ep' in plugins.plugin_packages()
    assert 'demo_plugin_ep' in plugins.load_plugins('register_tasks')


def test_broken_plugins_are_named(plugin_dir, monkeypatch):
    """An unimportable package and a failing hook: PluginError naming the package."""
    monkeypatch.setenv(plugins.ENV_VAR, 'demo_plugin_missing')
    with pytest.raises(plugins.PluginError, match='"demo_plugin_missing" .* cannot be imp'):
        plugins.load_plugins('register_tasks')
    _package(plugin_dir, 'demo_plugin_bad', 'def register_robots():\n    raise KeyError(1)\n')
    monkeypatch.setenv(plugins.ENV_VAR, 'demo_plugin_bad')
    for _ in range(2):   # not marked done: the next call fails as loudly
        with pytest.raises(plugins.PluginError, match='demo_plugin_bad.*register_robots.*Key'):
            plugins.load_plugins('register_robots')
    with pytest.raises(ValueError, match='unknown plug-in hook'):
        plugins.load_plugins('register_everything')


def test_a_plugin_may_import_its_own_task_module_first(tmp_path):
    """In a fresh process, `import demo_plugin_t.task` (which imports the task registry)
    before anything else, then get_task: no import cycle, the plug-in's task is found."""
    _package(tmp_path, 'demo_plugin_t', 'def register_tasks():\n'
             '    from demo_plugin_t.task import register\n    register()\n')
    (tmp_path / 'demo_plugin_t' / 'task.py').write_text(
        'from sim2real.tasks.registry import register as add, TaskSpec\n'
        'def register():\n'
        '    add(TaskSpec("demo-task", lambda play=False: None, "a demo"))\n')
    code = ('import demo_plugin_t.task; from sim2real.tasks import get_task, task_names; '
            'print(get_task("demo-task").description, len(task_names()))')
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, SIM2REAL_PLUGINS='demo_plugin_t',
               PYTHONPATH=os.pathsep.join([str(tmp_path), str(root)]))
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                         env=env, timeout=120, cwd=root)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ['a', 'demo', '7']   # the 6 built-in tasks and the demo
