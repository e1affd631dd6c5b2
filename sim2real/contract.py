"""The deployment contract: everything a runtime needs to run a policy exactly as trained.

Written once by the task, stored as versioned JSON in the ONNX file's metadata under
``CONTRACT_KEY``, and read back by the deploy runtime, which refuses any mismatch.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path

CONTRACT_KEY = 'sim2real.contract'
CONTRACT_VERSION = 2
READABLE_VERSIONS = (1, 2)
"""Version 1 is version 2 without the terms' training bands (read as band None)."""


class ContractError(ValueError):
    """A contract is malformed or does not match the robot or the policy file."""


@dataclass
class TermBand:
    """Where one term's values lay in training: per element of one history step, over
    rollouts of the exported policy under the task's full randomization (noise included)."""

    low: list[float]
    """Lower edge of each element (the 0.01th percentile; policy input units: scaled,
    clipped)."""
    high: list[float]
    """Upper edge of each element (the 99.99th percentile)."""
    mean: list[float]
    """Mean of each element."""
    std: list[float]
    """Standard deviation of each element."""
    samples: int
    """Values each element's figures were computed over."""


@dataclass
class ObservationTermSpec:
    """One observation term, in the order the policy reads it."""

    name: str
    """Term function name, e.g. 'position_error_w'."""
    size: int
    """Number of values the term contributes per history step."""
    scale: float = 1.0
    """Multiplier applied before clipping."""
    clip: float | None = None
    """Symmetric clip applied after scaling, or None."""
    noise_std: float = 0.0
    """Standard deviation of the additive Gaussian noise used in training (after scaling)."""
    history_length: int = 1
    """Number of stacked ticks, newest first: [v_t, v_t-1, ...], each of ``size`` values."""
    doc: str = ''
    """What the term holds, with units and frame (the term function's docstring)."""
    band: TermBand | None = None
    """The term's training distribution (``export`` measures it), None when not measured."""


@dataclass
class ActionSpec:
    """How policy outputs become actuator commands."""

    kind: str
    """'thrust_body_rates' or 'rotor_speeds' (quadrotor); joint kinds come later."""
    size: int
    """Number of policy outputs."""
    clip: float = 1.0
    """Policy outputs are clipped to [-clip, clip] before scaling."""
    params: dict = field(default_factory=dict)
    """Kind-specific scales with units in their names (e.g. 'max_body_rate_rad_s')."""


