"""Cross-checks of a contract against physics that one edited file cannot fake.

The URDF (its hash is in the contract) is the truth about the robot: its mass, its rotor
model (<sim2real><rotor_model>), its joints' position, velocity and effort limits. A contract
whose physical values disagree with it, or whose fields disagree with each other (hover
thrust and mass, action gains and robot gains), is refused, naming the field. Every field a
check reads is required and must be numbers (JSON numbers, not strings). The parameter file
may only tighten the limits the URDF and the contract give.

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
ROTOR_KINDS = ('thrust_body_rates', 'rotor_speeds')
"""Action kinds of rotor craft: their contracts state a rotor model."""
ROTOR_FIELDS = ('thrust_coefficient', 'torque_coefficient', 'time_constant_s',
                'max_speed_rad_s', 'min_speed_rad_s', 'positions_b', 'directions')
JOINT_ACTION_PARAMS = ('scale', 'kp_nm_per_rad', 'kd_nm_s_per_rad')
"""action.params every joint action kind carries (the gains are per joint)."""
JOINT_LIMITS = ('effort_limit_nm', 'velocity_limit_rad_s', 'joint_pos_limits_rad')
"""robot_params of a joint robot that must equal the URDF's limits (per joint)."""


def tree(contract: Contract) -> dict:
    """The contract's parameter dicts under their dotted names, for field()."""
    return {'robot_params': contract.robot_params, 'action': {'params': contract.action.params}}


def field(mapping: dict, path: str):
    """mapping's value at a dotted path ('robot_params.rotors.max_speed_rad_s'); ContractError
    naming the path as required when it is absent."""
    value = mapping
    for key in path.split('.'):
        if not isinstance(value, dict) or key not in value:
            raise ContractError(f'{path}: required, missing from the contract')
        value = value[key]
    return value


def _all_numbers(value) -> bool:
    """Whether value is a JSON number or nested lists of them (no strings, no booleans;
    tuples too, as a contract built in code holds them)."""
    if isinstance(value, (list, tuple)):
        return all(_all_numbers(v) for v in value)
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def numbers(value, path: str, size: int | None = None) -> np.ndarray:
    """value as a float64 array of finite JSON numbers (of length size when given)."""
    if not _all_numbers(value):
        raise ContractError(f'{path}: must be numbers, got {value!r:.80}')
    array = np.asarray(value, dtype=np.float64)
    if not np.isfinite(array).all():
        raise ContractError(f'{path}: must be finite numbers, got {value!r:.80}')
    if size is not None and array.shape[:1] != (size,):
        raise ContractError(f'{path}: must hold {size} values, one per joint, got {value!r:.80}')
    return array


def number(raw: dict, path: str) -> float:
    """The required scalar at path of tree(contract)."""
    value = numbers(field(raw, path), path)
    if value.shape != ():
        raise ContractError(f'{path}: must be one number, got {value.tolist()}')
    return float(value)


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


def collective_thrust_n(rotors: dict) -> float:
    """Largest collective thrust of a rotor model [N]: rotors x kf x max_speed^2."""
    raw = {'robot_params': {'rotors': rotors}}
    kf = number(raw, 'robot_params.rotors.thrust_coefficient')
    max_speed = number(raw, 'robot_params.rotors.max_speed_rad_s')
    directions = numbers(field(raw, 'robot_params.rotors.directions'),
                         'robot_params.rotors.directions')
    return len(directions) * kf * max_speed ** 2


def check_rotor_physics(contract: Contract, urdf: str | Path) -> None:
    """Rotor model equal to the URDF's, hover thrust = m g, action limits from the rotors."""
    raw = tree(contract)
    try:
        truth = read_rotor_params(urdf)
    except UrdfError as exc:
        raise ContractError(f'robot_params.rotors: {exc}') from exc
    where = f'the URDF {Path(urdf).name}'
    for name in ROTOR_FIELDS:
        path = f'robot_params.rotors.{name}'
        same(path, field(raw, path), getattr(truth, name), where)
    mass_kg, hover_n = number(raw, 'robot_params.mass_kg'), number(
        raw, 'robot_params.hover_thrust_n')
    if not math.isclose(hover_n, mass_kg * GRAVITY_M_S2, rel_tol=HOVER_RTOL):
        raise ContractError(f'robot_params.hover_thrust_n: {hover_n} N, but a {mass_kg} kg '
                            f'vehicle hovers at m g = {mass_kg * GRAVITY_M_S2:.6g} N')
    if contract.action.kind == 'thrust_body_rates':
        _check_thrust_action(raw, hover_n, contract.robot_params['rotors'])
    elif contract.action.kind == 'rotor_speeds':
        for name in ('max_speed_rad_s', 'min_speed_rad_s'):
            same(f'action.params.{name}', field(raw, f'action.params.{name}'),
                 getattr(truth, name), where)


