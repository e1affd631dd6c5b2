"""Start a PPO run's policy from an exported policy file (policy.onnx): fine-tuning a shipped
policy for a changed robot (other PD gains, a payload) when its training run is not at hand.

The file holds the deterministic actor and the observation normalizer (its mean, and
sqrt(var + eps) folded into one constant), not the action std or the normalizer's sample
count: the action std starts at the run's ``init_noise_std`` and the statistics are
weighted as if drawn from ``PRIOR_COUNT`` samples, so fine-tuning moves them slowly. After
loading, the run's deterministic actor must reproduce the file's outputs (onnxruntime)
within ``MATCH_TOL``, or nothing of the run is kept.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

import numpy as np
import torch
from onnx import numpy_helper

from sim2real.contract import Contract
from sim2real.onnx_io import cpu_session, load_model
from sim2real.rl.checkpoint import CheckpointError

log = logging.getLogger(__name__)

PRIOR_COUNT = 10 ** 8
"""Sample count the file's normalizer statistics stand for (the file does not store it)."""
MATCH_TOL = 1e-4
"""Largest |torch - onnxruntime| over the probe observations for a load to count."""
INTERFACE_FIELDS = ('observations', 'action.kind', 'action.size', 'action.clip',
                    'joint_names', 'policy_rate_hz', 'robot')
"""Contract fields that give the actor's inputs and outputs their meaning: a difference in
any refuses the start. Others (task, gains, robot parameters, noise) are reported."""


def _is_interface(path: str) -> bool:
    """Whether a contract leaf path ('observations[2].scale') is part of the interface."""
    if path.endswith('.noise_std'):
        return False
    return any(path == f or path.startswith((f + '.', f + '[')) for f in INTERFACE_FIELDS)


def _graph_constants(model) -> dict[str, np.ndarray]:
    """Initializers and Constant node outputs of a graph, by name."""
    out = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type == 'Constant':
            for attr in node.attribute:
                if attr.name == 'value':
                    out[node.output[0]] = numpy_helper.to_array(attr.t)
    return out


def onnx_policy_tensors(path: str | Path) -> dict[str, torch.Tensor]:
    """Actor weights ('actor.*') and normalizer statistics ('mean', 'std') of a file."""
    model = load_model(path)
    consts = _graph_constants(model)
    out = {name: torch.from_numpy(value.copy()) for name, value in consts.items()
           if name.startswith('actor.')}
    divs = [n for n in model.graph.node if n.op_type == 'Div']
    if 'normalizer.mean' in consts and divs and divs[0].input[1] in consts:
        out['mean'] = torch.from_numpy(consts['normalizer.mean'].copy())
        out['std'] = torch.from_numpy(consts[divs[0].input[1]].copy())
    if not out:
        raise CheckpointError(f'{path}: no actor weights (actor.*) in the graph')
    return out


def interface_differences(stored: Contract, ours: Contract) -> tuple[list[str], list[str]]:
    """(fields that refuse a start, fields that only differ) between two contracts."""
    from sim2real.policy_io import contract_differences
    paths = contract_differences(stored, ours)
    refused = [p for p in paths if _is_interface(p)]
    return refused, [p for p in paths if p not in refused]


def _load(actor_critic, tensors: dict[str, torch.Tensor], path: Path) -> None:
    """Copy the file's actor weights and statistics into actor_critic."""
    state = actor_critic.state_dict()
    actor = {k: v for k, v in tensors.items() if k.startswith('actor.')}
    expected = {k: tuple(v.shape) for k, v in state.items() if k.startswith('actor.')}
    got = {k: tuple(v.shape) for k, v in actor.items()}
    if got != expected:
        raise CheckpointError(f'{path}: its actor layers {got} do not fit this run: '
                              f'{expected} (actor_hidden_dims)')
    with torch.no_grad():
        for name, value in actor.items():
            state[name].copy_(value)
        norm = actor_critic.policy_normalizer
        if 'mean' in tensors:
            norm.mean.copy_(tensors['mean'])
            norm.var.copy_((tensors['std'].double() ** 2 - norm.eps).clamp(min=0.0).float())
            norm.count.fill_(PRIOR_COUNT)


def _max_deviation(actor_critic, path: Path) -> float:
    """Largest |run's deterministic actor - file| on observations around the statistics."""
    from sim2real.rl.networks import ExportablePolicy
    norm = actor_critic.policy_normalizer
    gen = torch.Generator().manual_seed(0)
    probe = norm.mean + torch.randn(256, norm.num_features, generator=gen) * norm.var.sqrt()
    with torch.no_grad():
        ours = ExportablePolicy(actor_critic)(probe).numpy()
    session = cpu_session(path)
    theirs = session.run(None, {session.get_inputs()[0].name: probe.numpy()})[0]
    return float(np.abs(ours - theirs).max())


def warm_start_from_onnx(actor_critic, path: str | Path, stored: Contract,
                         ours: Contract) -> None:
    """Load a policy file's actor and normalizer into a PPO actor-critic, after checking
    that the file's contract gives the policy the same inputs and outputs as this run's."""
    path = Path(path)
    refused, differing = interface_differences(stored, ours)
    if refused:
        raise ValueError(f'cannot start this policy from {path}: its interface differs:\n  '
                         + '\n  '.join(refused))
    if not hasattr(actor_critic, 'policy_normalizer'):
        raise ValueError(f'{path}: a policy file starts PPO runs only (this run trains '
                         f'{type(actor_critic).__name__})')
    before = {k: v.clone() for k, v in actor_critic.state_dict().items()}
    _load(actor_critic, onnx_policy_tensors(path), path)
    deviation = _max_deviation(actor_critic, path)
    if deviation > MATCH_TOL:
        actor_critic.load_state_dict(before)
        raise CheckpointError(f'{path}: loaded into the actor of this run, its outputs differ '
                              f'from the file by {deviation:.2g} (> {MATCH_TOL:g}): another '
                              'activation or normalizer')
    if differing:   # one name per field, not per element: 'action.params.kp_nm_per_rad'
        fields = sorted({re.sub(r'\[\d+\]', '', p) for p in differing})
        log.warning('starting from %s, trained where these contract fields differ: %s',
                    path, ', '.join(fields))
    log.info('policy (actor, observation normalizer) from %s; matches the file within %.1e; '
             'action std from init_noise_std, critic and optimizer fresh', path, deviation)
