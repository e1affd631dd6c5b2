"""Quadruped env throughput: against raw mujoco.batch stepping and Gymnasium's AsyncVectorEnv.

Three ways to produce policy steps of `quadruped-flat` (urdf/quadruped.urdf, physics 0.005 s,
decimation 4, PD kp 20 / kd 0.5 at physics rate):

- the env (`sim2real.training.build_env`): observations, rewards, terminations, resets,
  randomization, metrics, all of it;
- raw: the env's own `mujoco.batch.Batch` (same model, same per-env fields, same thread
  count) stepped with a numpy PD to the same kind of joint targets and nothing else, the
  ceiling the env layer is measured against (goal: env / raw >= 0.85);
- Gymnasium: `gymnasium.vector.AsyncVectorEnv` over a plain single-robot `gymnasium.Env` on
  the same compiled model (one MjData per env, the same PD and decimation, a 45-wide
  observation, a tracking reward, tilt/height termination), the way a MuJoCo user writes it
  without a batch simulator, at the best of several env counts (goal: env / Gymnasium >= 5).

Actions are uniform in [-1, 1] (targets q0 +- 0.25 rad, the robot stepping in place and
stumbling) and zero (standing). Prints one line and writes bench/out/quadruped_env.json.
Run: `.venv/bin/python -m bench.quadruped_env`.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import gymnasium as gym
import mujoco
import numpy as np
import torch

from bench.common import OUT_DIR, report, timed, write_results
from bench.raw_quadruped import KD as KD_NM_S_PER_RAD, KP as KP_NM_PER_RAD
from sim2real.sim.legged import legged_model
from sim2real.training import build_env

URDF = Path(__file__).resolve().parents[1] / 'urdf' / 'quadruped.urdf'
TASK = 'quadruped-flat'
ACTION_SCALE_RAD = 0.25
PHYSICS_DT_S, DECIMATION = 0.005, 4


def env_vs_raw(num_envs: int = 4096, num_threads: int = 0, repeats: int = 25,
               seed: int = 0) -> dict:
    """Policy steps/s of the env and of raw PD stepping of its Batch, random and zero actions."""
    env = build_env(TASK, seed=seed, num_envs=num_envs, num_threads=num_threads)
    rng = torch.Generator().manual_seed(seed)
    out = {'task': TASK, 'num_envs': num_envs, 'decimation': env.cfg.decimation}
    for name, make in (('random', lambda: torch.rand(num_envs, env.num_actions,
                                                     generator=rng) * 2 - 1),
                       ('zero', lambda: torch.zeros(num_envs, env.num_actions))):
        env.reset()
        env_s = timed(lambda: env.step(make()), repeats)
        env.reset()
        raw_s = timed(_raw_stepper(env, name == 'random', seed), repeats)
        out[name] = {'env_steps_per_s': num_envs / env_s,
                     'raw_policy_steps_per_s': num_envs / raw_s,
                     'raw_physics_steps_per_s': num_envs * env.cfg.decimation / raw_s,
                     'ratio': raw_s / env_s}
    return out


def _raw_stepper(env, random: bool, seed: int):
    """One policy step of bare PD stepping on the env's own batch (a closure for timed)."""
    scene = env.scene
    batch, info = scene.backend.batch, scene.info
    qpos, qvel, ctrl = batch.bind('qpos'), batch.bind('qvel'), batch.bind('ctrl')
    q0, limit = info.default_joint_pos_rad, info.effort_limit_nm
    rng = np.random.default_rng(seed)
    shape = (env.num_envs, len(q0))

    def step():
        offset = rng.uniform(-1.0, 1.0, shape) if random else np.zeros(shape)
        target = q0 + ACTION_SCALE_RAD * offset
        for _ in range(env.cfg.decimation):
            tau = (KP_NM_PER_RAD * (target - qpos[:, info.qpos_adr])
                   - KD_NM_S_PER_RAD * qvel[:, info.qvel_adr])
            ctrl[:, info.actuator_ids] = np.clip(tau, -limit, limit)
            batch.step()
    return step


