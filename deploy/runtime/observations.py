"""ObservationBuilder: the policy input vector from robot state, term by term as in training.

Each contract term name maps to a function of the robot state (``inputs``, a dict of float64
arrays filled by the robot profile) written with ``sim2real.terms``, the module the training
env uses, then scaled and clipped per the contract term. A term with ``history_length`` H > 1
stacks its built values of this and the last H - 1 ticks, newest first, as training did
(``sim2real/mdp/history.py``); the history restarts at ``reset()`` (the runtime's enable).

Inputs a term may read: pos_w, target_pos_w, rotmat_wb, lin_vel_b, ang_vel_b, action_history
(H, A), reference_velocity_w, joint_pos_rad, default_joint_pos_rad, joint_vel_rad_s,
joint_target_rad (the integrator's latest target), joint_pos_limits_rad (J, 2),
velocity_command, and whatever a robot's profile parts add. ``TERMS`` is a registry: a
robot whose task observes something new registers the term (``register_term``) in its
deploy folder's runtime module, which the runtime imports before it reads a contract.
"""

from __future__ import annotations

import numpy as np

from sim2real import terms
from sim2real.contract import Contract, ContractError


def _joints(contract: Contract) -> int:
    """Number of joints in the contract."""
    return len(contract.joint_names)


TERMS = {
    'position_error_w': (
        lambda s: terms.position_error_w(s['target_pos_w'], s['pos_w']), lambda c: 3),
    'rotation_matrix': (lambda s: terms.flatten_rotmat(s['rotmat_wb']), lambda c: 9),
    'lin_vel_b': (lambda s: s['lin_vel_b'], lambda c: 3),
    'ang_vel_b': (lambda s: s['ang_vel_b'], lambda c: 3),
    'reference_velocity_w': (lambda s: s['reference_velocity_w'], lambda c: 3),
    'projected_gravity': (lambda s: terms.projected_gravity(s['rotmat_wb']), lambda c: 3),
    'action_history': (lambda s: s['action_history'].reshape(-1), None),
    'joint_pos_rel': (
        lambda s: terms.joint_pos_rel(s['joint_pos_rad'], s['default_joint_pos_rad']), _joints),
    'joint_vel': (lambda s: s['joint_vel_rad_s'], _joints),
    'velocity_command': (lambda s: s['velocity_command'], lambda c: 3),
    'joint_pos_unit': (lambda s: terms.joint_pos_unit(
        s['joint_pos_rad'], s['joint_pos_limits_rad'][:, 0], s['joint_pos_limits_rad'][:, 1]),
        _joints),
    'joint_target_unit': (lambda s: terms.joint_pos_unit(
        s['joint_target_rad'], s['joint_pos_limits_rad'][:, 0],
        s['joint_pos_limits_rad'][:, 1]), _joints),
}
"""Term name -> (value function of the inputs, size given the contract; None: the action
history's whole-step multiple)."""


_REGISTERED: dict[str, tuple] = {}
"""Term name -> (func, size) as register_term received them."""


def register_term(name: str, func, size) -> None:
    """Add deploy observation term name: func(inputs) -> values; size: an int, size(contract)
    -> int, or None (a whole-step multiple of the action, as the action history). The same
    function and size again is a no-op; anything else under a taken name is an error."""
    if name in TERMS:
        if _REGISTERED.get(name) != (func, size):
            raise ValueError(f'observation term "{name}" is already registered')
        return
    TERMS[name] = (func, size if callable(size) or size is None else (lambda c, n=int(size): n))
    _REGISTERED[name] = (func, size)


def action_history_length(contract: Contract) -> int:
    """Number of past policy outputs in the 'action_history' term (1 without the term)."""
    for term in contract.observations:
        if term.name == 'action_history':
            return max(term.size // contract.action.size, 1)
    return 1


class ObservationBuilder:
    """Builds the (1, observation_size) float32 policy input from the contract's terms."""

    def __init__(self, contract: Contract):
        """Resolve every contract term; ContractError naming observations[i].<field> if not."""
        self.contract = contract
        self._funcs = []
        for i, term in enumerate(contract.observations):
            where = f'observations[{i}]'
            if term.name not in TERMS:
                raise ContractError(
                    f'{where}.name: unknown observation term "{term.name}"; '
                    f'the deploy runtime knows {sorted(TERMS)}')
            func, expected = TERMS[term.name]
            size = self._expected_size(term.name, expected)
            if term.size != size:
                raise ContractError(
                    f'{where}.size: term "{term.name}" has size {term.size}, '
                    f'the runtime computes {size}')
            if not isinstance(term.history_length, int) or term.history_length < 1:
                raise ContractError(f'{where}.history_length: {term.history_length!r} is not '
                                    'a whole number of ticks >= 1')
            self._funcs.append(func)
        self.size = contract.observation_size
        # per-element scale and clip of one tick's vector (one scale_clip call per tick)
        self._scale = np.concatenate([np.full(t.size, t.scale) for t in contract.observations])
        self._clip = np.concatenate([np.full(t.size, np.inf if t.clip is None else t.clip)
                                     for t in contract.observations])
        lengths = [t.history_length for t in contract.observations]
        self._ticks, self._cols = (np.asarray(i) for i in terms.history_index(
            [t.size for t in contract.observations], lengths))
        self._past = np.zeros((max(lengths) - 1, len(self._scale)))
        """Built vectors of the previous ticks, newest first (H - 1, D); empty without
        history."""
        self._fresh = True

    def _expected_size(self, name: str, expected) -> int:
        """Size the runtime produces for a term (action_history: its whole-step multiple)."""
        if expected is not None:
            return expected(self.contract)
        return action_history_length(self.contract) * self.contract.action.size

    def reset(self) -> None:
        """Restart the term history: the next tick's values fill it."""
        self._fresh = True

    def build(self, inputs: dict, advance: bool = False) -> np.ndarray:
        """Observation vector (1, observation_size), float32, terms in contract order;
        advance: this is a control tick, so its values join the term history."""
        raw = np.concatenate([np.asarray(func(inputs), dtype=np.float64).reshape(-1)
                              for func in self._funcs])
        current = terms.scale_clip(raw, self._scale, self._clip).astype(np.float32)
        if self._past.shape[0] == 0:
            return current[None, :]
        past = np.broadcast_to(current, self._past.shape) if self._fresh else self._past
        out = terms.stack_history(current, past.astype(np.float32), self._ticks, self._cols)
        if advance:
            self._past, self._fresh = terms.push_history(current, past), False
        return out[None, :]
