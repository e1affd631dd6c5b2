"""Quadruped env throughput: against raw mujoco.batch stepping and Gymnasium's AsyncVectorEnv.

Three ways to produce policy steps of `quadruped-flat` (urdf/quadruped.urdf, physics 0.005 s,
decimation 4, PD kp 25 / kd 0.5 at physics rate):

- the env (`sim2real.training.build_env`): observations, rewards, terminations, resets,
  randomization, metrics, all of it;
- raw: the env's own `mujoco.batch.Batch` (same model, same per-env fields, same thread
  count) stepped with a numpy PD to the same kind of joint targets and nothing else, the
  ceiling the env layer is measured against (goal: env / raw >= 0.85);
- Gymnasium: `gymnasium.vector.AsyncVectorEnv` over a plain single-robot `gymnasium.Env` on
  the same compiled model (one MjData per env, the same PD and decimation, a 45-wide
  observation, a tracking reward, tilt/height termination), the way a MuJoCo user writes it
  without a batch simulator, at the best of several env counts (goal: env / Gymnasium >= 5).

Workloads: actions uniform in [-1, 1] (targets q0 +- 0.25 rad, the robot stepping in place
and stumbling), zero (standing), and, with a shipped policy, the policy itself walking (the
work training does once the robot walks; only the step is timed, not the inference, on both
sides). Random thrashing makes the contact solver iterate 6x more than standing in raw MuJoCo
as well, so the physics, which both sides share, weighs most there. Prints one line and
writes bench/out/quadruped_env.json. Run: `.venv/bin/python -m bench.quadruped_env`.
"""

from __future__ import annotations

import argparse
import functools
import time
from pathlib import Path

import gymnasium as gym
import mujoco
import numpy as np
import torch

from bench.common import OUT_DIR, report, timed, write_results
from bench.raw_quadruped import KD as KD_NM_S_PER_RAD, KP as KP_NM_PER_RAD
from sim2real.evaluate import onnx_policy
from sim2real.sim.legged import legged_model
from sim2real.tasks import make_env_cfg
from sim2real.training import build_env

ROOT = Path(__file__).resolve().parents[1]
URDF = ROOT / 'urdf' / 'quadruped.urdf'
POLICY = ROOT / 'policies' / 'quadruped_flat.onnx'
TASK = 'quadruped-flat'
ACTION_SCALE_RAD = 0.25
ACTION_CLIP = 4.0
"""Actions are clipped to +-this before scaling, as the task does (its contract's clip)."""
PHYSICS_DT_S, DECIMATION = 0.005, 4


