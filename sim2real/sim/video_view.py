"""How a rollout video films a scene: a free camera that follows one of its bodies."""

from __future__ import annotations

from dataclasses import dataclass

import mujoco


@dataclass(frozen=True)
class VideoView:
    """A free camera that follows a body: a close view where the model's camera is too far."""

    body: str
    distance_m: float
    azimuth_deg: float = 135.0
    elevation_deg: float = -35.0

    def camera(self, model: mujoco.MjModel) -> mujoco.MjvCamera:
        """The tracking MjvCamera of this view on model."""
        cam = mujoco.MjvCamera()
        cam.type = mujoco.mjtCamera.mjCAMERA_TRACKING
        cam.trackbodyid = model.body(self.body).id
        cam.distance = self.distance_m
        cam.azimuth, cam.elevation = self.azimuth_deg, self.elevation_deg
        return cam
