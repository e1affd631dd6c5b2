"""Load trained policies from run directories and export them with their contract."""

from __future__ import annotations

import logging
from pathlib import Path

import onnx
from torch import nn

from sim2real.atomic import atomic_path
from sim2real.contract import Contract, CONTRACT_KEY, ContractError
from sim2real.contract_digest import (
    bind_contract, contract_differences, graph_sha256, metadata, stored_graph_sha256)
from sim2real.export.observation_band import (
    band_envs, BAND_SAMPLES, BAND_SEED, measure_bands)
from sim2real.export.onnx_policy import export_onnx, onnx_callable, verify_onnx
from sim2real.onnx_io import load_model
from sim2real.mdp.contract import contract_from_env
from sim2real.rl.algorithms import policy_from_state
from sim2real.rl.checkpoint import load_checkpoint, select_checkpoint
from sim2real.training import build_env, task_env_sets, TrainArgs

log = logging.getLogger(__name__)


def load_run(run_dir: str | Path, iteration: int | None = None
             ) -> tuple[nn.Module, dict, Path]:
    """A checkpoint's deterministic policy (eval mode: observations in, actions out,
    normalizer inside), the run's stored config and the checkpoint's path (iteration None:
    the newest checkpoint)."""
    path = select_checkpoint(run_dir, iteration)
    state = load_checkpoint(path)
    config = state['config']
    log.info('using checkpoint %s (iteration %d)', path, int(state.get('iteration', -1)))
    return policy_from_state(state, config), config, path


def run_contract(config: dict, policy: nn.Module | None = None,
                 band_samples: int = BAND_SAMPLES) -> Contract:
    """The contract of a run, derived from its training env; with policy (and band_samples
    > 0), each term's training band measured by rolling policy out there
    (`observation_band`)."""
    args = TrainArgs(**config['args'])
    measure = policy is not None and band_samples > 0
    env = build_env(args.task, seed=BAND_SEED, num_envs=band_envs(band_samples, measure),
                    action=args.action, num_threads=0 if measure else 1,
                    sets=task_env_sets(args.sets))
    contract = contract_from_env(env)
    return measure_bands(contract, env, policy, band_samples) if measure else contract


def export_run(run_dir: str | Path, out: str | Path | None = None,
               num_samples: int = 1000, tolerance: float = 1e-5,
               iteration: int | None = None, band_samples: int = BAND_SAMPLES
               ) -> tuple[Path, float, Path]:
    """Export a checkpoint's policy (iteration None: the newest) to ONNX with its training
    band measured over band_samples observations (0: none) and verify it; returns (path,
    max abs difference, the checkpoint's path)."""
    policy, config, checkpoint = load_run(run_dir, iteration)
    contract = run_contract(config, policy, band_samples)
    out = Path(out) if out is not None else Path(run_dir) / 'policy.onnx'
    export_onnx(policy, contract, out)
    max_abs = verify_onnx(policy, out, num_samples=num_samples, tolerance=tolerance)
    log.info('exported %s; onnxruntime vs torch max |diff| = %.3g', out, max_abs)
    return out, max_abs, checkpoint


def task_contract(task: str, action_kind: str, model: onnx.ModelProto | None = None,
                  band_samples: int = BAND_SAMPLES) -> Contract:
    """The contract the registered task gives today for an action kind; with model (an
    ONNX policy of that task, and band_samples > 0), each term's training band measured by
    rolling it out."""
    measure = model is not None and band_samples > 0
    env = build_env(task, seed=BAND_SEED, num_envs=band_envs(band_samples, measure),
                    action=action_kind, num_threads=0 if measure else 1)
    contract = contract_from_env(env)
    if not measure:
        return contract
    return measure_bands(contract, env, onnx_callable(model), band_samples)


def rebind_onnx(src: str | Path, out: str | Path | None = None,
                trust_graph: bool = False, band_samples: int = BAND_SAMPLES
                ) -> tuple[Path, str, str]:
    """Bind an ONNX policy's graph to the contract its task gives today (re-export without
    the run); returns (path, graph SHA-256, how the graph was vouched for).

    The contract in the file is read, not trusted: the task named in it derives the contract
    afresh, and any difference is refused by field. The graph is kept byte for byte. A file
    whose digest binds the graph proves it; a file exported before the digest existed
    cannot, so it is bound only with trust_graph, and the caller should compare the graph
    SHA-256 with the one it expects (the policy cards list theirs).
    """
    src = Path(src)
    model = load_model(src)
    if CONTRACT_KEY not in metadata(model):
        raise ContractError(f'{src}: no "{CONTRACT_KEY}" metadata; not a sim2real policy')
    graph = graph_sha256(model)
    bound = stored_graph_sha256(model, str(src))
    if bound is not None and bound != graph:
        raise ContractError(f'graph: the graph of {src} changed after export (its digest '
                            f'says otherwise); re-export it from its run directory instead')
    if bound is None and not trust_graph:
        raise ContractError(
            f'graph: {src} has no digest, so nothing shows its graph is the one exported; '
            f're-export it from its run directory, or pass --trust-graph to bind it anyway '
            f'(then compare graph_sha256 {graph} with the one you expect)')
    stored = Contract.from_json(metadata(model)[CONTRACT_KEY])
    fresh = task_contract(stored.task, stored.action.kind)
    differ = contract_differences(stored, fresh)
    if differ:
        raise ContractError(
            f'{differ[0]}: the contract in {src} differs from the one task "{stored.task}" '
            f'gives ({", ".join(differ)}); re-export it from its run directory instead')
    fresh = task_contract(stored.task, stored.action.kind, model, band_samples)   # + bands
    out = Path(out) if out is not None else src
    with atomic_path(out) as tmp:
        onnx.save(bind_contract(model, fresh), str(tmp))
    return out, graph, 'verified by its digest' if bound else 'unverified (--trust-graph)'
