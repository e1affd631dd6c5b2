"""Refuse to start on any mismatch: contract vs URDF (Pinocchio) and vs the node parameters.

Every error is a ContractError whose message starts with the field at fault.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pinocchio as pin

from sim2real.contract import Contract, ContractError, file_sha256
from sim2real.deploy.runtime.params import JointParams, ParamError, QuadrotorParams
from sim2real.deploy.runtime.physics_check import (
    check_joint_physics, check_rotor_physics, check_tighter, collective_thrust_n, field, number,
    numbers, ROTOR_KINDS, tree)

# node command_interface -> action kinds it can carry
COMMAND_INTERFACES = {
    'cmd_vel_legacy': ('thrust_body_rates',),
    'rotor_speeds': ('rotor_speeds',),
    'joint_position': ('joint_position_offset', 'joint_position_delta', 'joint_position_ema',
                       'joint_position_rate_capped'),
}
MASS_RTOL = 1e-6


def total_mass_kg(model: pin.Model) -> float:
    """Mass of every body of a Pinocchio model, the root link included [kg]."""
    return float(sum(inertia.mass for inertia in model.inertias))


def check_urdf(contract: Contract, path: str | Path) -> pin.Model:
    """The Pinocchio model of path after checking sha256, robot name, joints and mass."""
    path = Path(path)
    digest = file_sha256(path)
    if digest != contract.urdf_sha256:
        raise ContractError(f'urdf_sha256: {path} hashes to {digest}, '
                            f'the policy was trained on {contract.urdf_sha256}')
    model = pin.buildModelFromUrdf(str(path))
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


def check_params(contract: Contract, params, model: pin.Model | None = None) -> None:
    """Rate, command interface and limits of the parameters against the contract."""
    check_contract(contract)
    if params.rate_hz != contract.policy_rate_hz:
        raise ContractError(f'policy_rate_hz: the policy runs at {contract.policy_rate_hz} Hz, '
                            f'parameter rate_hz is {params.rate_hz}')
    kinds = COMMAND_INTERFACES.get(params.command_interface)
    if kinds is None:
        raise ParamError(f'parameter "command_interface": "{params.command_interface}" is not '
                         f'one of {sorted(COMMAND_INTERFACES)}')
    if contract.action.kind not in kinds:
        raise ContractError(f'action.kind: "{contract.action.kind}" cannot be sent on '
                            f'command_interface "{params.command_interface}"')
    if isinstance(params, QuadrotorParams):
        _check_quadrotor(contract, params)
    elif isinstance(params, JointParams):
        _check_joints(contract, params, model)


def max_collective_thrust_n(contract: Contract) -> float:
    """The contract's largest collective thrust [N] (action params, else the rotor model)."""
    if 'max_collective_thrust_n' in contract.action.params:
        return number(tree(contract), 'action.params.max_collective_thrust_n')
    return collective_thrust_n(field(tree(contract), 'robot_params.rotors'))


def _check_quadrotor(contract: Contract, params: QuadrotorParams) -> None:
    """Thrust, rate, timeout and geofence limits."""
    limit = max_collective_thrust_n(contract)
    if params.thrust_max_n > limit:
        raise ContractError(f'thrust_max_n: {params.thrust_max_n} N exceeds the contract '
                            f'max_collective_thrust_n {limit} N')
    if not 0.0 <= params.thrust_min_n <= params.thrust_max_n:
        raise ParamError(f'parameter "thrust_min_n": {params.thrust_min_n} is not in '
                         f'[0, thrust_max_n={params.thrust_max_n}]')
    _positive(params, 'max_body_rate_rad_s', 'odom_timeout_s', 'max_tilt_rad',
              'rate_hz', 'max_speed_m_s', 'max_ang_vel_rad_s')
    _non_negative(params, 'imu_timeout_s', 'setpoint_timeout_s', 'soft_start_s',
                  'fallback_max_descent_s')
    if not np.all(np.less(params.geofence_min_m, params.geofence_max_m)):
        raise ParamError('parameter "geofence_min_m": must be below geofence_max_m per axis')
    raw = tree(contract)
    for path in ('robot_params.mass_kg', 'robot_params.hover_thrust_n'):
        number(raw, path)   # the fallback's thrust law
    collective_thrust_n(field(raw, 'robot_params.rotors'))   # the thrust limits
    if contract.action.kind == 'thrust_body_rates':
        trained = number(raw, 'action.params.max_body_rate_rad_s')
        if not params.max_body_rate_rad_s <= trained:
            raise ContractError(f'max_body_rate_rad_s: parameter {params.max_body_rate_rad_s} '
                                f'rad/s exceeds the trained action.params.max_body_rate_rad_s '
                                f'{trained}; the parameter file may only tighten limits')


