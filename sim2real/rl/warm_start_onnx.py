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

import dataclasses
import logging
import re
from pathlib import Path

import numpy as np
import torch
from onnx import numpy_helper

from sim2real.contract import Contract
from sim2real.contract_digest import contract_differences
from sim2real.onnx_io import cpu_session, load_model
from sim2real.rl.checkpoint import CheckpointError
from sim2real.rl.widen_inputs import appended, first_layer_key, widen_policy_inputs

log = logging.getLogger(__name__)

PRIOR_COUNT = 10 ** 8
"""Sample count the file's normalizer statistics stand for (the file does not store it)."""
MATCH_TOL = 1e-4
"""Largest |torch - onnxruntime| over the probe observations for a load to count."""
INTERFACE_FIELDS = ('observations', 'action.kind', 'action.size', 'action.clip',
                    'joint_names', 'default_joint_pos_rad', 'policy_rate_hz', 'robot')
"""Contract fields that give the actor's inputs and outputs their meaning: a difference in
any refuses the start. So do the action term's formulas, scales, default pose and rate or
speed ranges (ACTION_MEANING); the rest (task, gains, robot parameters, noise, trained
delays) is reported."""
ACTION_MEANING = re.compile(r'^action\.params\.([a-z_]*formula|[a-z_]*scale|'
                            r'default_joint_pos_rad|[a-z_]*_rad_s)(\[\d+\])?$')
"""Action parameters that map an output to a command (not properties of the plant)."""


def _is_interface(path: str) -> bool:
    """Whether a contract leaf path ('observations[2].scale') is part of the interface."""
    if path.endswith('.noise_std'):
        return False
    if ACTION_MEANING.match(path):
        return True
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
    # the normalizer: Sub(obs, normalizer.mean), then Div by the folded sqrt(var + eps)
    subs = {n.output[0] for n in model.graph.node
            if n.op_type == 'Sub' and 'normalizer.mean' in n.input}
    divs = [n for n in model.graph.node if n.op_type == 'Div' and n.input[0] in subs
            and n.input[1] in consts]
    if divs:
        out['mean'] = torch.from_numpy(consts['normalizer.mean'].copy())
        out['std'] = torch.from_numpy(consts[divs[0].input[1]].copy())
    if not out:
        raise CheckpointError(f'{path}: no actor weights (actor.*) in the graph')
    return out


def interface_differences(stored: Contract, ours: Contract) -> tuple[list[str], list[str]]:
    """(fields that refuse a start, fields that only differ) between two contracts."""
    paths = contract_differences(stored, ours)
    refused = [p for p in paths if _is_interface(p)]
    return refused, [p for p in paths if p not in refused]


def added_terms(stored: Contract, ours: Contract) -> list | None:
    """Observation terms our contract appends to the file's (the file's terms first, equal
    but for their noise, docstrings and training bands), or None."""
    def meaning(terms):
        """The terms without what does not change their values."""
        return [dataclasses.replace(t, noise_std=0.0, doc='', band=None) for t in terms]
    return appended(meaning(stored.observations), meaning(ours.observations))


