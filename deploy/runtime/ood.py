"""Out-of-distribution flags: which observation terms left the band training saw.

The contract holds, per term and element, the 0.01th / 99.99th percentiles of what the
policy read in training (`sim2real.export.observation_band`). A term is flagged at a tick when any
of its values (every history slot) lies outside its element's band. A flag is a warning for
a person (the robot is where training never took the policy), never a latch.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from sim2real.contract import Contract

TOLERANCE = 1e-6
"""Slack beyond each edge, relative to max(1, |edge|): the band is stored rounded to
7 significant digits, and a value at a clip sits exactly on its edge."""


class BandCheck:
    """Flags per banded term for an observation vector (terms without a band are skipped)."""

    def __init__(self, contract: Contract):
        """Tile each banded term's per-element edges over its history slots."""
        low, high, owner = [], [], []
        self.names: list[str] = []
        """Terms with a band, in contract order (the flags' order)."""
        start, self._columns = 0, []
        for term in contract.observations:
            width = term.size * term.history_length
            if term.band is not None:
                self._columns.append(np.arange(start, start + width))
                low.append(np.tile(term.band.low, term.history_length))
                high.append(np.tile(term.band.high, term.history_length))
                owner.append(np.full(width, len(self.names)))
                self.names.append(term.name)
            start += width
        self._index = np.concatenate(self._columns) if self._columns else np.zeros(0, int)
        low = np.concatenate(low) if low else np.zeros(0)
        high = np.concatenate(high) if high else np.zeros(0)
        self._low = low - TOLERANCE * np.maximum(1.0, np.abs(low))
        self._high = high + TOLERANCE * np.maximum(1.0, np.abs(high))
        self._starts = np.cumsum([0] + [len(c) for c in self._columns[:-1]]).astype(int)

    def outside(self, observation: np.ndarray) -> np.ndarray:
        """Per banded term, whether any of its values in observation (one vector, or
        (1, size)) lies outside the band; NaN counts as outside."""
        if not self.names:
            return np.zeros(0, dtype=bool)
        values = np.asarray(observation, dtype=np.float64).reshape(-1)[self._index]
        with np.errstate(invalid='ignore'):
            out = ~((values >= self._low) & (values <= self._high))
        return np.logical_or.reduceat(out, self._starts)


class OodWindow:
    """The share of the last ticks at which each banded term was flagged."""

    def __init__(self, check: BandCheck, ticks: int):
        """A window of the last ticks (>= 1) observations."""
        self.check = check
        self._flags: deque[np.ndarray] = deque(maxlen=max(1, int(ticks)))

    def add(self, observation: np.ndarray | None) -> None:
        """Flag one tick's observation (None: the policy did not run; not counted)."""
        if observation is not None:
            self._flags.append(self.check.outside(observation))

    def shares(self) -> dict[str, float]:
        """Term -> share of the window's ticks it was flagged (empty before the first)."""
        if not self._flags:
            return {}
        share = np.mean(np.stack(self._flags), axis=0)
        return {name: float(value) for name, value in zip(self.check.names, share)}
