"""The training distribution of each observation term, measured for the contract.

``export`` runs the policy it exports in its task under the training randomization (noise,
delays and parameter draws) for the first BAND_SAMPLES / BAND_ENVS control steps of
BAND_ENVS episodes started together (resets and the first seconds of each episode: events
later in an episode, such as a command resampled after 10 s or a push, count only as far
as they fall in that span) and keeps, per term and per element of one history step, the
0.01th / 99.99th percentiles, the mean and the standard deviation of what the policy read.
The deploy runtime flags a tick whose observation leaves that band
(`sim2real.deploy.runtime.ood`): the robot is somewhere training never took the policy.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from typing import Callable

import numpy as np

from sim2real.contract import Contract, TermBand

log = logging.getLogger(__name__)

BAND_ENVS = 256
"""Environments rolled out together (each its own draw of the randomization)."""
BAND_SAMPLES = 65536
"""Observation vectors collected (BAND_ENVS x 256 steps): 6 beyond each edge per element
and history slot. Measured on the quadruped's HIL logs: bands from 4 to 16 times as many
vectors flag the same share of ticks."""
BAND_PERCENTILES = (0.01, 99.99)
"""Lower and upper edge of the band [percent]. The 0.1 / 99.9 pair flagged 6 % of the ticks
of a nominal quadruped HIL walk (twelve joints, three history slots: one tick in a thousand
per value adds up); this pair flags none there and 10 % with a 6 kg payload on the trunk."""
BAND_SEED = 20261206
"""Seed of the rollouts, so an export is reproducible byte for byte."""


def collect_observations(env, policy: Callable, samples: int = BAND_SAMPLES) -> np.ndarray:
    """The policy group's observations over ceil(samples / num_envs) steps of env driven by
    policy (torch tensors in and out; episodes reset as in training), float64
    (steps x num_envs, observation_size)."""
    import torch   # the CLI parser reads this module's constants: no torch at import

    from sim2real.device import device_scope
    steps = math.ceil(samples / env.num_envs)
    obs = env.reset()
    rows = []
    with torch.no_grad(), device_scope(env.device):
        for _ in range(steps):
            rows.append(obs['policy'].detach().cpu().numpy().astype(np.float64))
            obs, *_ = env.step(policy(obs['policy']))
    return np.concatenate(rows, axis=0)


def term_bands(contract: Contract, observations: np.ndarray) -> list[TermBand]:
    """Each term's band over observations (rows of the contract's layout): every history
    slot of a term holds the same quantity, so its slots are pooled."""
    if observations.shape[1] != contract.observation_size:
        raise ValueError(f'observations hold {observations.shape[1]} values per row, the '
                         f'contract {contract.observation_size}')
    bands, start = [], 0
    for term in contract.observations:
        width = term.size * term.history_length
        values = observations[:, start:start + width].reshape(-1, term.size)
        start += width
        low, high = np.percentile(values, BAND_PERCENTILES, axis=0)
        bands.append(TermBand(low=_floats(low), high=_floats(high),
                              mean=_floats(values.mean(axis=0)),
                              std=_floats(values.std(axis=0)), samples=len(values)))
    return bands


def with_bands(contract: Contract, bands: list[TermBand]) -> Contract:
    """The contract with each term's band set (a copy)."""
    terms = [dataclasses.replace(term, band=band)
             for term, band in zip(contract.observations, bands, strict=True)]
    return dataclasses.replace(contract, observations=terms)


def band_envs(samples: int, measure: bool = True) -> int:
    """Environments for a band over samples vectors (1 when nothing is measured)."""
    return max(1, min(BAND_ENVS, samples)) if measure else 1


def measure_bands(contract: Contract, env, policy, samples: int = BAND_SAMPLES) -> Contract:
    """contract with the bands policy's observations in env give (see module docstring)."""
    observations = collect_observations(env, policy, samples)
    if not np.isfinite(observations).all():
        raise ValueError('the rollouts for the observation band produced non-finite '
                         'observations')
    log.info('observation band: %d vectors of %d values over %d envs',
             len(observations), observations.shape[1], env.num_envs)
    return with_bands(contract, term_bands(contract, observations))


def _floats(values: np.ndarray) -> list[float]:
    """Plain floats rounded to 7 significant digits (the JSON stays readable)."""
    return [float(f'{v:.7g}') for v in np.asarray(values, dtype=np.float64)]