def _load(actor_critic, tensors: dict[str, torch.Tensor], path: Path,
          added_inputs: int = 0) -> None:
    """Copy the file's actor weights and statistics into actor_critic, with zero weights on
    the added_inputs last inputs that our contract appends to the file's."""
    state = actor_critic.state_dict()
    norm = actor_critic.policy_normalizer
    if added_inputs:
        reads = tensors[first_layer_key(tensors)].shape[1]
        if reads != norm.num_features - added_inputs:
            raise CheckpointError(f'{path}: its actor reads {reads} inputs where its contract '
                                  f'has {norm.num_features - added_inputs}')
        tensors = widen_policy_inputs(tensors, norm.num_features, std_eps=norm.eps)
    actor = {k: v for k, v in tensors.items() if k.startswith('actor.')}
    expected = {k: tuple(v.shape) for k, v in state.items() if k.startswith('actor.')}
    got = {k: tuple(v.shape) for k, v in actor.items()}
    if got != expected:
        raise CheckpointError(f'{path}: its actor layers {got} do not fit this run: '
                              f'{expected} (actor_hidden_dims)')
    with torch.no_grad():
        for name, value in actor.items():
            state[name].copy_(value)
        if actor_critic.cfg.normalize_obs and 'mean' not in tensors:
            raise CheckpointError(f'{path}: the file has no observation normalizer and this '
                                  'run normalizes its observations (policy.normalize_obs)')
        if 'mean' in tensors:
            norm.mean.copy_(tensors['mean'])
            norm.var.copy_((tensors['std'].double() ** 2 - norm.eps).clamp(min=0.0).float())
            norm.count.fill_(PRIOR_COUNT)


def _max_deviation(actor_critic, path: Path) -> float:
    """Largest |run's deterministic actor - file| on observations around the statistics."""
    from sim2real.rl.networks import ExportablePolicy
    policy = ExportablePolicy(actor_critic).cpu()
    norm = policy.normalizer
    gen = torch.Generator().manual_seed(0)
    # out to 3 standard deviations, so a normalizer clip at another value shows
    noise = torch.randn(256, norm.num_features, generator=gen, device='cpu')
    probe = (norm.mean + 3.0 * noise * norm.var.sqrt()).float()
    with torch.no_grad():
        ours = policy(probe).numpy()
    session = cpu_session(path)
    inputs = session.get_inputs()[0]   # the file reads the first of ours when we append terms
    theirs = session.run(None, {inputs.name: probe[:, :inputs.shape[-1]].numpy()})[0]
    return float(np.abs(ours - theirs).max())


def warm_start_from_onnx(actor_critic, path: str | Path, stored: Contract,
                         ours: Contract) -> None:
    """Load a policy file's actor and normalizer into a PPO actor-critic, after checking
    that the file's contract gives the policy the same inputs and outputs as this run's."""
    path = Path(path)
    added = added_terms(stored, ours)
    shared = ours if added is None else dataclasses.replace(
        ours, observations=ours.observations[:len(stored.observations)])
    refused, differing = interface_differences(stored, shared)
    if refused:
        raise ValueError(f'cannot start this policy from {path}: its interface differs:\n  '
                         + '\n  '.join(refused))
    from sim2real.rl.networks import ActorCritic
    if not isinstance(actor_critic, ActorCritic):
        raise ValueError(f'{path}: a policy file starts PPO runs only (this run trains '
                         f'{type(actor_critic).__name__})')
    before = {k: v.clone() for k, v in actor_critic.state_dict().items()}
    try:
        added_inputs = sum(t.size for t in added or ())
        _load(actor_critic, onnx_policy_tensors(path), path, added_inputs)
        deviation = _max_deviation(actor_critic, path)
    except BaseException:   # nothing of the file stays in the run
        actor_critic.load_state_dict(before)
        raise
    if deviation > MATCH_TOL:
        actor_critic.load_state_dict(before)
        raise CheckpointError(f'{path}: loaded into the actor of this run, its outputs differ '
                              f'from the file by {deviation:.2g} (> {MATCH_TOL:g}): another '
                              'activation or normalizer')
    if differing:   # one name per field, not per element: 'action.params.kp_nm_per_rad'
        fields = sorted({re.sub(r'\[\d+\]', '', p) for p in differing})
        log.warning('starting from %s, trained where these contract fields differ: %s',
                    path, ', '.join(fields))
    if added is not None:
        log.info('policy observation terms added after the file ones: %s (zero weights)',
                 ', '.join(t.name for t in added))
    log.info('policy (actor, observation normalizer) from %s; matches the file within %.1e; '
             'action std from init_noise_std, critic and optimizer fresh', path, deviation)
