"""Action integrators: clipped policy outputs -> actuator commands, one class per action kind.

Every integrator clips the policy output a to [-clip, clip], records it in ``history``
(newest first, zeros after reset: the 'action_history' observation) and maps it to a command:

- thrust_body_rates: [collective thrust N (``terms.collective_thrust_n``: 0 at a0 = -1, hover
  at 0, max_collective_thrust_n at +1), a[1:4] max_body_rate_rad_s rad/s body frame]
- rotor_speeds: min_speed + (a + 1) / 2 (max_speed - min_speed) [rad/s], URDF rotor order
- joint_position_offset: q* = q0 + scale a (zero-order hold), clipped to [target_min_rad,
  target_max_rad] when given
- joint_position_delta: q* = q*_prev + scale a, clipped to [target_min_rad, target_max_rad]
  when given; q*_prev seeded with the measured q (target_seed: measured_joint_pos_rad)
- joint_position_ema: q* = alpha (q0 + scale a) + (1 - alpha) q*_prev, seeded with measured q
- joint_position_rate_capped: q* moves toward q0 + scale a (clipped to the target range when
  given) by at most max_rate_rad_s dt, seeded with the measured q
"""

from __future__ import annotations

import numpy as np

from sim2real import terms
from sim2real.contract import Contract, ContractError


class Integrator:
    """Base: clip, record the history, map to a command."""

    kind = ''
    required: tuple[str, ...] = ()
    """action.params entries the kind needs."""

    def __init__(self, contract: Contract, history_length: int = 1):
        """State for contract.action with history_length past outputs."""
        self.contract = contract
        self.spec = contract.action
        self._checked: dict[str, np.ndarray] = {}
        for name in self.required:
            self.param(name)
        self.history = np.zeros((history_length, self.spec.size))
        """Clipped policy outputs, newest first, (history_length, action size)."""

    def param(self, name: str) -> np.ndarray:
        """action.params[name] as float64, checked once: ContractError naming the field when
        missing, not numbers, not finite, or neither one number nor one per action element."""
        if name in self._checked:
            return self._checked[name]
        value = self.spec.params.get(name)
        if value is None:
            raise ContractError(f'action.params.{name}: required by action kind "{self.kind}"')
        numeric = isinstance(value, (int, float)) or (isinstance(value, (list, tuple)) and all(
            isinstance(v, (int, float)) for v in value))
        if not numeric or isinstance(value, bool):
            raise ContractError(f'action.params.{name}: must be numbers, got {value!r:.60}')
        array = np.asarray(value, dtype=np.float64)
        if not np.isfinite(array).all() or array.shape not in ((), (self.spec.size,)):
            raise ContractError(f'action.params.{name}: must be one finite number or '
                                f'{self.spec.size}, got {value!r:.60}')
        array.flags.writeable = False
        self._checked[name] = array
        return array

    def reset(self, joint_pos_rad: np.ndarray | None = None) -> None:
        """Zero the history; joint integrators seed their state with the measured q."""
        self.history[:] = 0.0

    def step(self, action: np.ndarray) -> np.ndarray:
        """Clip and record action (A,); return the command (float64)."""
        clipped = np.clip(np.asarray(action, dtype=np.float64), -self.spec.clip, self.spec.clip)
        self.history = np.roll(self.history, 1, axis=0)
        self.history[0] = clipped
        return self.command(clipped)

    def state(self) -> dict[str, np.ndarray]:
        """What the integrator carries from tick to tick, by name (the recorder logs it)."""
        return {'action_history': self.history}

    def command(self, a: np.ndarray) -> np.ndarray:
        """Command for a clipped output."""
        raise NotImplementedError


