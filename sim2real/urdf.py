"""URDF reading shared by the simulator and the robot runtime: XML, sim2real's rotor model.

Imports only the standard library, so the deploy runtime can check a contract against the
URDF's rotor model without the simulation stack.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path


class UrdfError(ValueError):
    """A URDF file is malformed or lacks something sim2real needs."""


@dataclass(frozen=True)
class RotorParams:
    """Rotor model of a multirotor, read from the URDF's <sim2real> element."""

    thrust_coefficient: float
    """kf [N/(rad/s)^2]."""
    torque_coefficient: float
    """km [N*m/(rad/s)^2]."""
    time_constant_s: float
    """Motor first-order lag time constant [s]."""
    max_speed_rad_s: float
    """Maximum rotor speed [rad/s]."""
    min_speed_rad_s: float
    """Minimum rotor speed when armed [rad/s]."""
    positions_b: tuple[tuple[float, float, float], ...]
    """Rotor hub positions [m; body frame, FLU], in rotor order."""
    directions: tuple[int, ...]
    """+1 for counter-clockwise rotors seen from above, -1 for clockwise."""

    @property
    def max_thrust_n(self) -> float:
        """Maximum thrust of one rotor [N]."""
        return self.thrust_coefficient * self.max_speed_rad_s ** 2

    @property
    def yaw_torque_per_thrust_m(self) -> float:
        """Yaw reaction torque per unit thrust, km / kf [m]."""
        return self.torque_coefficient / self.thrust_coefficient


def float_attr(elem: ET.Element, name: str, path: Path) -> float:
    """Read a required float attribute, with an error that names file, element and field."""
    text = elem.get(name)
    if text is None:
        raise UrdfError(f'{path}: <{elem.tag}> lacks attribute "{name}"')
    try:
        return float(text)
    except ValueError as exc:
        raise UrdfError(f'{path}: <{elem.tag} {name}="{text}"> is not a number') from exc


def float_list(text: str, count: int, what: str, path: Path) -> list[float]:
    """count numbers from a space-separated attribute value; UrdfError naming it otherwise."""
    try:
        values = [float(v) for v in text.split()]
    except ValueError as exc:
        raise UrdfError(f'{path}: {what}="{text}" is not {count} numbers') from exc
    if len(values) != count:
        raise UrdfError(f'{path}: {what}="{text}" is not {count} numbers')
    return values


def parse_urdf(path: str | Path) -> ET.Element:
    """Parse a URDF file, raising UrdfError with the file name on malformed XML."""
    path = Path(path)
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as exc:
        raise UrdfError(f'{path}: malformed XML: {exc}') from exc
    if root.tag != 'robot':
        raise UrdfError(f'{path}: root element is <{root.tag}>, expected <robot>')
    return root


def read_rotor_params(path: str | Path) -> RotorParams:
    """Read the rotor model and rotor hub positions of a multirotor URDF."""
    path = Path(path)
    root = parse_urdf(path)
    ext = root.find('sim2real')
    model = ext.find('rotor_model') if ext is not None else None
    if model is None:
        raise UrdfError(f'{path}: no <sim2real><rotor_model .../></sim2real> element')
    joint_origin = {}
    for joint in root.findall('joint'):
        child = joint.find('child')
        origin = joint.find('origin')
        if child is not None:
            xyz = origin.get('xyz', '0 0 0') if origin is not None else '0 0 0'
            joint_origin[child.get('link')] = tuple(float(v) for v in xyz.split())
    positions, directions = [], []
    for rotor in ext.findall('rotor'):
        link = rotor.get('link')
        if link not in joint_origin:
            raise UrdfError(f'{path}: rotor link "{link}" has no joint to the base')
        positions.append(joint_origin[link])
        direction = int(float_attr(rotor, 'direction', path))
        if direction not in (-1, 1):
            raise UrdfError(f'{path}: rotor "{link}" direction must be +1 or -1')
        directions.append(direction)
    if not positions:
        raise UrdfError(f'{path}: <sim2real> lists no <rotor> elements')
    return RotorParams(
        thrust_coefficient=float_attr(model, 'thrust_coefficient', path),
        torque_coefficient=float_attr(model, 'torque_coefficient', path),
        time_constant_s=float_attr(model, 'time_constant_s', path),
        max_speed_rad_s=float_attr(model, 'max_speed_rad_s', path),
        min_speed_rad_s=float(model.get('min_speed_rad_s', 0.0)),
        positions_b=tuple(positions),
        directions=tuple(directions),
    )


def sim2real_element(root: ET.Element) -> ET.Element | None:
    """The URDF's <sim2real> extension element, or None."""
    return root.find('sim2real')


def read_motors(path: str | Path, joint_names) -> dict[str, tuple[float, float, float]]:
    """(stall torque [N m], no-load speed [rad/s], armature [kg m^2]) per joint from
    <sim2real><motor joints gear_ratio rotor_inertia_kg_m2 stall_torque_nm
    no_load_speed_rad_s/>; armature = rotor_inertia * gear_ratio^2. UrdfError unless every one
    of joint_names is in exactly one <motor>."""
    path = Path(path)
    ext = sim2real_element(parse_urdf(path))
    motors = {}
    for motor in ext.findall('motor') if ext is not None else ():
        names = motor.get('joints', '').split()
        if not names:
            raise UrdfError(f'{path}: <motor> lacks attribute "joints"')
        gear = float_attr(motor, 'gear_ratio', path)
        rotor = float_attr(motor, 'rotor_inertia_kg_m2', path)
        values = (float_attr(motor, 'stall_torque_nm', path),
                  float_attr(motor, 'no_load_speed_rad_s', path), rotor * gear ** 2)
        if min(values) <= 0.0:
            raise UrdfError(f'{path}: <motor joints="{" ".join(names)}"> values must be > 0')
        twice = [name for name in names if name in motors]
        if twice:
            raise UrdfError(f'{path}: joints {twice} are in more than one <motor>')
        motors.update((name, values) for name in names)
    missing = [name for name in joint_names if name not in motors]
    if missing:
        raise UrdfError(f'{path}: no <sim2real><motor> covers joints {missing}')
    return {name: motors[name] for name in joint_names}


def has_motors(path: str | Path) -> bool:
    """Whether the URDF declares a <sim2real><motor> model."""
    ext = sim2real_element(parse_urdf(Path(path)))
    return ext is not None and ext.find('motor') is not None


def read_joint_pose(path: str | Path, tag: str, joint_names) -> tuple[float, ...]:
    """A pose <sim2real><TAG joint_name="rad" .../> [rad; m on a prismatic joint] in
    joint_names order; UrdfError when the element or a joint's value is missing."""
    path = Path(path)
    ext = sim2real_element(parse_urdf(path))
    pose = ext.find(tag) if ext is not None else None
    if pose is None:
        raise UrdfError(f'{path}: no <sim2real><{tag} .../></sim2real> element')
    unknown = sorted(set(pose.attrib) - set(joint_names))
    if unknown:
        raise UrdfError(f'{path}: <{tag}> names joints {unknown} that are not movable joints '
                        f'of the URDF ({", ".join(joint_names)})')
    return tuple(float_attr(pose, name, path) for name in joint_names)