@dataclass
class Contract:
    """The policy's deployment contract (see module docstring)."""

    task: str
    """Registered task name the policy was trained on."""
    robot: str
    """Robot name from the URDF."""
    urdf_sha256: str
    """SHA-256 of the URDF file the policy was trained with."""
    policy_rate_hz: float
    """Rate at which the policy must be evaluated."""
    physics_rate_hz: float
    """Simulator rate in training (the onboard controller's rate where one exists)."""
    joint_names: list[str]
    """Actuated joints in policy order (empty for a quadrotor)."""
    default_joint_pos_rad: list[float]
    """Default joint positions in policy order [rad]."""
    observations: list[ObservationTermSpec]
    """Policy observation terms, in order."""
    action: ActionSpec
    """The action term."""
    robot_params: dict = field(default_factory=dict)
    """Nominal physical parameters the action interface needs (mass, rotor model, gains)."""
    normalizer: str = 'in_graph'
    """Where observation normalization happens: inside the ONNX graph."""
    version: int = CONTRACT_VERSION
    """Contract schema version."""

    @property
    def observation_size(self) -> int:
        """Length of the policy observation vector."""
        return sum(t.size * t.history_length for t in self.observations)

    def to_json(self) -> str:
        """Serialize to a JSON string with sorted keys."""
        return json.dumps(dataclasses.asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Contract:
        """Parse a contract, naming the field at fault on any error (every field required)."""
        return cls.from_raw(parse_json(text))

    @classmethod
    def from_raw(cls, raw) -> Contract:
        """A contract from its parsed JSON form; ContractError naming the field at fault."""
        if not isinstance(raw, dict):
            raise ContractError(f'contract: must be a JSON object, got {_kind(raw)}')
        version = raw.get('version')
        if type(version) is not int or version not in READABLE_VERSIONS:
            raise ContractError(
                f'contract field "version" is {version!r}, this sim2real reads versions '
                f'{", ".join(map(str, READABLE_VERSIONS))}')
        contract = _build(cls, _upgraded(raw), '')
        _check_ranges(contract)
        return contract


def _upgraded(raw: dict) -> dict:
    """A version-1 contract as version 2: every term without a training band."""
    if raw['version'] != 1:
        return raw
    raw = {**raw, 'version': CONTRACT_VERSION}
    if isinstance(raw.get('observations'), list):
        raw['observations'] = [
            {**term, 'band': None} if isinstance(term, dict) and 'band' not in term else term
            for term in raw['observations']]
    return raw


def _check_ranges(contract: Contract) -> None:
    """ContractError naming the first field outside its range (sizes, rates, clips, noise)."""
    checks = [('policy_rate_hz', contract.policy_rate_hz, 'positive'),
              ('physics_rate_hz', contract.physics_rate_hz, 'positive'),
              ('action.size', contract.action.size, 'positive'),
              ('action.clip', contract.action.clip, 'positive')]
    for i, term in enumerate(contract.observations):
        where = f'observations[{i}]'
        checks += [(f'{where}.size', term.size, 'positive'),
                   (f'{where}.history_length', term.history_length, 'positive'),
                   (f'{where}.noise_std', term.noise_std, 'non-negative')]
        if term.clip is not None:
            checks.append((f'{where}.clip', term.clip, 'positive'))
        if term.band is not None:
            _check_band(term.band, term.size, f'{where}.band')
            checks.append((f'{where}.band.samples', term.band.samples, 'positive'))
    for path, value, rule in checks:
        if not (value > 0 if rule == 'positive' else value >= 0):
            raise ContractError(f'{path}: must be {rule}, got {value}')


def _check_band(band: TermBand, size: int, where: str) -> None:
    """ContractError unless the band holds size elements per figure, low <= high, std >= 0."""
    for name in ('low', 'high', 'mean', 'std'):
        values = getattr(band, name)
        if len(values) != size:
            raise ContractError(f'{where}.{name}: must hold the {size} elements of the term, '
                                f'got {len(values)}')
    for i, (low, high, std) in enumerate(zip(band.low, band.high, band.std)):
        if low > high:
            raise ContractError(f'{where}.low[{i}]: {low} is above high[{i}] {high}')
        if std < 0:
            raise ContractError(f'{where}.std[{i}]: must be non-negative, got {std}')


def parse_json(text: str):
    """JSON text as Python data; ContractError for invalid JSON, or naming the field that
    holds NaN, Infinity or a number beyond float range (1e400)."""
    try:
        raw = json.loads(text, parse_constant=float)
    except json.JSONDecodeError as exc:
        raise ContractError(f'contract is not valid JSON: {exc}') from exc
    path = _first_nonfinite(raw, '')
    if path is not None:
        raise ContractError(f'{path or "contract"}: must be a finite number')
    return raw


def _first_nonfinite(value, path: str) -> str | None:
    """Path of the first non-finite number in parsed JSON, or None."""
    if isinstance(value, float):
        return None if math.isfinite(value) else path
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(
        value, list) else ()
    for key, item in items:
        sub = f'{path}[{key}]' if isinstance(key, int) else f'{path}.{key}' if path else key
        found = _first_nonfinite(item, sub)
        if found is not None:
            return found
    return None


def _kind(value) -> str:
    """The JSON kind of a value, in the words a user reads ('a string', 'null', ...)."""
    if value is None:
        return 'null'
    if isinstance(value, bool):
        return f'{str(value).lower()} (a boolean)'
    names = {str: 'a string', dict: 'an object', list: 'a list', int: 'an integer',
             float: 'a number'}
    return f'{names.get(type(value), type(value).__name__)} {json.dumps(value)[:40]}'


def _field_path(where: str, name: str) -> str:
    """'observations[2]' + 'scale' -> 'observations[2].scale'; '' + 'robot' -> 'robot'."""
    return f'{where}.{name}' if where else name


def _check(value, hint, where: str):
    """value checked against a field annotation; returns it (nested specs built)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if dataclasses.is_dataclass(hint):
        if not isinstance(value, dict):
            raise ContractError(f'{where}: must be an object, got {_kind(value)}')
        return _build(hint, value, where)
    if origin in (types.UnionType, typing.Union):
        if value is None and type(None) in args:
            return None
        return _check(value, next(a for a in args if a is not type(None)), where)
    if origin is list:
        if not isinstance(value, list):
            raise ContractError(f'{where}: must be a list, got {_kind(value)}')
        return [_check(v, args[0], f'{where}[{i}]') for i, v in enumerate(value)]
    if hint is dict:
        if not isinstance(value, dict):
            raise ContractError(f'{where}: must be an object, got {_kind(value)}')
        return value
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ContractError(f'{where}: must be a number, got {_kind(value)}')
        return float(value)
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ContractError(f'{where}: must be an integer, got {_kind(value)}')
        return value
    if hint is str and not isinstance(value, str):
        raise ContractError(f'{where}: must be a string, got {_kind(value)}')
    return value


def _build(cls, raw: dict, where: str):
    """Construct dataclass cls from raw: every field present and of its declared type."""
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(raw) - set(fields))
    if unknown:
        raise ContractError(f'{where or "contract"}: unknown field(s) {unknown}')
    missing = [name for name in fields if name not in raw]
    if missing:
        names = ', '.join(_field_path(where, name) for name in missing)
        raise ContractError(f'{names}: missing from the contract (every field is required)')
    hints = typing.get_type_hints(cls)
    return cls(**{name: _check(raw[name], hints[name], _field_path(where, name))
                  for name in fields})


def file_sha256(path: str | Path) -> str:
    """Hex SHA-256 of a file's bytes."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