class ThrustBodyRates(Integrator):
    """[collective thrust N, roll, pitch, yaw rate rad/s]."""

    kind = 'thrust_body_rates'
    required = ('hover_thrust_n', 'max_collective_thrust_n', 'max_body_rate_rad_s')

    def __init__(self, contract: Contract, history_length: int = 1):
        """Refuse a contract trained with another thrust map (an older file would fly
        differently, not fail)."""
        formula = contract.action.params.get('thrust_formula')
        if formula != terms.COLLECTIVE_THRUST_FORMULA:
            raise ContractError(
                f'action.params.thrust_formula: the policy was trained with "{formula}"; this '
                f'runtime maps thrust as "{terms.COLLECTIVE_THRUST_FORMULA}" (re-export or '
                'retrain the policy with this version)')
        super().__init__(contract, history_length)

    def command(self, a: np.ndarray) -> np.ndarray:
        """thrust = terms.collective_thrust_n(a0); rates = a[1:4] max rate."""
        thrust = terms.collective_thrust_n(a[0:1], float(self.param('hover_thrust_n')),
                                           float(self.param('max_collective_thrust_n')))
        return np.concatenate([thrust, a[1:4] * self.param('max_body_rate_rad_s')])


class RotorSpeeds(Integrator):
    """Rotor speed commands [rad/s] in URDF rotor order."""

    kind = 'rotor_speeds'
    required = ('min_speed_rad_s', 'max_speed_rad_s')

    def command(self, a: np.ndarray) -> np.ndarray:
        """min + (a + 1) / 2 (max - min)."""
        return terms.rotor_speed_command(a, self.param('min_speed_rad_s'),
                                         self.param('max_speed_rad_s'))


class JointPositionOffset(Integrator):
    """q* = q0 + scale a: absolute targets around the default pose; clipped to
    [target_min_rad, target_max_rad] (targets and seed) when the contract gives them."""

    kind = 'joint_position_offset'
    required = ('scale',)
    SEEDS = ('measured_joint_pos_rad',)
    """The target_seed values this integrator implements (reset(q) with the measured q)."""

    def __init__(self, contract: Contract, history_length: int = 1):
        """Default pose q0 from the contract, target state seeded with q0; refuse a seeding
        this runtime does not implement; read the optional target range."""
        super().__init__(contract, history_length)
        self.default_rad = np.asarray(contract.default_joint_pos_rad, dtype=np.float64)
        self.scale = self.param('scale')
        self.target_rad = self.default_rad.copy()
        """Last target q* [rad]."""
        seed = self.spec.params.get('target_seed', self.SEEDS[0])
        if seed not in self.SEEDS:
            raise ContractError(f'action.params.target_seed: "{seed}" is not implemented by '
                                f'this runtime (it seeds with {", ".join(self.SEEDS)})')
        bounded = [name in self.spec.params for name in ('target_min_rad', 'target_max_rad')]
        if any(bounded) and not all(bounded):
            raise ContractError('action.params.target_min_rad and target_max_rad: give both '
                                'or neither')
        self.bounds_rad = ((self.param('target_min_rad'), self.param('target_max_rad'))
                           if all(bounded) else (-np.inf, np.inf))
        """(lower, upper) of the targets [rad]: the joint ranges trained with."""

    def reset(self, joint_pos_rad: np.ndarray | None = None) -> None:
        """Zero the history; the target state starts at the measured q (q0 without one),
        clipped."""
        super().reset()
        seed = self.default_rad if joint_pos_rad is None else joint_pos_rad
        self.target_rad = np.clip(np.asarray(seed, dtype=np.float64), *self.bounds_rad)

    def state(self) -> dict[str, np.ndarray]:
        """The action history and the target state [rad]."""
        return {**super().state(), 'target_rad': self.target_rad}

    def command(self, a: np.ndarray) -> np.ndarray:
        """Joint position targets q* [rad], within the bounds."""
        self.target_rad = np.clip(terms.joint_offset_target(self.default_rad, self.scale, a),
                                  *self.bounds_rad)
        return self.target_rad.copy()


