"""Where each input of an Isaac Lab policy vector sits in ours (pure Python, both venvs).

Isaac Lab concatenates a group's terms in order, each term's history oldest first and its
per-joint values in the articulation's order; our contract puts history newest first and
joints in our robot's order. `isaaclab_to_ours` gives, for each Isaac Lab input, the index of
our input with the same value, so `ours[:, index]` is Isaac Lab's vector and an Isaac Lab
vector `x` becomes ours by `ours[:, index] = x`.
"""

from __future__ import annotations

from typing import Sequence

JOINT_TERMS = ('joint_pos_rel', 'joint_vel', 'action_history')
"""Our terms with one value per joint, in joint order."""


def isaaclab_to_ours(terms: Sequence[tuple[str, int, int]], ours: Sequence[str],
                     theirs: Sequence[str]) -> list[int]:
    """terms: (our name, values per tick, history length) in group order; ours/theirs: the
    joint orders. For each Isaac Lab input, the index of ours holding that value."""
    to_ours = [list(ours).index(j) for j in theirs]   # their joint k is our joint to_ours[k]
    index, offset = [], 0
    for name, size, history in terms:
        within = to_ours if name in JOINT_TERMS else list(range(size))
        for age in reversed(range(history)):   # oldest first
            start = offset + age * size
            index.extend(start + i for i in within)
        offset += size * history
    return index
