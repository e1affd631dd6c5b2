"""Pieces of the Gymnasium wrapper (sim2real.mdp.gym_env): reset seeds, reset masks and the
per-env episode infos in Gymnasium's vector convention."""

from __future__ import annotations

import numpy as np
import torch

_SEED_BITS = 63
"""Width of the seed a list is mapped to (torch.Generator.manual_seed takes it)."""


def _is_seed(value) -> bool:
    """A non-negative int (bool excluded)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= 0


def one_seed(seed, num_envs: int) -> int | None:
    """The one seed of the batched simulator for reset(seed=...): an int as given, a list of
    num_envs ints through numpy's SeedSequence, None or a list of None as None."""
    if seed is None:
        return None
    if _is_seed(seed):
        return int(seed)
    if isinstance(seed, (int, np.integer)):
        raise ValueError(f'reset(seed={seed}): a seed must be an int >= 0')
    try:
        seeds = list(seed)
    except TypeError:
        raise TypeError(f'reset(seed=...) takes an int, a list of ints or None, got '
                        f'{type(seed).__name__}') from None
    if len(seeds) != num_envs:
        raise ValueError(f'reset(seed=[...]) needs one seed per sub-environment ({num_envs}), '
                         f'got {len(seeds)}')
    if all(s is None for s in seeds):
        return None
    if not all(_is_seed(s) for s in seeds):
        raise ValueError('reset(seed=[...]): the list must be all ints or all None (ints >= 0; '
                         'the batched simulator has one random stream)')
    words = np.random.SeedSequence([int(s) for s in seeds]).generate_state(2, np.uint32)
    return (int(words[0]) | int(words[1]) << 32) & ((1 << _SEED_BITS) - 1)


def reset_mask(mask, num_envs: int) -> np.ndarray | None:
    """options['reset_mask'] checked as Gymnasium's SyncVectorEnv checks it (a copy)."""
    if mask is None:
        return None
    where = "options['reset_mask']"
    if not isinstance(mask, np.ndarray):
        raise TypeError(f'{where} must be a numpy array, got {type(mask).__name__}')
    if mask.shape != (num_envs,):
        raise ValueError(f'{where} must have shape ({num_envs},), got {mask.shape}')
    if mask.dtype != np.bool_:
        raise TypeError(f'{where} must have dtype bool, got {mask.dtype}')
    if not mask.any():
        raise ValueError(f'{where} must hold at least one True')
    return mask.copy()


def episode_infos(env, final_episode: dict[str, torch.Tensor], ended: np.ndarray,
                  done: np.ndarray) -> dict:
    """{'log': per-env arrays with '_' masks, '_log': done} for the episodes done reports.

    final_episode holds the RLEnv's values for the envs of ended, in env order (its
    extras['final_episode']); done is the subset the wrapper reports. The task's success
    judgement is added as 'episode/success' where its metrics keep ``last_success``.
    """
    ids = np.flatnonzero(ended)
    values = {k: v.detach().cpu().numpy() for k, v in final_episode.items()}
    success = getattr(env.metrics, 'last_success', None)
    if success is not None:
        values['episode/success'] = success.detach().cpu().numpy()[ids]
    log = {}
    for key, value in values.items():
        full = np.zeros(len(done), dtype=value.dtype)
        full[ids] = value
        full[~done] = 0
        log[key], log[f'_{key}'] = full, done.copy()
    return {'log': log, '_log': done.copy()}
