"""ONNX export of a policy trained by rsl_rl on our env, with the env's contract inside.

The file is what ``sim2real export`` writes for our own policies: input 'obs' (the 'policy'
observation group), output 'actions', rsl_rl's observation normalizer inside the graph, the
contract (``contract_from_env``) bound to the graph by ``export_onnx``. So it deploys through
``policy_node`` and evaluates with ``sim2real eval FILE.onnx`` like them. rsl_rl itself is not
imported: the actor is used through its own ``as_onnx`` export view.
"""

from __future__ import annotations

import logging
from pathlib import Path

import torch

from sim2real.contract import ContractError
from sim2real.export.onnx_policy import export_onnx, verify_onnx
from sim2real.mdp.contract import contract_from_env

log = logging.getLogger(__name__)


def export_rsl_rl_policy(policy, env, path: str | Path, num_samples: int = 1000,
                         tolerance: float = 1e-5) -> tuple[Path, float]:
    """Write an rsl_rl actor (``runner.get_inference_policy()``: an MLPModel, normalizer
    included) trained on env (an RLEnv or its RslRlVecEnv) to path as ONNX with env's
    contract, and verify it; returns (path, max |onnxruntime - torch|).

    env must be the env the actor was trained on (same task and action interface): its
    contract is what the file will promise. The observation and action widths are checked;
    two interfaces of the same width (thrust + rates and rotor speeds, both 4) cannot be told
    apart from the actor alone."""
    env = getattr(env, 'unwrapped', env)
    if getattr(policy, 'is_recurrent', False):
        raise ContractError('a recurrent rsl_rl actor cannot be exported: the deploy runtime '
                            'runs a feed-forward graph obs -> actions')
    groups = list(getattr(policy, 'obs_groups', []))
    if groups != ['policy']:
        raise ContractError(f'the rsl_rl actor reads the observation groups {groups}; a '
                            f"deployable actor reads only ['policy'] (train with obs_groups "
                            f"{{'actor': ['policy'], 'critic': ['critic']}})")
    contract = contract_from_env(env)
    graph = policy.as_onnx(verbose=False).to('cpu').eval()
    if graph.input_size != contract.observation_size:
        raise ContractError(f'observation_size: the contract of {contract.task} has '
                            f'{contract.observation_size} values, the actor reads '
                            f'{graph.input_size}')
    with torch.no_grad():
        width = graph(torch.zeros(1, graph.input_size)).shape[-1]
    if width != contract.action.size:
        raise ContractError(f'action.size: the contract action ({contract.action.kind}) '
                            f'has {contract.action.size} values, the actor outputs {width}')
    path = export_onnx(graph, contract, path)
    max_abs = verify_onnx(graph, path, num_samples=num_samples, tolerance=tolerance)
    log.info('exported %s; onnxruntime vs torch max |diff| = %.3g', path, max_abs)
    return path, max_abs