def env_vs_raw(num_envs: int = 4096, num_threads: int = 0, repeats: int = 25,
               seed: int = 0, block: int = 5) -> dict:
    """Policy steps/s of the env and of raw PD stepping of its Batch, random and zero actions.

    The two alternate in blocks of `block` steps on the same simulations, so both are timed
    on the same states (how many robots are down changes the contact work) and under the same
    machine conditions.
    """
    env = build_env(TASK, seed=seed, num_envs=num_envs, num_threads=num_threads)
    rng = torch.Generator().manual_seed(seed)
    out = {'task': TASK, 'num_envs': num_envs, 'decimation': env.cfg.decimation}
    for name, make in (('random', lambda: torch.rand(num_envs, env.num_actions,
                                                     generator=rng) * 2 - 1),
                       ('zero', lambda: torch.zeros(num_envs, env.num_actions))):
        env.reset()
        raw_step = _raw_stepper(env, name == 'random', seed)
        env.step(make())
        raw_step()
        rounds = max(1, repeats // block)
        env_s = raw_s = 0.0   # total seconds
        for _ in range(rounds):
            env_s += block * timed(lambda: env.step(make()), block, warmup=False)
            raw_s += block * timed(raw_step, block, warmup=False)
        steps = num_envs * block * rounds
        out[name] = {'env_steps_per_s': steps / env_s, 'raw_policy_steps_per_s': steps / raw_s,
                     'raw_physics_steps_per_s': steps * env.cfg.decimation / raw_s,
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


def env_with_policy(policy, num_envs: int = 4096, steps: int = 25, warmup: int = 50,
                    seed: int = 0) -> float:
    """Policy steps/s of the env driven by policy (its step only), after warmup steps."""
    env = build_env(TASK, seed=seed, num_envs=num_envs)
    obs = env.reset()['policy']
    step_s = 0.0
    for k in range(warmup + steps):
        actions = policy(obs)
        tick = time.perf_counter()
        obs = env.step(actions)[0]['policy']
        if k >= warmup:
            step_s += time.perf_counter() - tick
    return num_envs * steps / step_s


class PlainQuadrupedEnv(gym.Env):
    """One robot on one MjData: what a Gymnasium user writes for the same task."""

    def __init__(self, urdf: str = str(URDF), history: int = 1):
        """Compile the same model as the batched env; history: ticks of proprioception in
        the observation, newest first (the task's policy observes 3)."""
        self.model, self.info = legged_model(urdf, PHYSICS_DT_S)
        self.data = mujoco.MjData(self.model)
        self.history = history
        self._ticks: list[list[np.ndarray]] = []   # newest first
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, (15 + 30 * history,),
                                                np.float32)
        self.action_space = gym.spaces.Box(-ACTION_CLIP, ACTION_CLIP, (12,), np.float32)
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
        self._ticks = []
        return self._obs(), {}

    def step(self, action):
        """PD to q0 + 0.25 clip(a, -4, 4) at physics rate for DECIMATION steps; reward,
        termination."""
        info, data = self.info, self.data
        action = np.clip(action, -ACTION_CLIP, ACTION_CLIP)
        target = info.default_joint_pos_rad + ACTION_SCALE_RAD * action
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
        gravity_b = self._ticks[0][1]
        terminated = bool(gravity_b[2] > -np.cos(1.0) or data.qpos[2] < 0.15)
        return obs, reward, terminated, False, {}

    def _obs(self) -> np.ndarray:
        """Body rates, projected gravity, command, joint positions and velocities (each of
        the last `history` ticks, newest first; the first tick repeated after a reset),
        action: the task's policy layout."""
        data = self.data
        rot = np.empty(9)
        mujoco.mju_quat2Mat(rot, data.qpos[3:7])
        tick = [data.qvel[3:6] * 0.25, -rot.reshape(3, 3)[2],
                data.qpos[self.info.qpos_adr] - self.info.default_joint_pos_rad,
                data.qvel[self.info.qvel_adr] * 0.05]
        self._ticks = ([tick] + self._ticks)[:self.history] if self._ticks \
            else [tick] * self.history
        ang_vel, gravity, joint_pos, joint_vel = (
            np.concatenate([t[i] for t in self._ticks]) for i in range(4))
        return np.concatenate([ang_vel, gravity, self.command, joint_pos, joint_vel,
                               self.last_action]).astype(np.float32)


def gymnasium_async(num_envs: int, steps: int, seed: int = 0, policy=None,
                    warmup: int = 50, history: int = 1) -> float:
    """Policy steps/s of AsyncVectorEnv(num_envs x PlainQuadrupedEnv) (its step only).

    Random actions, or policy's actions on the envs' observations (of `history` ticks)
    after warmup steps.
    """
    # spawned workers: forking after MuJoCo's and onnxruntime's thread pools exist deadlocks
    envs = gym.vector.AsyncVectorEnv([functools.partial(PlainQuadrupedEnv, history=history)]
                                     * num_envs, context='spawn')
    try:
        obs, _ = envs.reset(seed=seed)
        rng = np.random.default_rng(seed)
        step_s = 0.0
        for k in range(warmup + steps):
            if policy is None:
                actions = rng.uniform(-1.0, 1.0, (num_envs, 12)).astype(np.float32)
            else:
                actions = policy(torch.from_numpy(obs)).numpy()
            tick = time.perf_counter()
            obs = envs.step(actions)[0]
            if k >= warmup:
                step_s += time.perf_counter() - tick
        return num_envs * steps / step_s
    finally:
        envs.close()


def quadruped_env(num_envs: int = 4096, gym_envs: tuple[int, ...] = (2, 8, 32),
                  gym_steps: int = 200, policy_path: Path | None = POLICY) -> dict:
    """All measurements and their ratios, one printed line (policy: when the file exists)."""
    ours = env_vs_raw(num_envs)
    gym_rates = {n: gymnasium_async(n, gym_steps) for n in gym_envs}
    best_n = max(gym_rates, key=gym_rates.get)
    out = {'env_vs_raw': ours,
           'gymnasium_async': {'steps_per_s_by_num_envs': gym_rates, 'best_num_envs': best_n,
                               'steps_per_s': gym_rates[best_n]}}
    out['ratio_env_vs_raw'] = ours['random']['ratio']
    out['ratio_env_vs_gymnasium'] = ours['random']['env_steps_per_s'] / gym_rates[best_n]
    # the ceiling of any env on this batch: bare PD stepping against the same Gymnasium run
    out['ratio_raw_vs_gymnasium'] = ours['random']['raw_policy_steps_per_s'] / gym_rates[best_n]
    rnd, zero = ours['random'], ours['zero']
    line = (f"random actions: env {rnd['env_steps_per_s']:,.0f} steps/s, raw "
            f"{rnd['raw_policy_steps_per_s']:,.0f} (ratio {rnd['ratio']:.2f}, goal >= 0.85), "
            f'Gymnasium Async x{best_n} {gym_rates[best_n]:,.0f} (ratio '
            f"{out['ratio_env_vs_gymnasium']:.1f}, goal >= 5; raw "
            f"{out['ratio_raw_vs_gymnasium']:.1f}); standing: env "
            f"{zero['env_steps_per_s']:,.0f}, raw {zero['raw_policy_steps_per_s']:,.0f} "
            f"(ratio {zero['ratio']:.2f})")
    if policy_path is not None and Path(policy_path).is_file():
        policy, _ = onnx_policy(policy_path)
        env_rate = env_with_policy(policy, num_envs)
        history = make_env_cfg(TASK).observations['policy'].terms['ang_vel_b'].history_length
        walk_rates = {n: gymnasium_async(n, gym_steps, policy=policy, history=history)
                      for n in gym_envs}
        walk_n = max(walk_rates, key=walk_rates.get)
        out['walking'] = {'policy': str(policy_path), 'env_steps_per_s': env_rate,
                          'gymnasium_steps_per_s_by_num_envs': walk_rates,
                          'gymnasium_best_num_envs': walk_n,
                          'ratio_env_vs_gymnasium': env_rate / walk_rates[walk_n]}
        line += (f'; walking ({Path(policy_path).name}): env {env_rate:,.0f}, Gymnasium Async '
                 f'x{walk_n} {walk_rates[walk_n]:,.0f} (ratio '
                 f"{out['walking']['ratio_env_vs_gymnasium']:.1f})")
    report('quadruped_env', line)
    return out


def main() -> None:
    """Measure, print one line, write quadruped_env.json."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--num-envs', type=int, default=4096)
    parser.add_argument('--gym-envs', type=int, nargs='+', default=[2, 8, 32])
    parser.add_argument('--gym-steps', type=int, default=200)
    parser.add_argument('--policy', type=Path, default=POLICY,
                        help='ONNX policy of the walking workload (skipped when missing)')
    args = parser.parse_args()
    torch.set_num_threads(1)
    out = quadruped_env(args.num_envs, tuple(args.gym_envs), args.gym_steps, args.policy)
    write_results({'quadruped_env': out}, quadruped_env_ratios(out),
                  OUT_DIR / 'quadruped_env.json')


def quadruped_env_ratios(out: dict) -> dict:
    """The flat ratio entries of one quadruped_env() result."""
    ratios = {'env_vs_raw_quadruped': out['ratio_env_vs_raw'],
              'env_vs_gymnasium_quadruped': out['ratio_env_vs_gymnasium']}
    if 'walking' in out:
        ratios['env_vs_gymnasium_quadruped_walking'] = out['walking']['ratio_env_vs_gymnasium']
    return ratios


if __name__ == '__main__':
    main()
