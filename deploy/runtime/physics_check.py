"""Cross-checks of a contract against physics that one edited file cannot fake.

The URDF (its hash is in the contract) is the truth about the robot: its mass, its rotor
model (<sim2real><rotor_model>), its joints' position, velocity and effort limits. A contract
whose physical values disagree with it, or whose fields disagree with each other (hover
thrust and mass, action gains and robot gains), is refused, naming the field. The parameter
file may only tighten the limits the URDF and the contract give.

Every error is a ContractError whose message starts with the field at fault.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pinocchio as pin

from sim2real.contract import Contract, ContractError
from sim2real.urdf import read_rotor_params, UrdfError

GRAVITY_M_S2 = 9.81
"""Gravity of the simulator the policies train in [m/s^2] (MuJoCo's default)."""
HOVER_RTOL = 1e-3
"""Hover thrust within 0.1 % of m g (a contract may use 9.80665)."""
SAME_RTOL = 1e-6
"""Two copies of one value (URDF and contract, action and robot) agree to this."""
ROTOR_FIELDS = ('thrust_coefficient', 'torque_coefficient', 'time_constant_s',
                'max_speed_rad_s', 'min_speed_rad_s', 'positions_b', 'directions')
ROTOR_KINDS = ('thrust_body_rates', 'rotor_speeds')
"""Action kinds of rotor craft: their contracts state a rotor model."""
JOINT_KINDS_NEED = ('scale', 'kp_nm_per_rad', 'kd_nm_s_per_rad')


def field(mapping: dict, path: str):
    """mapping's value at a dotted path ('robot_params.rotors.max_speed_rad_s'), or raise
    ContractError naming the path as required."""
    value = mapping
    for key in path.split('.'):
        if not isinstance(value, dict) or key not in value:
            raise ContractError(f'{path}: required, missing from the contract')
        value = value[key]
    return value


def numbers(value, path: str, size: int | None = None) -> np.ndarray:
    """value as a float64 array of finite numbers (of length size when given)."""
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ContractError(f'{path}: must be numbers, got {value!r}') from None
    if not np.isfinite(array).all():
        raise ContractError(f'{path}: must be finite numbers, got {value!r}')
    if size is not None and array.shape != (size,):
        raise ContractError(f'{path}: must hold {size} numbers, got {value!r}')
    return array


def same(path: str, ours, theirs, where: str, labels=None) -> None:
    """ContractError naming path (and the first differing element, with its label) when two
    copies of a value differ beyond SAME_RTOL."""
    a, b = numbers(ours, path), np.asarray(theirs, dtype=np.float64)
    if a.shape != b.shape:
        raise ContractError(f'{path}: the contract says {ours}, {where} says {b.tolist()}')
    close = np.isclose(a, b, rtol=SAME_RTOL, atol=0.0).reshape(len(a) if a.ndim else 1, -1)
    if close.all():
        return
    if a.ndim == 0:
        raise ContractError(f'{path}: the contract says {ours}, {where} says {b.tolist()}')
    i = int(np.flatnonzero(~close.all(axis=1))[0])
    label = f' for "{labels[i]}"' if labels is not None else ''
    raise ContractError(f'{path}[{i}]: the contract says {a[i].tolist()}, {where} says '
                        f'{b[i].tolist()}{label}')


def check_rotor_physics(contract: Contract, urdf: str | Path) -> None:
    """Rotor model equal to the URDF's, hover thrust = m g, action limits from the rotors."""
    raw = {'robot_params': contract.robot_params, 'action': {'params': contract.action.params}}
    rotors = field(raw, 'robot_params.rotors')
    try:
        truth = read_rotor_params(urdf)
    except UrdfError as exc:
        raise ContractError(f'robot_params.rotors: {exc}') from exc
    for name in ROTOR_FIELDS:
        same(f'robot_params.rotors.{name}', field(raw, f'robot_params.rotors.{name}'),
             getattr(truth, name), f'the URDF {Path(urdf).name}')
    mass_kg = float(numbers(field(raw, 'robot_params.mass_kg'), 'robot_params.mass_kg'))
    hover_n = float(numbers(field(raw, 'robot_params.hover_thrust_n'),
                            'robot_params.hover_thrust_n'))
    if not math.isclose(hover_n, mass_kg * GRAVITY_M_S2, rel_tol=HOVER_RTOL):
        raise ContractError(f'robot_params.hover_thrust_n: {hover_n} N, but a {mass_kg} kg '
                            f'vehicle hovers at m g = {mass_kg * GRAVITY_M_S2:.6g} N')
    max_collective_n = len(rotors['directions']) * truth.max_thrust_n
    if contract.action.kind == 'thrust_body_rates':
        same('action.params.hover_thrust_n', field(raw, 'action.params.hover_thrust_n'),
             hover_n, 'robot_params.hover_thrust_n')
        same('action.params.max_collective_thrust_n',
             field(raw, 'action.params.max_collective_thrust_n'), max_collective_n,
             'the rotor model (rotors x kf x max_speed^2)')
        rate = numbers(field(raw, 'action.params.max_body_rate_rad_s'),
                       'action.params.max_body_rate_rad_s')
        if not rate > 0.0:
            raise ContractError(f'action.params.max_body_rate_rad_s: must be > 0, got {rate}')
    elif contract.action.kind == 'rotor_speeds':
        same('action.params.max_speed_rad_s', field(raw, 'action.params.max_speed_rad_s'),
             truth.max_speed_rad_s, f'the URDF {Path(urdf).name}')
        same('action.params.min_speed_rad_s', field(raw, 'action.params.min_speed_rad_s'),
             truth.min_speed_rad_s, f'the URDF {Path(urdf).name}')


def urdf_joint_limits(model: pin.Model, names: list[str]) -> dict[str, np.ndarray]:
    """Position, velocity and effort limits of the named one-dof joints, in that order."""
    ids = [model.joints[model.getJointId(name)] for name in names]
    for name, joint in zip(names, ids):
        if joint.nq != 1:
            raise ContractError(f'joint_names: "{name}" is not a one-dof joint in the URDF')
    q, v = [j.idx_q for j in ids], [j.idx_v for j in ids]
    return {'pos_min_rad': model.lowerPositionLimit[q].copy(),
            'pos_max_rad': model.upperPositionLimit[q].copy(),
            'velocity_limit_rad_s': model.velocityLimit[v].copy(),
            'effort_limit_nm': model.effortLimit[v].copy()}


def check_joint_physics(contract: Contract, model: pin.Model) -> None:
    """Gains present and consistent, limits equal to the URDF's, default pose inside them."""
    names, n = contract.joint_names, len(contract.joint_names)
    limits = urdf_joint_limits(model, names)
    raw = {'robot_params': contract.robot_params, 'action': {'params': contract.action.params}}
    for key in JOINT_KINDS_NEED:
        path = f'action.params.{key}'
        value = numbers(field(raw, path), path)
        if key != 'scale' and value.shape != (n,):
            raise ContractError(f'{path}: must hold {n} numbers, one per joint')
        if not np.all(value >= 0.0) or (key == 'scale' and not np.all(value > 0.0)):
            raise ContractError(f'{path}: must be positive, got {value.tolist()}')
    params = contract.action.params
    same('action.params.default_joint_pos_rad', params.get('default_joint_pos_rad',
         contract.default_joint_pos_rad), contract.default_joint_pos_rad,
         'default_joint_pos_rad')
    for key in ('kp_nm_per_rad', 'kd_nm_s_per_rad', 'effort_limit_nm'):
        if key in contract.robot_params and key in params:
            same(f'action.params.{key}', params[key], contract.robot_params[key],
                 f'robot_params.{key}')
    where = 'the URDF'
    for source in ('robot_params', 'action.params'):
        table = contract.robot_params if source == 'robot_params' else params
        for key in ('effort_limit_nm', 'velocity_limit_rad_s'):
            if key in table:
                same(f'{source}.{key}', numbers(table[key], f'{source}.{key}', n),
                     limits[key], where, names)
    if 'joint_pos_limits_rad' in contract.robot_params:
        same('robot_params.joint_pos_limits_rad', contract.robot_params['joint_pos_limits_rad'],
             np.stack([limits['pos_min_rad'], limits['pos_max_rad']], axis=1), where, names)
    default = numbers(contract.default_joint_pos_rad, 'default_joint_pos_rad', n)
    outside = np.flatnonzero((default < limits['pos_min_rad']) | (default > limits['pos_max_rad']))
    if len(outside):
        i = int(outside[0])
        raise ContractError(f'default_joint_pos_rad[{i}]: {default[i]} rad of "{names[i]}" is '
                            f'outside the URDF limits [{limits["pos_min_rad"][i]}, '
                            f'{limits["pos_max_rad"][i]}]')


def check_tighter(params, model: pin.Model) -> None:
    """Parameter position limits inside the URDF's, torque and rate limits at most its effort
    and velocity limits (per joint, in the parameter file's order)."""
    names = list(params.joint_names)
    limits = urdf_joint_limits(model, names)
    for i, name in enumerate(names):
        low, high = limits['pos_min_rad'][i], limits['pos_max_rad'][i]
        if params.pos_min_rad[i] < low or params.pos_max_rad[i] > high:
            raise ContractError(f'pos_min_rad[{i}]: limits [{params.pos_min_rad[i]}, '
                                f'{params.pos_max_rad[i]}] of "{name}" exceed the URDF limits '
                                f'[{low}, {high}]')
    for key, urdf_key, unit in (('torque_limit_nm', 'effort_limit_nm', 'N m'),
                                ('max_rate_rad_s', 'velocity_limit_rad_s', 'rad/s')):
        for i, name in enumerate(names):
            ours, bound = getattr(params, key)[i], limits[urdf_key][i]
            if bound > 0.0 and ours > bound * (1.0 + SAME_RTOL):
                raise ContractError(
                    f'{key}[{i}]: parameter {ours} {unit} on "{name}" exceeds the URDF '
                    f'{urdf_key.replace("_", " ")} {bound} {unit}; the parameter file may '
                    f'only tighten limits')
