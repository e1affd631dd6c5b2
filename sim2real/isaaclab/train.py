"""Train one of our tasks in Isaac Lab 3.0 with rsl_rl, writing the run as Isaac Lab does.

    python -m sim2real.isaaclab.train RUN_DIR [--num-envs N] [--iterations N] [--seed S]
        [--device cpu] [--resume]

RUN_DIR holds the task file our side wrote (`sim2real train TASK --backend isaaclab` writes
it and runs this in the Isaac Lab venv named by SIM2REAL_ISAACLAB_PYTHON). Written beside it,
as Isaac Lab's own `train.py` writes them: params/env.yaml, params/agent.yaml, model_<it>.pt
and TensorBoard events; and params/joint_names.yaml, the articulation's joint order as the
simulator resolved it (env.yaml holds only the patterns). Kit-less, Newton's MuJoCo-Warp
solver; device cpu unless told.
"""

from __future__ import annotations

import argparse
import logging
import re
from pathlib import Path

import yaml

from sim2real.isaaclab.scene import opened_env, read_task_file

log = logging.getLogger(__name__)


def agent_cfg(task: dict, iterations: int, seed: int, device: str, save_interval: int = 50):
    """rsl_rl's runner config from our task's PPO settings (network sizes, optimizer,
    schedule, rollout length, initial action std, observation normalization) and its action
    clip (rsl_rl's env wrapper clips the raw actions, as our action term does)."""
    from isaaclab_rl.rsl_rl import (
        RslRlMLPModelCfg, RslRlOnPolicyRunnerCfg, RslRlPpoAlgorithmCfg)
    from isaaclab_rl.rsl_rl.utils import check_rsl_rl_version, handle_deprecated_rsl_rl_cfg
    ppo = task['train']['ppo']
    net = ppo['policy']
    gaussian = RslRlMLPModelCfg.GaussianDistributionCfg(init_std=float(net['init_noise_std']))
    cfg = RslRlOnPolicyRunnerCfg(
        seed=seed, device=device, num_steps_per_env=int(ppo['num_steps_per_env']),
        max_iterations=iterations, save_interval=save_interval, experiment_name=task['task'],
        obs_groups={'actor': ['policy'], 'critic': ['policy', 'critic']},
        clip_actions=task['contract']['action']['params'].get('clip'),
        actor=RslRlMLPModelCfg(hidden_dims=list(net['actor_hidden_dims']),
                               activation=net['activation'],
                               obs_normalization=bool(net['normalize_obs']),
                               distribution_cfg=gaussian),
        critic=RslRlMLPModelCfg(hidden_dims=list(net['critic_hidden_dims']),
                                activation=net['activation'],
                                obs_normalization=bool(net['normalize_obs'])),
        algorithm=RslRlPpoAlgorithmCfg(
            value_loss_coef=ppo['value_loss_coef'],
            use_clipped_value_loss=ppo['use_clipped_value_loss'],
            clip_param=ppo['clip_param'], entropy_coef=ppo['entropy_coef'],
            num_learning_epochs=ppo['num_learning_epochs'],
            num_mini_batches=ppo['num_mini_batches'], learning_rate=ppo['learning_rate'],
            schedule=ppo['schedule'], gamma=ppo['gamma'], lam=ppo['lam'],
            desired_kl=ppo['desired_kl'], max_grad_norm=ppo['max_grad_norm']))
    return handle_deprecated_rsl_rl_cfg(cfg, check_rsl_rl_version())


def newest_checkpoint(run_dir: Path) -> Path | None:
    """The model_<it>.pt with the highest iteration, or None."""
    found = [(int(m.group(1)), p) for p in run_dir.glob('model_*.pt')
             if (m := re.fullmatch(r'model_(\d+)\.pt', p.name))]
    return max(found)[1] if found else None


def train(run_dir: Path, num_envs: int, iterations: int, seed: int, device: str = 'cpu',
          resume: bool = False, save_interval: int = 50) -> Path:
    """Build, train and write the run (iterations in total, a resumed run's included);
    return the last checkpoint's path."""
    from isaaclab.utils.io import dump_yaml
    from isaaclab_rl.rsl_rl import RslRlVecEnvWrapper
    from isaaclab_rl.rsl_rl.utils import create_rsl_rl_runner
    task = read_task_file(run_dir)
    agent = agent_cfg(task, iterations, seed, device, save_interval)
    with opened_env(task, run_dir, num_envs, device, seed) as (env, env_cfg):
        params = run_dir / 'params'
        dump_yaml(str(params / 'env.yaml'), env_cfg)
        dump_yaml(str(params / 'agent.yaml'), agent)
        joints = list(env.scene['robot'].joint_names)
        (params / 'joint_names.yaml').write_text(yaml.safe_dump(joints))
        runner = create_rsl_rl_runner(RslRlVecEnvWrapper(env, clip_actions=agent.clip_actions),
                                      agent, log_dir=str(run_dir))
        start = newest_checkpoint(run_dir) if resume else None
        remaining = iterations
        if start is not None:
            runner.load(str(start))
            remaining = max(0, iterations - runner.current_learning_iteration - 1)
            log.info('resuming from %s: %d of %d iterations left', start, remaining,
                     iterations)
        runner.learn(num_learning_iterations=remaining, init_at_random_ep_len=True)
        last = run_dir / f'model_{runner.current_learning_iteration}.pt'
        runner.save(str(last))
    return last


def main(argv: list[str] | None = None) -> int:
    """Command line entry."""
    parser = argparse.ArgumentParser(prog='python -m sim2real.isaaclab.train',
                                     description=__doc__.split('\n\n')[0])
    parser.add_argument('run_dir', type=Path)
    parser.add_argument('--num-envs', type=int, default=None,
                        help="envs (default: the task's training default)")
    parser.add_argument('--iterations', type=int, default=None,
                        help="PPO iterations in total (default: the task's)")
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--device', default='cpu', help='cpu or cuda:N')
    parser.add_argument('--resume', action='store_true',
                        help='continue from the newest model_<it>.pt in RUN_DIR')
    parser.add_argument('--save-interval', type=int, default=None,
                        help="write model_<it>.pt every N iterations (default: the task's)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format='%(levelname)s %(name)s: %(message)s')
    task = read_task_file(args.run_dir)
    last = train(args.run_dir, args.num_envs or int(task['train']['num_envs']),
                 args.iterations or int(task['train']['max_iterations']), args.seed,
                 args.device, args.resume,
                 args.save_interval or int(task['train'].get('save_interval') or 50))
    log.info('wrote %s', last)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
