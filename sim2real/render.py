"""Rollout videos: render one simulation of a batched env offscreen to an animated GIF.

Needs an OpenGL context; on a machine without a display set MUJOCO_GL=osmesa (Debian's
libosmesa6) or egl before mujoco is imported. The `sim2real eval --video` path does this.

What is filmed is the scene's choice: its ``video_view`` attribute names a camera of the model
or is a VideoView that follows a body (default: the 'chase' camera every sim2real model has).
Every command term with a ``marker_pos_w()`` method (a reference position [m; world], (N, 3))
is drawn as a green sphere.
"""

from __future__ import annotations

import logging
from pathlib import Path

import mujoco
import numpy as np
import torch

from sim2real.atomic import atomic_path
from sim2real.sim.video_view import VideoView

log = logging.getLogger(__name__)

DEFAULT_CAMERA = 'chase'
"""The camera sim2real.sim.mjcf adds to every model, aimed at its root body."""
NEAR_CLIP_M = 0.01
"""Nearest rendered distance from the camera [m]."""


def _camera(env, model: mujoco.MjModel) -> str | mujoco.MjvCamera:
    """The scene's video view: a camera name or a VideoView's tracking camera."""
    view = getattr(env.scene, 'video_view', DEFAULT_CAMERA)
    return view.camera(model) if isinstance(view, VideoView) else view


def _markers_w(env, env_id: int) -> list[np.ndarray]:
    """Reference positions [m; world] of the command terms that offer one, for env_id."""
    terms = getattr(env, 'commands', {}) or {}
    return [term.marker_pos_w()[env_id].cpu().numpy() for term in terms.values()
            if callable(getattr(term, 'marker_pos_w', None))]


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
    # the near clipping plane is znear x the model's extent: a 100 m terrain would put it
    # metres out and clip a robot filmed from 1 m; keep it at 1 cm (a visual setting only)
    model.vis.map.znear = min(model.vis.map.znear, NEAR_CLIP_M / max(model.stat.extent, 1e-9))
    # the models' one light is a spot over the origin; a brighter headlight shows a robot
    # far out on a terrain too
    model.vis.headlight.ambient = np.maximum(model.vis.headlight.ambient, 0.35)
    model.vis.headlight.diffuse = np.maximum(model.vis.headlight.diffuse, 0.5)
    renderer = mujoco.Renderer(model, height=height, width=width)
    camera = _camera(env, model)
    try:
        obs = env.reset()
        with torch.no_grad():
            for step in range(env.max_episode_length - 1):
                obs, *_ = env.step(policy(obs['policy']))
                if step % every:
                    continue
                backend.copy_to_host(env_id, data)
                mujoco.mj_forward(model, data)
                renderer.update_scene(data, camera=camera)
                for marker_w in _markers_w(env, env_id):
                    _add_marker(renderer.scene, marker_w, 0.03)
                frames.append(Image.fromarray(renderer.render()))
    finally:
        renderer.close()
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        frames[0].save(tmp, format='GIF', save_all=True, append_images=frames[1:], loop=0,
                       duration=round(1000 * every * env.step_dt_s))
    log.info('wrote %s (%d frames)', path, len(frames))
    return path
