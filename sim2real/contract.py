"""The deployment contract: everything a runtime needs to run a policy exactly as trained.

Written once by the task, stored as versioned JSON in the ONNX file's metadata under
``CONTRACT_KEY``, and read back by the deploy runtime, which refuses any mismatch.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

CONTRACT_KEY = 'sim2real.contract'
CONTRACT_VERSION = 1


class ContractError(ValueError):
    """A contract is malformed or does not match the robot or the policy file."""


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
    """Number of stacked steps, oldest first."""
    doc: str = ''
    """What the term holds, with units and frame (the term function's docstring)."""


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
        """Parse a contract, naming the field at fault on any error."""
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ContractError(f'contract is not valid JSON: {exc}') from exc
        if raw.get('version') != CONTRACT_VERSION:
            raise ContractError(
                f'contract field "version" is {raw.get("version")!r}, '
                f'this sim2real reads version {CONTRACT_VERSION}')
        raw['observations'] = [
            _build(ObservationTermSpec, t, f'observations[{i}]')
            for i, t in enumerate(raw.get('observations', []))]
        raw['action'] = _build(ActionSpec, raw.get('action', {}), 'action')
        return _build(cls, raw, 'contract')


def _build(cls, raw: dict, where: str):
    """Construct dataclass cls from raw, rejecting unknown and missing fields by name."""
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(raw) - names)
    if unknown:
        raise ContractError(f'{where}: unknown field(s) {unknown}')
    try:
        return cls(**raw)
    except TypeError as exc:
        raise ContractError(f'{where}: {exc}') from exc


def file_sha256(path: str | Path) -> str:
    """Hex SHA-256 of a file's bytes."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
