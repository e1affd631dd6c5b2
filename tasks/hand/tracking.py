"""The hand scene with a pose tracker on the cube (hand-reorient): what a policy that sees
the cube reads, a motion-capture or camera estimate (``sim2real.sim.pose_tracker``), never
the simulator's exact pose.

Per env and episode the scene draws the tracker's refresh period and latency in control
ticks (whole-number ranges, randomizable as ``scene.tracker_refresh_ticks`` and
``scene.tracker_latency_ticks``); the noise deviations are fixed per config. The tracker
reports in the world frame, which is the hand's root frame (the fixed base at the origin).
"""

from __future__ import annotations

import torch

from sim2real.mdp.ranges import bounds, sample_int_range
from sim2real.sim.pose_tracker import PoseTracker
from sim2real.tasks.hand.scene import HandScene


class TrackedCubeScene(HandScene):
    """HandScene + a PoseTracker of the cube, sampled once per control step."""

    CHILDREN = HandScene.CHILDREN + ('tracker',)

    def __init__(self, env, urdf: str = 'hand', kp_nm_per_rad: float = 3.0,
                 kd_nm_s_per_rad: float = 0.1, tracker_refresh_ticks=(1, 1),
                 tracker_latency_ticks=(0, 0), tracker_pos_noise_m: float = 0.0,
                 tracker_rot_noise_rad: float = 0.0, grasp_pose_rad: dict | None = None):
        """The hand scene (grasp_pose_rad as HandScene's); the tracker's refresh period and
        latency ranges [control ticks], its noise deviations (per coordinate [m], per
        rotation-vector component [rad])."""
        self.tracker_refresh_ticks = tracker_refresh_ticks
        self.tracker_latency_ticks = tracker_latency_ticks
        self.tracker_pos_noise_m = tracker_pos_noise_m
        self.tracker_rot_noise_rad = tracker_rot_noise_rad
        if bounds(tracker_refresh_ticks)[0] < 1:
            raise ValueError(f'tracker_refresh_ticks: a tracker refreshes at least every tick, '
                             f'got {tracker_refresh_ticks}')
        self.tracker = PoseTracker(env.num_envs, int(round(bounds(tracker_latency_ticks)[1])),
                                   torch, torch.float32)
        super().__init__(env, urdf, kp_nm_per_rad, kd_nm_s_per_rad, grasp_pose_rad)

    def reset(self, env_ids: torch.Tensor) -> None:
        """The hand scene's reset; this episode's tracker rate and latency."""
        super().reset(env_ids)
        env = self.env
        self.tracker.configure(env_ids, sample_int_range(env, env_ids, self.tracker_refresh_ticks),
                               sample_int_range(env, env_ids, self.tracker_latency_ticks),
                               self.tracker_pos_noise_m, self.tracker_rot_noise_rad)

    def refresh(self, env_ids: torch.Tensor | None = None) -> None:
        """The hand scene's refresh; after a step the tracker samples the cube, after a reset
        it restarts at the cube's exact pose."""
        super().refresh(env_ids)
        if env_ids is not None:
            self.tracker.reset(env_ids, self.cube_pos_w[env_ids], self.cube_quat_w[env_ids])
            return
        n = self.env.num_envs
        self.tracker.update(self.cube_pos_w, self.cube_quat_w,
                            torch.randn(n, 3, generator=self.env.rng),
                            torch.randn(n, 3, generator=self.env.rng))

    def tracked_cube_pos_rel_m(self) -> torch.Tensor:
        """The tracker's cube position relative to the cube's rest position [m; world]."""
        return self.tracker.pos_m - self.cube_spawn_pos_w

    def robot_params(self) -> dict:
        """The hand's parameters plus the cube's rest position, which the tracked position is
        taken relative to [m; the hand's root frame]."""
        return {**super().robot_params(),
                'object_rest_pos_m': self.cube_spawn_pos_w.tolist()}
