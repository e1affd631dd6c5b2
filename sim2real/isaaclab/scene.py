"""Scene pieces every robot's Isaac Lab env uses: our URDF as the articulation, a local
ground plane (Isaac Lab fetches its default ground and sky from the network)."""

from __future__ import annotations

import importlib
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import yaml

TASK_FILE = 'isaaclab_task.yaml'
"""The task file our side writes into the run directory (sim2real.interop.isaaclab_task)."""


def read_task_file(run_dir: str | Path) -> dict:
    """The task file of a run directory, as plain data."""
    path = Path(run_dir) / TASK_FILE
    if not path.is_file():
        raise FileNotFoundError(f'{path}: no task file; write it with `sim2real train TASK '
                                '--backend isaaclab` (or sim2real.interop.isaaclab_task)')
    return yaml.safe_load(path.read_text())


def ground_plane_usd(path: Path, size_m: float = 200.0) -> Path:
    """Write a square collision plane (z up, size_m wide) as a USD file; return its path."""
    from pxr import Usd, UsdGeom, UsdPhysics
    path.parent.mkdir(parents=True, exist_ok=True)
    stage = Usd.Stage.CreateNew(str(path))
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
    root = UsdGeom.Xform.Define(stage, '/ground')
    stage.SetDefaultPrim(root.GetPrim())
    plane = UsdGeom.Plane.Define(stage, '/ground/plane')
    plane.CreateAxisAttr('Z')
    plane.CreateWidthAttr(size_m)
    plane.CreateLengthAttr(size_m)
    UsdPhysics.CollisionAPI.Apply(plane.GetPrim())
    stage.GetRootLayer().Save()
    return path


def urdf_spawn(urdf: str | Path, usd_dir: Path, fix_base: bool = False):
    """Isaac Lab's spawner for our URDF: joint drives off (the actuator model is the PD),
    contact sensors on, no self-collision, fixed joints kept (their links are our bodies)."""
    import isaaclab.sim as sim_utils
    from isaaclab_newton.sim.schemas import NewtonArticulationCfg
    drive = sim_utils.UrdfConverterCfg.JointDriveCfg
    return sim_utils.UrdfFileCfg(
        asset_path=str(urdf), usd_dir=str(usd_dir), fix_base=fix_base,
        merge_fixed_joints=False,
        joint_drive=drive(gains=drive.PDGainsCfg(stiffness=0.0, damping=0.0)),
        activate_contact_sensors=True,
        articulation_props=NewtonArticulationCfg(self_collision_enabled=False))


def build_env_cfg(task: dict, run_dir: Path, num_envs: int, device: str):
    """The task's Isaac Lab env config, from the builder its TaskSpec names."""
    module, _, name = task['isaaclab_env'].partition(':')
    cfg = getattr(importlib.import_module(module), name)(task, run_dir, num_envs)
    cfg.sim.device = device
    return cfg


@contextmanager
def opened_env(task: dict, run_dir: Path, num_envs: int, device: str,
               seed: int | None = None) -> Iterator[tuple]:
    """(env, cfg): the task's manager-based env in a kit-less simulation on device, closed on
    exit."""
    import isaacsim.asset.importer.urdf  # noqa: F401  (its USD schemas: before any stage)
    from isaaclab.app.sim_launcher import launch_simulation
    from isaaclab.envs import ManagerBasedRLEnv
    from sim2real.isaaclab.rewards import install_positive_clip
    cfg = build_env_cfg(task, run_dir, num_envs, device)
    if seed is not None:
        cfg.seed = seed
    with launch_simulation(cfg, {'device': device, 'visualizer': 'none'}):
        env = ManagerBasedRLEnv(cfg)
        install_positive_clip(env)
        try:
            yield env, cfg
        finally:
            env.close()
