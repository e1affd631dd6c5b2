"""Robot tasks (imported as ``sim2real.tasks``): each robot folder registers its own.

Registration is lazy: the first ``get_task`` or ``task_names`` runs ``register_tasks()`` of
every folder below this package (as for plug-ins), so importing one module of a robot's
folder (say the Isaac Lab env config, in a venv without our MuJoCo) loads no other task.
"""

from sim2real.tasks.registry import get_task, make_env_cfg, register, task_names, TaskSpec

__all__ = ['get_task', 'make_env_cfg', 'register', 'task_names', 'TaskSpec']