def _check_thrust_action(raw: dict, hover_n: float, rotors: dict) -> None:
    """Thrust-and-rates action: hover thrust and collective limit from the robot, rate > 0."""
    same('action.params.hover_thrust_n', field(raw, 'action.params.hover_thrust_n'), hover_n,
         'robot_params.hover_thrust_n')
    same('action.params.max_collective_thrust_n',
         field(raw, 'action.params.max_collective_thrust_n'), collective_thrust_n(rotors),
         'the rotor model (rotors x kf x max_speed^2)')
    rate = number(raw, 'action.params.max_body_rate_rad_s')
    if not rate > 0.0:
        raise ContractError(f'action.params.max_body_rate_rad_s: must be > 0, got {rate}')


def urdf_joint_limits(model: pin.Model, names: list[str]) -> dict[str, np.ndarray]:
    """Position, velocity and effort limits of the named one-dof joints, in that order."""
    ids = [model.joints[model.getJointId(name)] for name in names]
    for name, joint in zip(names, ids):
        if joint.nq != 1:
            raise ContractError(f'joint_names: "{name}" is not a one-dof joint in the URDF')
    q, v = [j.idx_q for j in ids], [j.idx_v for j in ids]
    lower, upper = model.lowerPositionLimit[q].copy(), model.upperPositionLimit[q].copy()
    return {'pos_min_rad': lower, 'pos_max_rad': upper,
            'joint_pos_limits_rad': np.stack([lower, upper], axis=1),
            'velocity_limit_rad_s': model.velocityLimit[v].copy(),
            'effort_limit_nm': model.effortLimit[v].copy()}


def check_joint_physics(contract: Contract, model: pin.Model) -> None:
    """Gains present and consistent, limits equal to the URDF's, default pose inside them."""
    names = contract.joint_names
    limits = urdf_joint_limits(model, names)
    _check_joint_action(contract)
    raw = tree(contract)
    for key in JOINT_LIMITS:
        path = f'robot_params.{key}'
        numbers(field(raw, path), path, len(names))   # present, numbers, one per joint
        same(path, field(raw, path), limits[key], 'the URDF', names)
    if 'effort_limit_nm' in contract.action.params:
        same('action.params.effort_limit_nm', contract.action.params['effort_limit_nm'],
             limits['effort_limit_nm'], 'the URDF', names)
    default = numbers(contract.default_joint_pos_rad, 'default_joint_pos_rad', len(names))
    outside = np.flatnonzero((default < limits['pos_min_rad']) | (default > limits['pos_max_rad']))
    if len(outside):
        i = int(outside[0])
        raise ContractError(f'default_joint_pos_rad[{i}]: {default[i]} rad of "{names[i]}" is '
                            f'outside the URDF limits [{limits["pos_min_rad"][i]}, '
                            f'{limits["pos_max_rad"][i]}]')


def _check_joint_action(contract: Contract) -> None:
    """Scale > 0, per-joint gains >= 0 equal to the robot's, the default pose as the robot's."""
    n, raw, params = len(contract.joint_names), tree(contract), contract.action.params
    for key in JOINT_ACTION_PARAMS:
        path = f'action.params.{key}'
        value = numbers(field(raw, path), path, None if key == 'scale' else n)
        if not (np.all(value > 0.0) if key == 'scale' else np.all(value >= 0.0)):
            raise ContractError(f'{path}: must be {"positive" if key == "scale" else ">= 0"}, '
                                f'got {value.tolist()}')
        if key != 'scale' and key in contract.robot_params:
            same(path, params[key], contract.robot_params[key], f'robot_params.{key}')
    same('action.params.default_joint_pos_rad', params.get(
         'default_joint_pos_rad', contract.default_joint_pos_rad),
         contract.default_joint_pos_rad, 'default_joint_pos_rad')


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
                                ('max_rate_rad_s', 'velocity_limit_rad_s', 'rad/s'),
                                ('relax_max_rate_rad_s', 'velocity_limit_rad_s', 'rad/s')):
        values = getattr(params, key, None) or ()   # an optional list may be empty
        for i, name in enumerate(names[:len(values)]):
            ours, bound = values[i], limits[urdf_key][i]
            if bound > 0.0 and ours > bound * (1.0 + SAME_RTOL):
                raise ContractError(
                    f'{key}[{i}]: parameter {ours} {unit} on "{name}" exceeds the URDF '
                    f'{urdf_key.replace("_", " ")} {bound} {unit}; the parameter file may '
                    f'only tighten limits')
