"""Robot tasks (imported as ``sim2real.tasks``): each registers itself in the registry."""

from sim2real.tasks.registry import get_task, make_env_cfg, register, task_names, TaskSpec
from sim2real.tasks.hand import register_tasks as _register_hand
from sim2real.tasks.quadrotor import register_tasks as _register_quadrotor
from sim2real.tasks.quadruped import register_tasks as _register_quadruped

_register_quadrotor()
_register_quadruped()
_register_hand()

__all__ = ['TaskSpec', 'get_task', 'make_env_cfg', 'register', 'task_names']
