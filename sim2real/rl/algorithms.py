"""The algorithms `sim2real train --algo` runs, built from their typed configs."""

from __future__ import annotations

import torch
from torch import nn

from sim2real.algo_cfg import PolicyCfg, PPOCfg, SACCfg
from sim2real.rl.algorithm import Algorithm
from sim2real.rl.env import VecEnv
from sim2real.rl.networks import ActorCritic, ExportablePolicy
from sim2real.rl.ppo import PPO, PPOExplorer
from sim2real.rl.sac import SAC, SACExplorer, SACModel, SquashedPolicy

AlgorithmCfg = PPOCfg | SACCfg
"""The config of one algorithm."""
CONFIGS: dict[str, type] = {'ppo': PPOCfg, 'sac': SACCfg}
"""Algorithm name -> its config class."""
_CLASSES = {'ppo': (PPO, PPOExplorer), 'sac': (SAC, SACExplorer)}
"""Algorithm name -> (learner, acting half a rollout worker runs)."""


def algorithm_name(cfg: AlgorithmCfg) -> str:
    """The registered name of the algorithm a config configures."""
    for name, cls in CONFIGS.items():
        if type(cfg) is cls:
            return name
    raise TypeError(f'{type(cfg).__name__} configures no known algorithm ({", ".join(CONFIGS)})')


def build_algorithm(cfg: AlgorithmCfg, env: VecEnv,
                    generator: torch.Generator | None = None) -> Algorithm:
    """The algorithm cfg configures, sized for env's observation groups and actions."""
    dims = env.obs_dims
    cls = _CLASSES[algorithm_name(cfg)][0]
    return cls(dims['policy'], dims['critic'], env.num_actions, env.num_envs, cfg, generator)


def build_explorer(cfg: AlgorithmCfg, obs_dims: dict[str, int], num_actions: int):
    """The acting half of an algorithm, as a rollout worker runs it (act, observe, chunk)."""
    cls = _CLASSES[algorithm_name(cfg)][1]
    return cls(cfg, obs_dims['policy'], obs_dims['critic'], num_actions)


def cfg_from_dict(name: str, raw: dict) -> AlgorithmCfg:
    """An algorithm's config from its plain-dict form (as checkpoints store it)."""
    if name not in CONFIGS:
        raise ValueError(f'unknown algorithm "{name}"; known: {", ".join(CONFIGS)}')
    raw = dict(raw)
    policy = dict(raw.pop('policy', {}))
    for key in ('actor_hidden_dims', 'critic_hidden_dims'):
        if key in policy:
            policy[key] = tuple(policy[key])
    if 'log_std_range' in raw:
        raw['log_std_range'] = tuple(raw['log_std_range'])
    return CONFIGS[name](**raw, policy=PolicyCfg(**policy))


def run_algo_cfg(config: dict) -> tuple[str, AlgorithmCfg]:
    """The algorithm name and config of a run's stored config (runs before the seam: PPO)."""
    name = config.get('algo', 'ppo')
    return name, cfg_from_dict(name, config['algo_cfg'] if 'algo_cfg' in config
                               else config['ppo'])


def policy_from_state(state: dict, config: dict) -> nn.Module:
    """The deterministic deployment policy held by a checkpoint of a run (eval mode)."""
    name, cfg = run_algo_cfg(config)
    dims, num_actions = config['obs_dims'], config['num_actions']
    if name == 'ppo':
        model = ActorCritic(dims['policy'], dims['critic'], num_actions, cfg.policy)
        model.load_state_dict(state['model'])
        return ExportablePolicy(model.eval())
    model = SACModel(dims['policy'], dims['critic'], num_actions, cfg)
    model.load_state_dict(state['model'])
    return SquashedPolicy(model.eval())
