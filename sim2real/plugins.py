"""Robots from outside this package: plug-in packages that register their tasks and robots.

A plug-in is an importable package (for example a robot's folder on ``PYTHONPATH``, or an
installed distribution) whose ``__init__`` offers one or both hooks:

- ``register_tasks()``: registers its training tasks (``sim2real.tasks.register``);
- ``register_robots()``: registers its deploy-side folder (``sim2real.deploy.robots``).

Plug-ins are found in the entry-point group ``sim2real.plugins`` (an installed
distribution declares ``[project.entry-points."sim2real.plugins"] my_robot = "my_robot"``)
and in the environment variable ``SIM2REAL_PLUGINS`` (comma-separated package names), which
child processes inherit: the HIL run's bridge and policy node find the same robots as the
command that started them. Each hook runs once per process, when its registry is first
asked for (``get_task``, ``task_names``; ``robot_module``, ``robot_names``), never at import:
a plug-in's own modules may import the registries. Hooks import lazily, so a policy node
loads no training code.
"""

from __future__ import annotations

import importlib
import logging
import functools
import os
from importlib import metadata

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = 'sim2real.plugins'
"""Entry-point group of installed plug-ins (value: the package to import)."""
ENV_VAR = 'SIM2REAL_PLUGINS'
"""Environment variable: comma-separated plug-in packages."""
HOOKS = ('register_tasks', 'register_robots')
"""What a plug-in package may offer, one hook per registry."""

_done: set[tuple[str, str]] = set()
"""(package, hook) pairs whose hook ran to the end."""
_running: set[tuple[str, str]] = set()
"""(package, hook) pairs whose hook is running (a hook importing a registry re-enters)."""


class PluginError(ImportError):
    """A named plug-in cannot be imported or its hook failed."""


@functools.cache
def entry_point_packages() -> tuple[str, ...]:
    """Packages of the installed distributions' entry points (sorted by name); read once per
    process (it scans every distribution on sys.path; cache_clear() to read again)."""
    return tuple(ep.value.split(':')[0].strip() for ep in sorted(
        metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: ep.name))


def plugin_packages() -> list[str]:
    """Plug-in packages in load order: entry points, then SIM2REAL_PLUGINS."""
    names = list(entry_point_packages())
    names += [n.strip() for n in os.environ.get(ENV_VAR, '').split(',') if n.strip()]
    return list(dict.fromkeys(names))


def load_plugins(hook: str) -> list[str]:
    """Run hook (one of HOOKS) of every plug-in package that has it, each once per process;
    the packages whose hook ran now. PluginError names the package and where it came from."""
    if hook not in HOOKS:
        raise ValueError(f'unknown plug-in hook "{hook}"; expected one of {HOOKS}')
    ran = []
    for name in plugin_packages():
        key = (name, hook)
        if key in _done or key in _running:
            continue
        _running.add(key)
        try:
            if _run_hook(name, hook):
                ran.append(name)
            _done.add(key)   # a failed hook is tried again (and fails loudly) next time
        finally:
            _running.discard(key)
    return ran


def _run_hook(name: str, hook: str) -> bool:
    """Import package name and run its hook; whether it has one."""
    try:
        module = importlib.import_module(name)
    except ImportError as exc:
        raise PluginError(f'sim2real plug-in "{name}" (entry point group {ENTRY_POINT_GROUP} '
                          f'or {ENV_VAR}) cannot be imported: {exc}') from exc
    func = getattr(module, hook, None)
    if func is None:
        return False
    try:
        func()
    except Exception as exc:
        raise PluginError(f'sim2real plug-in "{name}": {hook}() failed: '
                          f'{type(exc).__name__}: {exc}') from exc
    log.debug('plug-in %s: %s()', name, hook)
    return True
