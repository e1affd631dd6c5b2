"""Load trained policies from run directories and export them with their contract."""

from __future__ import annotations

import logging
from pathlib import Path

from sim2real.contract import Contract
from sim2real.export.onnx_policy import export_onnx, verify_onnx
from sim2real.mdp.contract import contract_from_env
from sim2real.rl.checkpoint import CheckpointError, latest_checkpoint, load_checkpoint
from sim2real.rl.networks import ActorCritic, ExportablePolicy
from sim2real.training import build_env, ppo_cfg_from_dict, TrainArgs

log = logging.getLogger(__name__)


def load_run(run_dir: str | Path) -> tuple[ActorCritic, dict]:
    """The newest checkpoint's actor-critic (eval mode) and the run's stored config."""
    run_dir = Path(run_dir)
    path = latest_checkpoint(run_dir)
    if path is None:
        raise CheckpointError(f'{run_dir}: no checkpoint under {run_dir / "checkpoints"}')
    state = load_checkpoint(path)
    config = state['config']
    ppo_cfg = ppo_cfg_from_dict(config['ppo'])
    dims = config['obs_dims']
    model = ActorCritic(dims['policy'], dims['critic'], config['num_actions'], ppo_cfg.policy)
    model.load_state_dict(state['model'])
    return model.eval(), config


def run_contract(config: dict) -> Contract:
    """The contract of a run, derived from a one-env instance of its training env."""
    args = TrainArgs(**config['args'])
    env = build_env(args.task, seed=0, num_envs=1, action=args.action, num_threads=1)
    return contract_from_env(env)


def export_run(run_dir: str | Path, out: str | Path | None = None,
               num_samples: int = 1000, tolerance: float = 1e-5) -> tuple[Path, float]:
    """Export the run's policy to ONNX and verify it; returns (path, max abs difference)."""
    model, config = load_run(run_dir)
    policy = ExportablePolicy(model)
    contract = run_contract(config)
    out = Path(out) if out is not None else Path(run_dir) / 'policy.onnx'
    export_onnx(policy, contract, out)
    max_abs = verify_onnx(policy, out, num_samples=num_samples, tolerance=tolerance)
    log.info('exported %s; onnxruntime vs torch max |diff| = %.3g', out, max_abs)
    return out, max_abs
