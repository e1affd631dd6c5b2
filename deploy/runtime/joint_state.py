"""Joint states matched to the contract's joints BY NAME: one mapping for node and runtime.

A JointState names its joints in the driver's order, may list more joints than the policy
drives (grippers, wheels) and must list each policy joint exactly once. Anything else is
refused with a SampleError naming the joint or the array at fault, so the runtime latches
'bad:joint_state (...)' instead of guessing.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from sim2real.deploy.runtime.sensors import SampleError


class JointStateMapper:
    """Arrays of a named joint-state message -> contract joint order (cached per name list)."""

    def __init__(self, joint_names):
        """Contract joint names in policy order."""
        self.names = list(joint_names)
        self._key: tuple | None = None
        self._index = np.zeros(0, dtype=int)
        self._problem = ''

    def _indices(self, names) -> np.ndarray:
        """Index of each contract joint in names; SampleError when one is absent or doubled."""
        key = tuple(str(name) for name in names)
        if key != self._key:
            self._key, self._problem = key, _name_problem(key, self.names)
            where = {name: i for i, name in enumerate(key)}
            self._index = np.array([where.get(n, -1) for n in self.names], dtype=int)
        if self._problem:
            raise SampleError(self._problem)
        return self._index

    def map(self, names, position, velocity) -> tuple[np.ndarray, np.ndarray]:
        """(q [rad], qd [rad/s]) in contract order; SampleError saying what does not fit."""
        index = self._indices(names)
        count = len(self._key)
        q = _array(position, count, 'positions')
        qd = _array(velocity, count, 'velocities')
        return q[index], qd[index]


def _name_problem(names: tuple, wanted: list[str]) -> str:
    """What is wrong with a message's name list for the contract joints ('' if nothing)."""
    present = set(names)
    missing = [name for name in wanted if name not in present]
    if missing:
        return f'joint "{missing[0]}" missing from the message' + (
            f' (and {len(missing) - 1} more)' if len(missing) > 1 else '')
    doubled = [name for name, n in Counter(names).items() if n > 1 and name in wanted]
    if doubled:
        return f'joint "{doubled[0]}" listed twice in the message'
    return ''


def _array(values, count: int, what: str) -> np.ndarray:
    """values as float64 (count,); SampleError naming the array when it has another length."""
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise SampleError(f'joint {what} are not numbers') from None
    if array.shape != (count,):
        raise SampleError(f'{count} joint names but {array.size} {what}')
    return array