def _check_joints(contract: Contract, params: JointParams, model: pin.Model | None) -> None:
    """Joint names by name, per-joint list lengths and limits (within the URDF's)."""
    for i, name in enumerate(contract.joint_names):
        if name not in params.joint_names:
            raise ContractError(f'joint_names[{i}]: contract joint "{name}" has no entry in '
                                f'parameter joint_names')
    for name in params.joint_names:
        if name not in contract.joint_names:
            raise ContractError(f'joint_names: parameter joint "{name}" is not in the contract')
    n = len(params.joint_names)
    for key in ('kp', 'kd', 'torque_limit_nm', 'pos_min_rad', 'pos_max_rad', 'max_rate_rad_s'):
        if len(getattr(params, key)) != n:
            raise ParamError(f'parameter "{key}": {len(getattr(params, key))} values for '
                             f'{n} joints')
    if min(params.kp + params.kd + params.torque_limit_nm, default=0.0) < 0.0:
        raise ParamError('parameter "kp": gains and torque limits must be >= 0')
    if not np.all(np.less(params.pos_min_rad, params.pos_max_rad)):
        raise ParamError('parameter "pos_min_rad": must be below pos_max_rad per joint')
    if params.fallback not in ('damping', 'hold'):
        raise ParamError(f'parameter "fallback": "{params.fallback}" is not damping or hold')
    _positive(params, 'joint_state_timeout_s', 'max_tilt_rad', 'joint_vel_limit_rad_s')
    _positive(params, *[f'max_rate_rad_s[{i}]' for i in range(n)])
    limits = numbers(field(tree(contract), 'robot_params.joint_pos_limits_rad'),
                     'robot_params.joint_pos_limits_rad', len(contract.joint_names))
    if limits.shape != (len(contract.joint_names), 2):
        raise ContractError('robot_params.joint_pos_limits_rad: must hold [lower, upper] per '
                            'joint (the plausibility latch reads it)')
    if params.leg_odometry_max_speed_m_s > 0.0 and not contract.robot_params.get('foot_names'):
        raise ContractError(
            'robot_params.foot_names: required by parameter leg_odometry_max_speed_m_s '
            f'({params.leg_odometry_max_speed_m_s} m/s, the leg-odometry latch)')
    if model is not None:
        check_tighter(params, model)


def _value(params, key: str) -> float:
    """params.key, where key may be 'name[i]'."""
    if '[' in key:
        name, index = key[:-1].split('[')
        return getattr(params, name)[int(index)]
    return getattr(params, key)


def _positive(params, *keys: str) -> None:
    """ParamError naming the first key whose value is not > 0."""
    for key in keys:
        if not _value(params, key) > 0.0:
            raise ParamError(f'parameter "{key}": must be > 0, got {_value(params, key)}')


def _non_negative(params, *keys: str) -> None:
    """ParamError naming the first key whose value is negative."""
    for key in keys:
        if not _value(params, key) >= 0.0:
            raise ParamError(f'parameter "{key}": must be >= 0, got {_value(params, key)}')
