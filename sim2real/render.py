"""Rollout videos: render one simulation of a batched env offscreen to an animated GIF.

Needs an OpenGL context; on a machine without a display set MUJOCO_GL=osmesa (Debian's
libosmesa6) or egl before mujoco is imported. The `sim2real eval --video` path does this.
"""

from __future__ import annotations

import logging
from pathlib import Path

import mujoco
import numpy as np
import torch

log = logging.getLogger(__name__)


def _add_marker(scene: mujoco.MjvScene, pos_w: np.ndarray, radius_m: float) -> None:
    """Draw a translucent green sphere (the reference) into a rendered scene."""
    if scene.ngeom >= scene.maxgeom:
        return
    mujoco.mjv_initGeom(scene.geoms[scene.ngeom], mujoco.mjtGeom.mjGEOM_SPHERE,
                        np.full(3, radius_m), pos_w.astype(np.float64), np.eye(3).flatten(),
                        np.array([0.1, 0.8, 0.2, 0.5], dtype=np.float32))
    scene.ngeom += 1


def record_rollout(env, policy, path: str | Path, env_id: int = 0, width: int = 480,
                   height: int = 360, fps: int = 25) -> Path:
    """Run one episode of every env with policy, rendering env_id to a GIF at path."""
    from PIL import Image
    path = Path(path)
    backend = env.scene.backend
    data = mujoco.MjData(backend.model)
    model = backend.copy_to_host(env_id, data)
    every = max(1, round(1.0 / (fps * env.step_dt_s)))
    frames = []
    renderer = mujoco.Renderer(model, height=height, width=width)
    try:
        obs = env.reset()
        with torch.no_grad():
            for step in range(env.max_episode_length - 1):
                obs, *_ = env.step(policy(obs['policy']))
                if step % every:
                    continue
                backend.copy_to_host(env_id, data)
                mujoco.mj_forward(model, data)
                renderer.update_scene(data, camera='chase')
                target_w = env.command('target').pos_w[env_id].cpu().numpy()
                _add_marker(renderer.scene, target_w, 0.03)
                frames.append(Image.fromarray(renderer.render()))
    finally:
        renderer.close()
    path.parent.mkdir(parents=True, exist_ok=True)
    frames[0].save(path, save_all=True, append_images=frames[1:], loop=0,
                   duration=round(1000 * every * env.step_dt_s))
    log.info('wrote %s (%d frames)', path, len(frames))
    return path
