"""The explicit task registry: name -> env config factory and training defaults."""

from __future__ import annotations

import copy
import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Callable

from sim2real.algo_cfg import TrainCfg
from sim2real.plugins import load_plugins
from sim2real.mdp.cfg import EnvCfg
from sim2real.verdict import Floor

POINT_KINDS = ('eval', 'nominal', 'edge', 'corner', 'past_edge')
"""Where a task states floors: its evaluation under full randomization, and the points of
``sim2real robustness`` (nominal robot, one parameter at an edge, every corner of the box,
one parameter 1.25x past an edge)."""


@dataclass(frozen=True)
class TaskSpec:
    """A registered task."""

    name: str
    """Task name used on the command line."""
    env_cfg: Callable[..., EnvCfg]
    """Factory: env_cfg(play=False, **options) -> EnvCfg."""
    description: str
    """One line for `sim2real tasks`."""
    train: TrainCfg = field(default_factory=TrainCfg)
    """Training defaults: algorithm and its config, env count, schedule, edge bias."""
    acceptance: dict[str, tuple[Floor, ...]] = field(default_factory=dict)
    """Floors per kind of point (POINT_KINDS); 'kind:parameter' (e.g.
    'past_edge:action_delay_ticks') replaces them for the points that pin only that
    parameter. A kind without floors always passes."""
    actions: tuple[str, ...] = ()
    """Action interfaces env_cfg(action=...) builds, the default first."""
    isaaclab_env: str | None = None
    """'module:function' building this task's Isaac Lab env config from its task file
    (sim2real.isaaclab; imported only in an Isaac Lab venv), or None."""
    sysid: str | None = None
    """Module of the task's identification plant (`sim2real gap`: its SIGNALS, PARAMETERS,
    NOMINAL, BOUNDS, WARM_S, from_flight, replay, measured_signals, held_signals), or
    None."""

    def __post_init__(self):
        """Only known kinds of points ('kind' or 'kind:parameter' for one parameter's)."""
        unknown = sorted(k for k in self.acceptance if k.split(':')[0] not in POINT_KINDS)
        if unknown:
            raise ValueError(f'task "{self.name}": unknown acceptance kinds {unknown}; '
                             f'expected some of {POINT_KINDS}')


_REGISTRY: dict[str, TaskSpec] = {}
_folders_done: set[str] = set()
"""Robot folders whose register_tasks() ran to the end."""
_folders_running: set[str] = set()
"""Robot folders whose register_tasks() is running (a hook asking the registry re-enters)."""


def _load_folders() -> None:
    """Run register_tasks() of every robot folder of this package, each once per process
    (a folder whose hook raised is tried again at the next call, as plug-ins are)."""
    package = importlib.import_module('sim2real.tasks')
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if not info.ispkg or info.name in _folders_done or info.name in _folders_running:
            continue
        _folders_running.add(info.name)
        try:
            hook = getattr(importlib.import_module(f'sim2real.tasks.{info.name}'),
                           'register_tasks', None)
            if hook is not None:
                hook()
            _folders_done.add(info.name)
        finally:
            _folders_running.discard(info.name)


def register(spec: TaskSpec) -> None:
    """Add a task; names are unique."""
    if spec.name in _REGISTRY:
        raise ValueError(f'task "{spec.name}" is already registered')
    _REGISTRY[spec.name] = spec


def get_task(name: str) -> TaskSpec:
    """The task called name (plug-ins' too); the error lists the registered names."""
    _load_folders()
    load_plugins('register_tasks')
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ', '.join(sorted(_REGISTRY))
        raise KeyError(f'unknown task "{name}"; registered tasks: {known}') from None


def make_env_cfg(name: str, play: bool = False, **options) -> EnvCfg:
    """A fresh (deep-copied) env config of a registered task."""
    return copy.deepcopy(get_task(name).env_cfg(play=play, **options))


def task_names() -> list[str]:
    """Registered task names (plug-ins' too), sorted."""
    _load_folders()
    load_plugins('register_tasks')
    return sorted(_REGISTRY)
