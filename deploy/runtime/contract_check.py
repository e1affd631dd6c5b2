"""Refuse to start on any mismatch: contract vs URDF (Pinocchio) and vs the node parameters.

Every error is a ContractError whose message starts with the field at fault.
"""

from __future__ import annotations

import math
from pathlib import Path

import pinocchio as pin

from sim2real.contract import Contract, ContractError, file_sha256
from sim2real.deploy.runtime.params import ParamError
from sim2real.urdf import parse_urdf, UrdfError
from sim2real.deploy.runtime.physics_check import (
    check_joint_physics, check_rotor_physics, number, ROTOR_KINDS, tree)

MASS_RTOL = 1e-6


def total_mass_kg(model: pin.Model) -> float:
    """Mass of every body of a Pinocchio model, the root link included [kg]."""
    return float(sum(inertia.mass for inertia in model.inertias))


def check_urdf(contract: Contract, path: str | Path) -> pin.Model:
    """The Pinocchio model of path after checking that it is a URDF, then its robot name,
    joints and mass, then its sha256 (a malformed or another robot's URDF is named as such,
    not as a mere hash mismatch)."""
    path = Path(path)
    try:
        parse_urdf(path)
    except UrdfError as exc:
        raise ContractError(f'urdf_file: {exc}') from None
    try:
        model = pin.buildModelFromUrdf(str(path))
    except (RuntimeError, ValueError) as exc:
        raise ContractError(f'urdf_file: {path}: Pinocchio cannot build a model from it: '
                            f'{exc}') from None
    if model.name != contract.robot:
        raise ContractError(f'robot: the URDF robot is "{model.name}", '
                            f'the contract says "{contract.robot}"')
    names = set(model.names)
    for i, name in enumerate(contract.joint_names):
        if name not in names:
            raise ContractError(f'joint_names[{i}]: joint "{name}" is not in {path}')
    mass = number(tree(contract), 'robot_params.mass_kg')
    total = total_mass_kg(model)
    if not math.isclose(total, mass, rel_tol=MASS_RTOL):
        raise ContractError(f'robot_params.mass_kg: the contract says {mass} kg, '
                            f'{path} sums to {total} kg')
    digest = file_sha256(path)
    if digest != contract.urdf_sha256:
        raise ContractError(f'urdf_sha256: {path} hashes to {digest}, '
                            f'the policy was trained on {contract.urdf_sha256}')
    return model


def check_physics(contract: Contract, path: str | Path, model: pin.Model) -> None:
    """The physics the contract states against the URDF at path (its Pinocchio model):
    rotor model and hover thrust of rotor craft, joint limits, gains and default pose."""
    if contract.joint_names:
        check_joint_physics(contract, model)
    if contract.action.kind in ROTOR_KINDS or 'rotors' in contract.robot_params:
        check_rotor_physics(contract, path)


def check_contract(contract: Contract) -> None:
    """Internal consistency of the contract fields the runtime relies on."""
    if len(contract.default_joint_pos_rad) != len(contract.joint_names):
        raise ContractError(f'default_joint_pos_rad: {len(contract.default_joint_pos_rad)} '
                            f'values for {len(contract.joint_names)} joints')
    if contract.normalizer != 'in_graph':
        raise ContractError(f'normalizer: "{contract.normalizer}" is not supported; the '
                            f'runtime feeds raw observations to a graph that normalizes')
    if not contract.policy_rate_hz > 0.0:
        raise ContractError(f'policy_rate_hz: must be positive, got {contract.policy_rate_hz}')
    seen = set()
    for i, name in enumerate(contract.joint_names):
        if name in seen:
            raise ContractError(f'joint_names[{i}]: "{name}" is listed twice')
        seen.add(name)


def check_params(contract: Contract, params, robot, model: pin.Model | None = None) -> None:
    """Rate, command interface and limits of the parameters against the contract; robot:
    the robot's runtime entry (its command interfaces and its own parameter checks)."""
    check_contract(contract)
    if params.rate_hz != contract.policy_rate_hz:
        raise ContractError(f'policy_rate_hz: the policy runs at {contract.policy_rate_hz} Hz, '
                            f'parameter rate_hz is {params.rate_hz}')
    kinds = robot.command_interfaces.get(params.command_interface)
    if kinds is None:
        raise ParamError(f'parameter "command_interface": "{params.command_interface}" is not '
                         f'one of {sorted(robot.command_interfaces)}')
    if contract.action.kind not in kinds:
        raise ContractError(f'action.kind: "{contract.action.kind}" cannot be sent on '
                            f'command_interface "{params.command_interface}"')
    positive(params, 'record_max_file_mb', 'ood_window_s')
    if not 0 <= params.loop_priority <= 99:
        raise ParamError('parameter "loop_priority": 0 (the scheduling the node was launched '
                         f'with) or a SCHED_FIFO priority 1-99, got {params.loop_priority}')
    if not 0.0 <= params.ood_warn_share <= 1.0:
        raise ParamError('parameter "ood_warn_share": must be a share in [0, 1], got '
                         f'{params.ood_warn_share}')
    robot.check_params(contract, params, model)


def _value(params, key: str) -> float:
    """params.key, where key may be 'name[i]'."""
    if '[' in key:
        name, index = key[:-1].split('[')
        return getattr(params, name)[int(index)]
    return getattr(params, key)


def positive(params, *keys: str) -> None:
    """ParamError naming the first key whose value is not > 0."""
    for key in keys:
        if not _value(params, key) > 0.0:
            raise ParamError(f'parameter "{key}": must be > 0, got {_value(params, key)}')


def non_negative(params, *keys: str) -> None:
    """ParamError naming the first key whose value is negative."""
    for key in keys:
        if not _value(params, key) >= 0.0:
            raise ParamError(f'parameter "{key}": must be >= 0, got {_value(params, key)}')
