"""Env throughput against raw mujoco.batch stepping of the same model and thread count."""

from __future__ import annotations

import torch

from bench.common import report, timed
from sim2real.training import build_env


def env_vs_raw(task: str, num_envs: int = 4096, num_threads: int = 0,
               repeats: int = 30) -> dict:
    """Policy steps/s of the env and of raw Batch.step(nstep=decimation) on its model."""
    env = build_env(task, seed=0, num_envs=num_envs, num_threads=num_threads)
    actions = torch.zeros(num_envs, env.num_actions)
    env_s = timed(lambda: env.step(actions), repeats)
    batch = env.scene.backend.batch
    ctrl = batch.bind('ctrl')
    decimation = env.cfg.decimation
    # the same states and rotor thrusts the env started from, held: the bodies stay airborne
    env.reset()
    hover = env.scene.actuator.substep(env.scene.backend.root_ang_vel_b, 0.0).numpy()

    def raw_step():
        ctrl[:] = hover
        batch.step(nstep=decimation)
    raw_s = timed(raw_step, repeats)
    out = {'task': task, 'num_envs': num_envs, 'decimation': decimation,
           'env_steps_per_s': num_envs / env_s, 'raw_policy_steps_per_s': num_envs / raw_s,
           'raw_physics_steps_per_s': num_envs * decimation / raw_s}
    out['ratio'] = out['env_steps_per_s'] / out['raw_policy_steps_per_s']
    report(f'env_vs_raw[{task}]', f"env {out['env_steps_per_s']:,.0f} steps/s, raw "
           f"{out['raw_policy_steps_per_s']:,.0f} steps/s, ratio {out['ratio']:.2f} "
           f'(goal >= 0.85)')
    return out
