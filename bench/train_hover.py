"""Wall clock of sim2real training (PPO or SAC) until its deterministic policy reaches 90 %
success on a quadrotor task (hover by default; `quadrotor-track` too).

Every eval_every iterations the current policy is evaluated on 256 episodes under full
randomization (the same measure as `sim2real eval`); evaluation time is not counted.
"""

from __future__ import annotations

import copy
import tempfile
import time

from bench.common import report
from sim2real.device import device_scope
from sim2real.evaluate import rollout_episodes
from sim2real.rl.runner import Runner, RunnerCfg
from sim2real.tasks import get_task
from sim2real.training import build_env, edge_options

TASK = 'quadrotor-hover'
TARGET_SUCCESS = 0.9
SAC_EVAL_EVERY = 1000
"""SAC evaluates every this many iterations (an iteration is one env step of every env)."""
ANCHORS = {TASK: 'goal <= 60 s; anchor: Learning to Fly in Seconds, 18 s in C++ on a laptop'}
"""What each task's wall clock is compared with, where something published compares."""


class PeriodicEval:
    """stop_when callback: evaluate every few iterations, stop at the target success."""

    def __init__(self, policy_fn, every: int, target: float, episodes: int = 256,
                 backend: str = 'mujoco', device: str = 'cpu', task: str = TASK):
        """policy_fn() returns the current deterministic policy callable."""
        self.env = build_env(task, seed=12345, num_envs=episodes, backend=backend,
                             device=device)
        self.policy_fn, self.every, self.target = policy_fn, every, target
        self.eval_s = 0.0
        self.checks: list[dict] = []

    def __call__(self, entry: dict) -> bool:
        """True once the evaluated success rate reaches the target."""
        if entry['iteration'] % self.every:
            return False
        start = time.monotonic()
        with device_scope(self.env.device):
            result = rollout_episodes(self.env, self.policy_fn())
        self.eval_s += time.monotonic() - start
        self.checks.append({'iteration': entry['iteration'], 'env_steps': entry['env_steps'],
                            'success_rate': result['success_rate']})
        return result['success_rate'] >= self.target


def time_to_success(seed: int = 0, max_seconds: float = 900.0, eval_every: int = 10,
                    target: float = TARGET_SUCCESS, backend: str = 'mujoco',
                    device: str = 'cpu', task: str = TASK, algo: str | None = None) -> dict:
    """Train a quadrotor task with its defaults (algo: the task's by default) until
    evaluation reaches target."""
    train = copy.deepcopy(get_task(task).train)
    train.algo = algo or train.algo
    env = build_env(task, seed=seed, num_envs=train.schedule('num_envs'), backend=backend,
                    device=device, **edge_options(train))
    runner_cfg = RunnerCfg(max_iterations=10 ** 6, seed=seed, save_interval=10 ** 6,
                           progress_bar=False, learn_threads=train.learn_threads,
                           act_threads=train.act_threads)
    with tempfile.TemporaryDirectory() as run_dir, device_scope(env.device):
        runner = Runner(env, train.algo_cfg, runner_cfg, run_dir)
        check = PeriodicEval(lambda: runner.algo.inference_policy(), eval_every, target,
                             backend=backend, device=device, task=task)
        summary = runner.learn(max_seconds=max_seconds, stop_when=check)
    wall_s = summary['wall_s'] - check.eval_s
    reached = bool(check.checks) and check.checks[-1]['success_rate'] >= target
    out = {'task': task, 'algo': train.algo, 'backend': backend, 'device': device,
           'wall_s': wall_s,
           'reached': reached,
           'env_steps': summary['env_steps'], 'iterations': summary['iterations'],
           'checks': check.checks}
    anchor = ANCHORS.get(task, 'no anchor yet')
    report(f'train[{task},{train.algo},{backend},{device}]',
           f"{'reached' if reached else 'NOT reached'} "
           f'{target:.0%} eval success in {wall_s:.0f} s ({summary["env_steps"]:,} steps) '
           f'({anchor})')
    return out
