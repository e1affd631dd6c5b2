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
from sim2real.sim.state import check_keys, load_array, StateError

log = logging.getLogger(__name__)

# Fields set_const writes from masses and inertias: per world as soon as any model field is
# (otherwise every world would write one shared row)
_SET_CONST_OUTPUTS = ('body_subtreemass', 'body_invweight0', 'dof_invweight0',
                      'tendon_invweight0', 'actuator_acc0')
# Data fields of MuJoCo's mjSTATE_INTEGRATION (mj_getState), as MuJoCo Warp names them: with
# the per-world model fields, everything a step reads that it does not compute itself
_STATE_FIELDS = ('time', 'qpos', 'qvel', 'act', 'history', 'plastic', 'qacc_warmstart', 'ctrl',
                 'qfrc_applied', 'xfrc_applied', 'eq_active', 'mocap_pos', 'mocap_quat',
                 'userdata')
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
        self._shared_rows: dict[str, np.ndarray] = {}
        """The shared row of each model field made per-world, by name."""
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
        self._shared_rows[name] = old.numpy()[:1].copy()
        rows = np.repeat(self._shared_rows[name], self.num_envs, axis=0)
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

    def _state_arrays(self) -> dict[str, torch.Tensor]:
        """Torch views of the integration-state fields this model has (empty ones left out)."""
        out = {}
        for name in _STATE_FIELDS:
            array = getattr(self.wdata, name, None)
            if array is not None and array.size > 0:
                out[name] = self._wp.to_torch(array)
        return out

    def state_dict(self) -> dict:
        """Every world's integration state (the fields of mjSTATE_INTEGRATION), the per-world
        model fields and the pending set_const mark, as torch tensors on the device."""
        fields = {name: self._wp.to_torch(getattr(self.wmodel, name)).clone()
                  for name in sorted(self._shared_rows)}
        return {'backend': self.name,
                'data': {name: v.clone() for name, v in self._state_arrays().items()},
                'model_fields': fields, 'const_stale': self._const_stale}

    def load_state_dict(self, state: dict) -> None:
        """Write a state_dict() of worlds of the same model and count into these."""
        check_keys('MjwarpBackend', state, ('backend', 'data', 'model_fields', 'const_stale'))
        if state['backend'] != self.name:
            raise StateError(f'the state was saved by the "{state["backend"]}" backend, '
                             f'this env runs "{self.name}"')
        arrays = self._state_arrays()
        check_keys('MjwarpBackend.data', state['data'], tuple(arrays))
        for name, view in arrays.items():
            load_array(view, state['data'][name], f'MjwarpBackend.data[{name!r}]')
        saved = state['model_fields']
        unknown = sorted(set(saved) - self._batchable)
        if unknown:
            raise StateError(f'MjwarpBackend: the state holds unknown model fields {unknown}')
        for name in sorted(set(saved) | set(self._shared_rows)):
            self._per_world(name)
            view = self._wp.to_torch(getattr(self.wmodel, name))
            if name in saved:
                load_array(view, saved[name], f'MjwarpBackend.model_fields[{name!r}]')
            else:   # shared in the saved worlds
                view.copy_(torch.as_tensor(self._shared_rows[name]).expand_as(view))
        self._views.clear()   # _per_world may have replaced arrays
        self._const_stale = bool(state['const_stale'])
