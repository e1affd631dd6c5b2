"""Start a policy whose observation group appends terms to its source's: hover -> track.

The target's first terms must be the source's, in the same order and meaning; the terms it
adds come last (an observation group concatenates its terms in order, each with its own
history). The actor's first layer gets zero weights on the added inputs and the normalizer
mean 0 and variance 1 there, so the started policy acts exactly as the source does whatever
the added inputs read, and training learns what they are worth. The normalizer's shared
sample count stays the source's, so the added inputs' statistics adapt slowly (from a
policy file, counted as 10^8 samples, about 9 % of the way in 10^7 steps); their zero weights
do not depend on them. A run's stored config names its terms but not their sizes, so from a
checkpoint the added inputs are the difference of the two observation sizes; a policy file's
contract holds every term's size.
"""

from __future__ import annotations

import re

import torch

_FIRST_WEIGHT = re.compile(r'^actor\.(\d+)\.weight$')


def appended(source: list, target: list) -> list | None:
    """The items target appends to source (source is target's start), or None."""
    n = len(source)
    if len(target) <= n or list(target[:n]) != list(source):
        return None
    return list(target[n:])


def first_layer_key(state: dict) -> str:
    """Key of the actor's first Linear weight in a state dict ('actor.0.weight')."""
    keys = [(int(m.group(1)), k) for k in state if (m := _FIRST_WEIGHT.match(k))]
    if not keys:
        raise KeyError('no actor.<i>.weight in the state dict')
    return min(keys)[1]


def widen_policy_inputs(state: dict, num_inputs: int, std_eps: float | None = None) -> dict:
    """A copy of state whose actor reads num_inputs observations: zero first-layer weights on
    the added ones, normalizer mean 0 and variance 1 there (std_eps: the state holds the
    folded std sqrt(var + eps) under 'std' instead of 'var', as a policy file does)."""
    out = dict(state)
    key = first_layer_key(state)
    weight = state[key]
    added = num_inputs - weight.shape[1]
    if added <= 0:
        raise ValueError(f'{key} already reads {weight.shape[1]} inputs, not fewer than '
                         f'{num_inputs}')
    out[key] = torch.cat([weight, weight.new_zeros(weight.shape[0], added)], dim=1)
    for mean_key in ('policy_normalizer.mean', 'mean'):
        if mean_key in state:
            out[mean_key] = torch.cat([state[mean_key], state[mean_key].new_zeros(added)])
    if 'policy_normalizer.var' in state:
        var = state['policy_normalizer.var']
        out['policy_normalizer.var'] = torch.cat([var, var.new_ones(added)])
    if 'std' in state:
        std = state['std']
        fill = (1.0 + (std_eps or 0.0)) ** 0.5
        out['std'] = torch.cat([std, std.new_full((added,), fill)])
    return out