class JointPositionDelta(JointPositionOffset):
    """q* = q*_prev + scale a, seeded with the measured q at enable; clipped to
    [target_min_rad, target_max_rad] (state and seed) when the contract gives them."""

    kind = 'joint_position_delta'

    def command(self, a: np.ndarray) -> np.ndarray:
        """Integrate the scaled output onto the previous target, within the bounds."""
        self.target_rad = terms.joint_delta_target(self.target_rad, self.scale, a,
                                                   *self.bounds_rad)
        return self.target_rad.copy()


class JointPositionEma(JointPositionOffset):
    """q* = alpha (q0 + scale a) + (1 - alpha) q*_prev."""

    kind = 'joint_position_ema'
    required = ('scale', 'alpha')

    def command(self, a: np.ndarray) -> np.ndarray:
        """Exponential moving average of the offset targets."""
        alpha = self.param('alpha')
        self.target_rad = alpha * terms.joint_offset_target(
            self.default_rad, self.scale, a) + (1.0 - alpha) * self.target_rad
        return self.target_rad.copy()


class JointPositionRateCapped(JointPositionOffset):
    """q* moves toward q0 + scale a (clipped to [target_min_rad, target_max_rad] when given)
    by at most max_rate_rad_s per second; seeded with the measured q at enable."""

    kind = 'joint_position_rate_capped'
    required = ('scale', 'max_rate_rad_s')

    def command(self, a: np.ndarray) -> np.ndarray:
        """Step toward the offset target, capped at max_rate_rad_s / policy_rate_hz."""
        step_rad = self.param('max_rate_rad_s') / self.contract.policy_rate_hz
        goal = np.clip(terms.joint_offset_target(self.default_rad, self.scale, a),
                       *self.bounds_rad)
        self.target_rad = terms.rate_limited_target(goal, self.target_rad, step_rad)
        return self.target_rad.copy()


INTEGRATORS = {cls.kind: cls for cls in (
    ThrustBodyRates, RotorSpeeds, JointPositionOffset, JointPositionDelta, JointPositionEma,
    JointPositionRateCapped)}
"""Action kind -> integrator class: a registry tasks with a new action kind extend
(register_integrator, from the robot's deploy runtime module)."""


class _JointPositionKinds:
    """The registered action kinds whose integrator ends in joint position targets (every
    JointPositionOffset subclass, plug-ins' too): a live view of INTEGRATORS."""

    def __contains__(self, kind: object) -> bool:
        """Whether kind is registered and a joint position kind."""
        cls = INTEGRATORS.get(kind) if isinstance(kind, str) else None
        return cls is not None and issubclass(cls, JointPositionOffset)

    def __iter__(self):
        """The kinds, in registration order."""
        return iter([k for k in list(INTEGRATORS) if k in self])

    def __repr__(self) -> str:
        """As the tuple of kinds."""
        return repr(tuple(self))


JOINT_POSITION_KINDS = _JointPositionKinds()
"""The action kinds the joint chain carries: targets with PD gains (a live view)."""


def register_integrator(cls: type) -> type:
    """Add an Integrator subclass under its kind (usable as a class decorator); another
    class under a registered kind is an error."""
    if not (isinstance(cls, type) and issubclass(cls, Integrator)) or not cls.kind:
        raise TypeError(f'{cls!r} is not an Integrator subclass with a kind')
    if INTEGRATORS.get(cls.kind, cls) is not cls:
        raise ValueError(f'action kind "{cls.kind}" is already registered')
    INTEGRATORS[cls.kind] = cls
    return cls


def make_integrator(contract: Contract, history_length: int = 1) -> Integrator:
    """The integrator of contract.action.kind; ContractError naming action.kind if unknown."""
    cls = INTEGRATORS.get(contract.action.kind)
    if cls is None:
        raise ContractError(f'action.kind: unknown action kind "{contract.action.kind}"; '
                            f'the deploy runtime knows {sorted(INTEGRATORS)}')
    return cls(contract, history_length)
