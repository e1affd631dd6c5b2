"""Reinforcement learning: PPO and SAC behind one algorithm interface, one collector and runner."""

from sim2real.rl.checkpoint import (
    CheckpointError, checkpoint_path, latest_checkpoint, list_checkpoints, load_checkpoint,
    prune_checkpoints, save_checkpoint,
)
from sim2real.rl.env import VecEnv
from sim2real.rl.gae import compute_gae
from sim2real.rl.losses import (
    approx_kl, clip_fraction, explained_variance, surrogate_loss, value_loss,
)
from sim2real.rl.networks import ActorCritic, ExportablePolicy, PolicyCfg
from sim2real.rl.normalizer import EmpiricalNormalizer
from sim2real.rl.ppo import PPO, PPOCfg
from sim2real.rl.runner import Runner, RunnerCfg
from sim2real.rl.sac import SAC
from sim2real.rl.storage import RolloutStorage

__all__ = [
    'PPO', 'ActorCritic', 'CheckpointError', 'EmpiricalNormalizer', 'ExportablePolicy',
    'PPOCfg', 'Runner', 'SAC', 'PolicyCfg', 'RolloutStorage', 'RunnerCfg', 'VecEnv',
    'approx_kl', 'checkpoint_path', 'clip_fraction', 'compute_gae', 'explained_variance',
    'latest_checkpoint', 'list_checkpoints', 'load_checkpoint', 'prune_checkpoints',
    'save_checkpoint', 'surrogate_loss', 'value_loss',
]
