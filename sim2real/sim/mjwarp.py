"""The ``mjwarp`` backend: MuJoCo Warp on Warp's CUDA or CPU device, state as torch views.

The model is the same compiled ``MjModel`` the ``mujoco`` backend steps. State and
per-world model fields live in Warp arrays that torch reads and writes without a copy
(``wp.to_torch``). On a CUDA device one physics step is captured once as a CUDA graph and
replayed. Warp runs on its device stream, a blocking stream, and torch on the legacy default
stream, which orders itself against blocking streams: the actuator callback's writes and the
step's reads happen in program order without explicit synchronization.
On the CPU device (tests, CI) kernels are compiled on first use and kept in Warp's kernel
cache (``WARP_CACHE_PATH`` or ``~/.cache/warp``), so later runs start in seconds.

MuJoCo Warp computes in float32, so its views are float32 where ``mujoco.batch``'s are
float64; the task layer converts where it reads (``.float()``) and writes (index assignment).
"""

from __future__ import annotations

import dataclasses
import logging
import os
from typing import Callable

import mujoco
import numpy as np
import torch

from sim2real.sim.backend import FloatingBaseBackend

log = logging.getLogger(__name__)

# Fields set_const writes from masses and inertias: per world as soon as any model field is
# (otherwise every world would write one shared row)
_SET_CONST_OUTPUTS = ('body_subtreemass', 'body_invweight0', 'dof_invweight0',
                      'tendon_invweight0', 'actuator_acc0')
CONTACTS_PER_WORLD = 32
"""Contact slots per simulation (a standing quadruped has 4; margin for falls)."""
CONSTRAINT_ROWS_PER_WORLD = 192
"""Constraint rows per simulation: contacts x (2 (condim 3) ... 4 rows) + joint limits."""


def import_warp():
    """(warp, mujoco_warp), or an ImportError that says how to install them."""
    try:
        import warp
        warp.config.log_level = warp.LOG_WARNING   # no banner nor per-module load lines
        import mujoco_warp
    except ImportError as err:
        raise ImportError(
            'backend "mjwarp" needs MuJoCo Warp: pip install "sim2real[gpu]" '
            '(mujoco-warp, warp-lang); offline, install the wheels placed beside '
            'bench/gpu.sh with pip install --no-index --find-links') from err
    if os.environ.get('WARP_CACHE_PATH'):
        warp.config.kernel_cache_dir = os.environ['WARP_CACHE_PATH']
    warp.init()
    return warp, mujoco_warp


def _batched_fields(mjw) -> set[str]:
    """Model fields MuJoCo Warp allows per world (leading '*' dimension)."""
    out = set()
    for f in dataclasses.fields(mjw.Model):
        shape = getattr(f.type, 'shape', ())
        if shape and shape[0] == '*':
            out.add(f.name)
    return out


class MjwarpBackend(FloatingBaseBackend):
    """num_envs worlds of one floating-base model in MuJoCo Warp."""

    name = 'mjwarp'

    def __init__(self, model: mujoco.MjModel, num_envs: int, device: str = 'cpu',
                 contacts_per_world: int = CONTACTS_PER_WORLD,
                 constraint_rows_per_world: int = CONSTRAINT_ROWS_PER_WORLD):
        """Put model on device ('cpu', 'cuda', 'cuda:1') with num_envs worlds."""
        self._wp, self._mjw = wp, mjw = import_warp()
        self.model = model
        self.num_envs = num_envs
        self.wp_device = wp.get_device('cuda:0' if device == 'cuda' else device)
        self.device = torch.device('cpu' if self.wp_device.is_cpu else
                                   f'cuda:{self.wp_device.ordinal}')
        self.physics_dt_s = float(model.opt.timestep)
        with wp.ScopedDevice(self.wp_device):
            self.wmodel = mjw.put_model(model)
            self.wdata = mjw.make_data(model, nworld=num_envs, nconmax=contacts_per_world,
                                       njmax=constraint_rows_per_world)
        d = self.wdata
        self.qpos = wp.to_torch(d.qpos)
        self.qvel = wp.to_torch(d.qvel)
        self.ctrl = wp.to_torch(d.ctrl)
        self.xfrc_applied = wp.to_torch(d.xfrc_applied).view(num_envs, model.nbody, 6)
        self.sensordata = wp.to_torch(d.sensordata)
        self._batchable = _batched_fields(mjw)
        self._views: dict[str, torch.Tensor] = {}
        self._graph = None
        self._const_stale = False

    def reset(self, env_ids: torch.Tensor) -> None:
        """Reset the given worlds to the model's defaults."""
        mask = torch.zeros(self.num_envs, dtype=torch.bool, device=self.device)
        mask[env_ids.to(self.device)] = True
        with self._wp.ScopedDevice(self.wp_device):   # Warp's default device may be another
            self._mjw.reset_data(self.wmodel, self.wdata, reset=self._wp.from_torch(mask))

    def expand(self, field: str) -> torch.Tensor:
        """Per-world values of a model field, (N, ...) writable view."""
        if field not in self._views:
            if field not in self._batchable:
                raise ValueError(f'model field "{field}" cannot vary per world in MuJoCo Warp')
            for name in (field,) + _SET_CONST_OUTPUTS:
                self._per_world(name)
            self._views[field] = self._wp.to_torch(getattr(self.wmodel, field))
        return self._views[field]

    def _per_world(self, name: str) -> None:
        """Give model field name one row per world (copies of the shared row)."""
        wp = self._wp
        old = getattr(self.wmodel, name, None)
        if old is None or name not in self._batchable or old.shape[0] == self.num_envs:
            return
        rows = np.repeat(old.numpy()[:1], self.num_envs, axis=0)
        setattr(self.wmodel, name, wp.array(rows, dtype=old.dtype, device=self.wp_device))
        self._graph = None   # a captured step holds the old array's address

    def set_const(self, env_ids: torch.Tensor | None = None) -> None:
        """Recompute derived model constants (every world) after writing masses or inertias,
        once before the next step however many events asked for it."""
        self._const_stale = True

    def _update_const(self) -> None:
        """The pending set_const; derived state fields are left to the next step."""
        if self._const_stale:
            self._mjw.set_const(self.wmodel, self.wdata, restore=False)
            self._const_stale = False

    def _step(self) -> None:
        """One physics step of every world (a replayed CUDA graph on a GPU)."""
        wp, mjw = self._wp, self._mjw
        if self.wp_device.is_cpu:
            mjw.step(self.wmodel, self.wdata)
            return
        if self._graph is None:   # ScopedCapture loads (compiles) the modules first
            with wp.ScopedCapture(device=self.wp_device) as capture:
                mjw.step(self.wmodel, self.wdata)
            self._graph = capture.graph
            log.info('captured the MuJoCo Warp step as a CUDA graph on %s', self.wp_device)
        wp.capture_launch(self._graph)

    def simulate(self, num_substeps: int, before_substep: Callable[[float], None]) -> None:
        """Advance all worlds num_substeps physics steps, calling the actuator first."""
        with self._wp.ScopedDevice(self.wp_device):
            self._update_const()
            for _ in range(num_substeps):
                before_substep(self.physics_dt_s)
                self._step()

    def copy_to_host(self, env_id: int, data: mujoco.MjData) -> mujoco.MjModel:
        """Copy world env_id's joint state into data (kinematics left to mj_forward)."""
        data.qpos[:] = self.qpos[env_id].double().cpu().numpy()
        data.qvel[:] = self.qvel[env_id].double().cpu().numpy()
        return self.model
