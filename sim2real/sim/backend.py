"""Batched MuJoCo simulation behind one interface, state exposed as torch views.

Two backends share it: ``mujoco`` (``mujoco.batch.Batch``, CPU threads, float64) and
``mjwarp`` (MuJoCo Warp, float32, Warp's CUDA or CPU device; ``sim2real/sim/mjwarp.py``).
State arrays (qpos, qvel, ctrl, xfrc_applied, sensordata) are the backend's live memory
wrapped as torch tensors, so reads and writes cost no copy. Per-environment physical
parameters are per-simulation model fields (``expand``). ``state_dict()`` and
``load_state_dict()`` save and restore all of it, for an exact resume (sim2real/sim/state.py).
"""

from __future__ import annotations

import logging
import warnings
from typing import Callable

import mujoco
import mujoco.batch
import numpy as np
import torch

from sim2real.sim.bodies import free_joints, FreeBodyView
from sim2real.sim.mjcf import BASE_JOINT
from sim2real.sim.state import load_array, check_keys, StateError

log = logging.getLogger(__name__)


class SimulationError(RuntimeError):
    """A simulation diverged or MuJoCo reported an error."""


class FloatingBaseBackend:
    """Root-state views and divergence handling shared by the backends.

    Subclasses set model, num_envs, physics_dt_s and the torch views qpos, qvel, ctrl,
    xfrc_applied, sensordata (N, ...), and implement reset, expand, set_const, simulate,
    copy_to_host, state_dict and load_state_dict.
    """

    name = ''
    device = torch.device('cpu')
    qpos: torch.Tensor
    qvel: torch.Tensor

    # -- free bodies: the robot's floating base and free objects ----------------------------
    def free_body(self, joint: str) -> FreeBodyView:
        """Views of the body freed by the free joint called joint; the error lists them."""
        found = free_joints(self.model)
        if joint not in found:
            raise SimulationError(f'the model has no free joint "{joint}"; its free joints: '
                                  f'{sorted(found) or "none (a fixed-base model)"}')
        return FreeBodyView(self.qpos, self.qvel, found[joint])

    @property
    def base(self) -> FreeBodyView:
        """The robot's floating base (free joint BASE_JOINT), resolved once."""
        cached = getattr(self, '_base_view', None)
        if cached is None or cached[0] is not self.qpos:
            cached = self._base_view = (self.qpos, self.free_body(BASE_JOINT))
        return cached[1]

    @property
    def root_pos_w(self) -> torch.Tensor:
        """Base position [m; world frame], (N, 3) view."""
        return self.base.pos_w

    @property
    def root_quat_w(self) -> torch.Tensor:
        """Base orientation quaternion (w, x, y, z) body-to-world, (N, 4) view."""
        return self.base.quat_w

    @property
    def root_lin_vel_w(self) -> torch.Tensor:
        """Base linear velocity [m/s; world frame], (N, 3) view."""
        return self.base.lin_vel_w

    @property
    def root_ang_vel_b(self) -> torch.Tensor:
        """Base angular velocity [rad/s; body frame], (N, 3) view."""
        return self.base.ang_vel_b

    def root_state(self, env_ids: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
        """The base state the terms read, float32, of all simulations or the rows of env_ids:
        finite (diverged simulations are recovered first, see recover_nonfinite), then
        FreeBodyView.state's pos_w, quat_w, rotmat_wb, lin_vel_w, lin_vel_b, ang_vel_b."""
        finite = self.recover_nonfinite(env_ids)
        rows = slice(None) if env_ids is None else env_ids
        return {'finite': finite, **self.base.state(rows)}

    def write_root_state(self, env_ids: torch.Tensor, pos_w: torch.Tensor,
                         quat_w: torch.Tensor, lin_vel_w: torch.Tensor,
                         ang_vel_b: torch.Tensor) -> None:
        """Set the base pose and velocity of the given simulations."""
        self.base.write(env_ids, pos_w, quat_w, lin_vel_w, ang_vel_b)

    def check_finite(self, env_ids: torch.Tensor | None = None) -> torch.Tensor:
        """Boolean mask of simulations (all, or env_ids) whose state is finite (row sums)."""
        qpos, qvel = (self.qpos, self.qvel) if env_ids is None else (
            self.qpos[env_ids], self.qvel[env_ids])
        return torch.isfinite(qpos.sum(dim=1) + qvel.sum(dim=1))

    def recover_nonfinite(self, env_ids: torch.Tensor | None = None) -> torch.Tensor:
        """Put diverged simulations (of all, or of env_ids) back at qpos0, at rest; returns
        the finite mask of those simulations."""
        finite = self.check_finite(env_ids)
        if not bool(finite.all()):
            bad = (~finite).nonzero().flatten()
            if env_ids is not None:
                bad = env_ids[bad]
            self.qpos[bad] = torch.as_tensor(self.model.qpos0, dtype=self.qpos.dtype,
                                             device=self.qpos.device)
            self.qvel[bad] = 0.0
        return finite


class MujocoBatchBackend(FloatingBaseBackend):
    """Many simulations of one floating-base model, stepped on a thread pool."""

    name = 'mujoco'

    def __init__(self, model: mujoco.MjModel, num_envs: int, num_threads: int = 0):
        """Create num_envs simulations of model on num_threads threads (0: all CPUs)."""
        self.model = model
        self.num_envs = num_envs
        self.batch = mujoco.batch.Batch(model, num_envs, nthread=num_threads)
        self.qpos = torch.from_numpy(self.batch.bind('qpos'))
        self.qvel = torch.from_numpy(self.batch.bind('qvel'))
        self.ctrl = torch.from_numpy(self.batch.bind('ctrl'))
        self.xfrc_applied = torch.from_numpy(self.batch.bind('xfrc_applied'))
        with warnings.catch_warnings():   # a read-only output: torch warns, reads are fine
            warnings.simplefilter('ignore', UserWarning)
            self.sensordata = torch.from_numpy(self.batch.bind('sensordata'))
        self.physics_dt_s = float(model.opt.timestep)
        self._const_stale = np.zeros(num_envs, dtype=bool)
        self._views: dict[str, torch.Tensor] = {}

    def reset(self, env_ids: torch.Tensor) -> None:
        """Reset the given simulations to the model's defaults (no forward pass)."""
        self.batch.reset(ids=env_ids.cpu().numpy(), stage=mujoco.mjtStage.mjSTAGE_NONE)

    def expand(self, field: str) -> torch.Tensor:
        """Per-simulation values of a model field, (N, ...) writable view (derived constants
        such as body_subtreemass follow a write at the next step; see set_const)."""
        if field not in self._views:   # the expanded field keeps its memory
            self._views[field] = torch.from_numpy(self.batch.expand(field))
        return self._views[field]

    def set_const(self, env_ids: torch.Tensor | None = None) -> None:
        """Recompute derived model constants after writing masses or inertias, once before
        the next step however many events asked for it (each call costs ~1.6 us per sim)."""
        if env_ids is None:
            self._const_stale[:] = True
        else:
            self._const_stale[env_ids.cpu().numpy()] = True

    def _update_const(self) -> None:
        """The pending set_const of the simulations marked stale."""
        if self._const_stale.any():
            self.batch.set_const(np.flatnonzero(self._const_stale))
            self._const_stale[:] = False

    def simulate(self, num_substeps: int, before_substep: Callable[[float], None]) -> None:
        """Advance all simulations num_substeps physics steps, calling the actuator first."""
        self._update_const()
        for _ in range(num_substeps):
            before_substep(self.physics_dt_s)
            self.batch.step()

    def copy_to_host(self, env_id: int, data: mujoco.MjData) -> mujoco.MjModel:
        """Copy simulation env_id's state into data; returns its (randomized) model."""
        self._update_const()
        self.batch.get_data(env_id, data)
        return self.batch.get_model(env_id)

    def state_dict(self) -> dict:
        """Every simulation's full integration state (mjSTATE_INTEGRATION: time, qpos, qvel,
        act, qacc_warmstart, ctrl, applied forces, ...), the per-simulation model fields
        (randomized ones and the constants set_const derived from them) and the pending
        set_const marks, as torch tensors."""
        fields = {}
        for name in sorted(mujoco.batch.MODEL_FIELDS):
            values = self.batch.expanded(name)
            if values is not None:
                fields[name] = torch.from_numpy(values.copy())
        return {'backend': self.name,
                'integration_state': torch.from_numpy(self.batch.state.copy()),
                'model_fields': fields, 'const_stale': torch.from_numpy(self._const_stale.copy())}

    def load_state_dict(self, state: dict) -> None:
        """Write a state_dict() of a batch of the same model and size into this one."""
        check_keys('MujocoBatchBackend', state,
                   ('backend', 'integration_state', 'model_fields', 'const_stale'))
        if state['backend'] != self.name:
            raise StateError(f'the state was saved by the "{state["backend"]}" backend, '
                             f'this env runs "{self.name}"')
        load_array(self.batch.state, state['integration_state'].numpy(),
                   'MujocoBatchBackend.integration_state')
        saved = state['model_fields']
        unknown = sorted(set(saved) - mujoco.batch.MODEL_FIELDS)
        if unknown:
            raise StateError(f'MujocoBatchBackend: the state holds unknown model fields {unknown}')
        for name in sorted(mujoco.batch.MODEL_FIELDS):
            if name in saved:
                load_array(self.batch.expand(name), saved[name].numpy(),
                           f'MujocoBatchBackend.model_fields[{name!r}]')
            elif self.batch.expanded(name) is not None:   # shared in the saved batch
                self.batch.expand(name)[...] = _shared_value(self.model, name)
        load_array(self._const_stale, state['const_stale'].numpy(),
                   'MujocoBatchBackend.const_stale')


def _shared_value(model: mujoco.MjModel, field: str):
    """The batch model's value of a model field ('opt.<name>' for MjOption fields)."""
    if field.startswith('opt.'):
        return getattr(model.opt, field[4:])
    return getattr(model, field)


def store_derived(owner, values: dict[str, torch.Tensor],
                  env_ids: torch.Tensor | None = None) -> None:
    """Set owner's derived-state attributes: whole tensors (env_ids None), else their rows."""
    for name, value in values.items():
        if env_ids is None:
            setattr(owner, name, value)
        else:
            getattr(owner, name)[env_ids] = value
