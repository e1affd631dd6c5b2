"""Env throughput against raw stepping of the same backend, model and simulations.

The env step (actions, actuator at physics rate, observations, rewards, terminations, resets,
randomization, metrics) is timed against the bare physics step of the same backend
(``backend.simulate`` with no actuator work) on the same simulations. The two alternate in
blocks of a few policy steps, so both see the same states (drones resting on the floor, or
legs in contact, cost the solver more than free flight) and the same machine load. Raw
steps hold the motor commands the env's actuator wrote last (rotor thrusts), or, for legged
robots, run a bare torch PD to the standing pose, the least a raw user would write.
Goal: env / raw >= 0.85.
"""

from __future__ import annotations

import torch

from bench.common import report, timed
from sim2real.training import build_env


def _raw_actuator(env):
    """The minimal per-substep actuator of raw stepping (None: commands held)."""
    scene = env.scene
    if not hasattr(scene, 'default_joint_pos_rad'):
        return lambda dt_s: None
    backend, act = scene.backend, scene.actuator
    qpos_adr = torch.as_tensor(scene.info.qpos_adr, device=backend.device)
    qvel_adr = torch.as_tensor(scene.info.qvel_adr, device=backend.device)
    act_ids = torch.as_tensor(scene.info.actuator_ids, device=backend.device)
    q0 = scene.default_joint_pos_rad.to(backend.qpos.dtype)
    kp = act.kp_nm_per_rad[0].to(backend.qpos.dtype)
    kd = act.kd_nm_s_per_rad[0].to(backend.qpos.dtype)

    def pd(dt_s: float) -> None:
        tau = kp * (q0 - backend.qpos[:, qpos_adr]) - kd * backend.qvel[:, qvel_adr]
        backend.ctrl[:, act_ids] = tau.to(backend.ctrl.dtype)
    return pd


def env_vs_raw(task: str, num_envs: int = 4096, num_threads: int = 0, repeats: int = 30,
               backend: str = 'mujoco', device: str = 'cpu', block: int = 5,
               warmup_s: float = 1.0) -> dict:
    """Policy steps/s of the env and of raw stepping of its backend, alternated in blocks.

    The first warmup_s of simulated time are not timed: the envs leave their synchronized
    start, so the timed steps include the resets of crashed or fallen robots, as in training.
    """
    env = build_env(task, seed=0, num_envs=num_envs, num_threads=num_threads,
                    backend=backend, device=device)
    sim = env.scene.backend
    actions = torch.zeros(num_envs, env.num_actions, device=env.device)
    decimation = env.cfg.decimation
    actuator = _raw_actuator(env)

    def raw_step():
        sim.simulate(decimation, actuator)

    for _ in range(max(1, round(warmup_s / env.step_dt_s))):
        env.step(actions)   # (mjwarp: kernels loaded, CUDA graph captured)
    raw_step()
    resets = []

    def env_step():
        _, _, terminated, truncated, _ = env.step(actions)
        resets.append(terminated | truncated)

    rounds = max(1, repeats // block)
    env_s = raw_s = 0.0
    for _ in range(rounds):
        env_s += block * timed(env_step, block, warmup=False)
        raw_s += block * timed(raw_step, block, warmup=False)
    steps = num_envs * block * rounds
    out = {'task': task, 'backend': backend, 'device': device, 'num_envs': num_envs,
           'decimation': decimation, 'env_steps_per_s': steps / env_s,
           'raw_policy_steps_per_s': steps / raw_s,
           'raw_physics_steps_per_s': steps * decimation / raw_s, 'ratio': raw_s / env_s,
           'warmup_s': warmup_s,
           'resets_per_step': float(torch.stack(resets).sum()) / len(resets)}
    report(f'env_vs_raw[{task},{backend}]',
           f"env {out['env_steps_per_s']:,.0f} steps/s, raw {out['raw_policy_steps_per_s']:,.0f}"
           f" steps/s ({num_envs} envs, {device}, {out['resets_per_step']:.1f} resets/step), "
           f"ratio {out['ratio']:.2f} (goal >= 0.85)")
    return out