class PlainQuadrupedEnv(gym.Env):
    """One robot on one MjData: what a Gymnasium user writes for the same task."""

    def __init__(self, urdf: str = str(URDF)):
        """Compile the same model as the batched env."""
        self.model, self.info = legged_model(urdf, PHYSICS_DT_S)
        self.data = mujoco.MjData(self.model)
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, (45,), np.float32)
        self.action_space = gym.spaces.Box(-1.0, 1.0, (12,), np.float32)
        self.command = np.array([0.5, 0.0, 0.0])
        self.last_action = np.zeros(12)

    def reset(self, *, seed=None, options=None):
        """Standing pose at the nominal height."""
        super().reset(seed=seed)
        mujoco.mj_resetData(self.model, self.data)
        self.data.qpos[2] = self.info.nominal_base_height_m
        self.data.qpos[self.info.qpos_adr] = self.info.default_joint_pos_rad
        self.last_action[:] = 0.0
        mujoco.mj_forward(self.model, self.data)
        return self._obs(), {}

    def step(self, action):
        """PD to q0 + 0.25 a at physics rate for DECIMATION steps; reward, termination."""
        info, data = self.info, self.data
        target = info.default_joint_pos_rad + ACTION_SCALE_RAD * np.clip(action, -1.0, 1.0)
        for _ in range(DECIMATION):
            tau = (KP_NM_PER_RAD * (target - data.qpos[info.qpos_adr])
                   - KD_NM_S_PER_RAD * data.qvel[info.qvel_adr])
            data.ctrl[info.actuator_ids] = np.clip(tau, -info.effort_limit_nm,
                                                   info.effort_limit_nm)
            mujoco.mj_step(self.model, data)
        self.last_action[:] = action
        obs = self._obs()
        error = self.command[:2] - data.qvel[:2]
        reward = float(np.exp(-error @ error / 0.25))
        terminated = bool(obs[5] > -np.cos(1.0) or data.qpos[2] < 0.15)
        return obs, reward, terminated, False, {}

    def _obs(self) -> np.ndarray:
        """Body rates, projected gravity, command, joint positions and velocities, action."""
        data = self.data
        rot = np.empty(9)
        mujoco.mju_quat2Mat(rot, data.qpos[3:7])
        gravity_b = -rot.reshape(3, 3)[2]
        return np.concatenate([data.qvel[3:6] * 0.25, gravity_b, self.command,
                               data.qpos[self.info.qpos_adr] - self.info.default_joint_pos_rad,
                               data.qvel[self.info.qvel_adr] * 0.05,
                               self.last_action]).astype(np.float32)


def gymnasium_async(num_envs: int, steps: int, seed: int = 0) -> float:
    """Policy steps/s of AsyncVectorEnv(num_envs x PlainQuadrupedEnv) on random actions."""
    envs = gym.vector.AsyncVectorEnv([PlainQuadrupedEnv] * num_envs)
    try:
        envs.reset(seed=seed)
        rng = np.random.default_rng(seed)
        actions = rng.uniform(-1.0, 1.0, (steps + 1, num_envs, 12)).astype(np.float32)
        envs.step(actions[0])
        start = time.perf_counter()
        for k in range(steps):
            envs.step(actions[k + 1])
        return num_envs * steps / (time.perf_counter() - start)
    finally:
        envs.close()


def quadruped_env(num_envs: int = 4096, gym_envs: tuple[int, ...] = (2, 8, 32),
                  gym_steps: int = 300) -> dict:
    """All three measurements and their ratios, one printed line."""
    ours = env_vs_raw(num_envs)
    gym_rates = {n: gymnasium_async(n, gym_steps) for n in gym_envs}
    best_n = max(gym_rates, key=gym_rates.get)
    out = {'env_vs_raw': ours,
           'gymnasium_async': {'steps_per_s_by_num_envs': gym_rates, 'best_num_envs': best_n,
                               'steps_per_s': gym_rates[best_n]}}
    out['ratio_env_vs_raw'] = ours['random']['ratio']
    out['ratio_env_vs_gymnasium'] = ours['random']['env_steps_per_s'] / gym_rates[best_n]
    rnd, zero = ours['random'], ours['zero']
    report('quadruped_env', f"random actions: env {rnd['env_steps_per_s']:,.0f} steps/s, raw "
           f"{rnd['raw_policy_steps_per_s']:,.0f} (ratio {rnd['ratio']:.2f}, goal >= 0.85), "
           f'Gymnasium Async x{best_n} {gym_rates[best_n]:,.0f} (ratio '
           f"{out['ratio_env_vs_gymnasium']:.1f}, goal >= 5); standing: env "
           f"{zero['env_steps_per_s']:,.0f}, raw {zero['raw_policy_steps_per_s']:,.0f} "
           f"(ratio {zero['ratio']:.2f})")
    return out


def main() -> None:
    """Measure, print one line, write quadruped_env.json."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--num-envs', type=int, default=4096)
    parser.add_argument('--gym-envs', type=int, nargs='+', default=[2, 8, 32])
    parser.add_argument('--gym-steps', type=int, default=300)
    args = parser.parse_args()
    torch.set_num_threads(1)
    out = quadruped_env(args.num_envs, tuple(args.gym_envs), args.gym_steps)
    write_results({'quadruped_env': out}, {'quadruped_env_vs_raw': out['ratio_env_vs_raw'],
                                           'quadruped_env_vs_gymnasium':
                                           out['ratio_env_vs_gymnasium']},
                  OUT_DIR / 'quadruped_env.json')


if __name__ == '__main__':
    main()
