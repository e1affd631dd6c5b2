"""Shared set-up of the warm-start tests: one-iteration source runs and fresh target learners."""

import copy

from sim2real.rl.ppo import PPO
from sim2real.rl.runner import RunnerCfg
from sim2real.tasks import get_task
from sim2real.training import build_env, run_config, train, TrainArgs

ENVS = 16


def one_iteration_run(task: str, tmp_path_factory):
    """One PPO iteration of task on 16 envs: a checkpoint with trained statistics."""
    run = tmp_path_factory.mktemp(task)
    train(TrainArgs(task, num_envs=ENVS, max_iterations=1, num_threads=1), run,
          progress_bar=False)
    return run


def learner(task: str):
    """A fresh PPO actor-critic for task, the run config train() would store for it and its
    env's contract."""
    from sim2real.mdp.contract import contract_from_env
    env = build_env(task, seed=1, num_envs=ENVS, num_threads=1)
    train_cfg = copy.deepcopy(get_task(task).train)
    ppo = PPO(env.obs_dims['policy'], env.obs_dims['critic'], env.num_actions, ENVS,
              train_cfg.ppo)
    config = run_config(TrainArgs(task), env, train_cfg, RunnerCfg())
    return ppo.actor_critic, config, contract_from_env(env)
