"""URDF -> MuJoCo model of a four-legged robot (FL, FR, RL, RR legs of hip, thigh and calf).

The model has a free-floating base, one torque actuator per joint (``ctrl`` is the joint
torque [N m]; the PD law runs in our code at physics rate), joint armature from the URDF's
motor model, contacts between the robot and the ground only, and an optional heightfield in
place of the flat floor. The policy's joint order is the URDF's (its movable joints as the
file lists them, ``sim2real.sim.joint_robot.movable_joints``), which must be the hip, thigh and
calf of each leg. Names, addresses and limits are resolved once, into ``LeggedInfo``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np

from sim2real.sim.joint_robot import joint_chain_info, movable_joints
from sim2real.sim.mjcf import BASE_BODY, load_floating_base
from sim2real.urdf import float_attr, parse_urdf, read_joint_pose, read_motors, UrdfError

LEGS = ('FL', 'FR', 'RL', 'RR')
JOINT_KINDS = ('hip', 'thigh', 'calf')
JOINT_NAMES = tuple(f'{leg}_{kind}_joint' for leg in LEGS for kind in JOINT_KINDS)
"""The joints the builder's leg layout needs (the shipped URDF lists them in this order)."""
FOOT_LINKS = tuple(f'{leg}_foot' for leg in LEGS)

# Foot-ground contact. condim 3: sliding friction only (no torsional/rolling), as mjlab's Go2
# feet. mu = 0.8: MuJoCo Menagerie's Go2 foot friction; priority 1 makes the foot's value win
# over the floor's (MuJoCo otherwise takes the larger of the two). Randomize per env on top.
FOOT_FRICTION = (0.8, 0.02, 0.01)
FOOT_CONDIM = 3
# Trunk, thigh and calf shapes touch the ground only to be detected (collision penalties and
# terminations): frictionless, condim 1. Robot geoms have contype 0 and conaffinity 1, the
# floor contype 1: robot-ground pairs collide, robot-robot pairs never (no self-collision).
ROBOT_CONTYPE, ROBOT_CONAFFINITY = 0, 1
# Elliptic friction cones with impratio 100, as MuJoCo Menagerie's Go2 ("increased impratio to
# reduce slippage"): with MuJoCo's default pyramidal cone and impratio 1 the feet of a robot
# standing on kp 20 PD creep outward at 0.5-2 cm/s; here at ~0.15 mm/s.
CONE, IMPRATIO = mujoco.mjtCone.mjCONE_ELLIPTIC, 100.0
HFIELD_BASE_DEPTH_M = 0.5


@dataclass(frozen=True)
class LeggedInfo:
    """Indices, limits and nominal values of a compiled legged model, in policy joint order."""

    joint_names: tuple[str, ...]
    """Actuated joints in policy order: the URDF's order (legged_joint_names)."""
    qpos_adr: np.ndarray
    """Address of each joint in qpos, (12,)."""
    qvel_adr: np.ndarray
    """Address of each joint in qvel, (12,)."""
    actuator_ids: np.ndarray
    """Torque actuator of each joint, (12,)."""
    effort_limit_nm: np.ndarray
    """Joint torque limit [N m], (12,)."""
    velocity_limit_rad_s: np.ndarray
    """Joint speed limit [rad/s], (12,)."""
    pos_limits_rad: np.ndarray
    """Joint position range (lower, upper) [rad], (12, 2)."""
    default_joint_pos_rad: np.ndarray
    """Standing pose [rad], (12,)."""
    stall_torque_nm: np.ndarray
    """Torque-speed line: torque at zero speed [N m], (12,)."""
    no_load_speed_rad_s: np.ndarray
    """Torque-speed line: speed of zero available torque [rad/s], (12,)."""
    armature_kg_m2: np.ndarray
    """Reflected rotor inertia rotor_inertia * gear^2 [kg m^2], (12,)."""
    foot_names: tuple[str, ...]
    """Foot links in leg order."""
    foot_body_ids: np.ndarray
    """Body of each foot, (4,)."""
    foot_geom_ids: np.ndarray
    """Sphere geom of each foot, (4,)."""
    foot_radius_m: float
    """Foot sphere radius [m]."""
    base_body_id: int
    """The floating base (trunk) body."""
    thigh_body_ids: np.ndarray
    """Thigh bodies in leg order, (4,)."""
    calf_body_ids: np.ndarray
    """Calf bodies in leg order, (4,)."""
    nominal_base_height_m: float
    """Base height above flat ground in the standing pose with the feet just touching [m]."""


@dataclass(frozen=True)
class LeggedUrdfData:
    """What the legged builder reads from the URDF beyond MuJoCo's own import, policy order."""

    joint_names: tuple[str, ...]
    """The policy's joint order: the URDF's (legged_joint_names)."""
    velocity_limit_rad_s: np.ndarray
    """<limit velocity> of each joint [rad/s]."""
    default_joint_pos_rad: np.ndarray
    """<sim2real><standing_pose> [rad]."""
    stall_torque_nm: np.ndarray
    """<sim2real><motor stall_torque_nm> [N m]."""
    no_load_speed_rad_s: np.ndarray
    """<sim2real><motor no_load_speed_rad_s> [rad/s]."""
    armature_kg_m2: np.ndarray
    """rotor_inertia_kg_m2 * gear_ratio^2 of the joint's <motor> [kg m^2]."""


def legged_joint_names(urdf: str | Path) -> tuple[str, ...]:
    """The URDF's movable joints in the order it lists them (the policy order); UrdfError
    unless they are exactly the hip, thigh and calf joints of the four legs (JOINT_NAMES)."""
    names = movable_joints(urdf)
    missing = [name for name in JOINT_NAMES if name not in names]
    if missing:
        raise UrdfError(f'{urdf}: missing legged joints {missing}; expected {list(JOINT_NAMES)}')
    extra = [name for name in names if name not in JOINT_NAMES]
    if extra:
        raise UrdfError(f'{urdf}: movable joints {extra} are not part of the four-legged '
                        f'layout {list(JOINT_NAMES)}')
    return names


def _joint_elements(root: ET.Element, path: Path) -> dict[str, ET.Element]:
    """The URDF's joint elements by name; UrdfError if a leg joint is not revolute or a foot
    link is absent."""
    joints = {j.get('name'): j for j in root.findall('joint')}
    missing = [name for name in JOINT_NAMES if name not in joints]
    if missing:
        raise UrdfError(f'{path}: missing legged joints {missing}; expected {list(JOINT_NAMES)}')
    for name in JOINT_NAMES:
        if joints[name].get('type') != 'revolute':
            raise UrdfError(f'{path}: joint "{name}" is {joints[name].get("type")}, '
                            'expected revolute')
    links = {link.get('name') for link in root.findall('link')}
    if not set(FOOT_LINKS) <= links:
        raise UrdfError(f'{path}: missing foot links {sorted(set(FOOT_LINKS) - links)}')
    return joints


def read_legged_urdf(urdf: str | Path) -> LeggedUrdfData:
    """Joint velocity limits, standing pose and motor model of a legged URDF, policy order."""
    path = Path(urdf)
    root = parse_urdf(path)
    joints = _joint_elements(root, path)
    names = legged_joint_names(path)
    pose = read_joint_pose(path, 'standing_pose', names)
    motors = read_motors(path, names)
    velocity = []
    for name in names:
        limit = joints[name].find('limit')
        if limit is None:
            raise UrdfError(f'{path}: joint "{name}" has no <limit>')
        velocity.append(float_attr(limit, 'velocity', path))
    table = np.array([motors[name] for name in names])
    return LeggedUrdfData(
        joint_names=names,
        velocity_limit_rad_s=np.array(velocity),
        default_joint_pos_rad=np.array(pose),
        stall_torque_nm=table[:, 0], no_load_speed_rad_s=table[:, 1],
        armature_kg_m2=table[:, 2])


def _set_contacts(spec: mujoco.MjSpec) -> None:
    """Robot geoms touch the ground only; feet get locomotion friction, the rest none."""
    feet = set(FOOT_LINKS)
    for geom in spec.geoms:
        if geom.parent.name == 'world':
            continue
        geom.contype, geom.conaffinity = ROBOT_CONTYPE, ROBOT_CONAFFINITY
        if geom.parent.name in feet:
            geom.condim, geom.priority, geom.friction = FOOT_CONDIM, 1, list(FOOT_FRICTION)
        else:
            geom.condim = 1


def _add_hfield(spec: mujoco.MjSpec, hfield: tuple[np.ndarray, float, float]) -> None:
    """Turn the floor into a heightfield with the given heights [m] (rows along y)."""
    heights, size_x_m, size_y_m = hfield
    heights = np.asarray(heights, dtype=np.float64)
    if heights.ndim != 2 or min(heights.shape) < 2 or not np.all(np.isfinite(heights)):
        raise ValueError(f'hfield heights must be a finite (rows>=2, cols>=2) array, '
                         f'got shape {heights.shape}')
    low, span = heights.min(), np.ptp(heights)
    elevation = span if span > 0 else 1.0   # MuJoCo needs a positive elevation scale
    # MuJoCo stores elevations in [0, 1] scaled by size[2]; the geom sits at the lowest height
    spec.add_hfield(name='terrain', nrow=heights.shape[0], ncol=heights.shape[1],
                    size=[size_x_m / 2, size_y_m / 2, elevation, HFIELD_BASE_DEPTH_M],
                    userdata=((heights - low) / elevation).ravel().tolist())
    floor = spec.geom('floor')
    floor.type = mujoco.mjtGeom.mjGEOM_HFIELD
    floor.hfieldname = 'terrain'
    floor.pos = [0.0, 0.0, low]


def legged_spec(urdf: str | Path, physics_dt_s: float,
                hfield: tuple[np.ndarray, float, float] | None = None) -> mujoco.MjSpec:
    """Uncompiled legged MjSpec: floating base, torque actuators, armature, contacts, terrain.

    hfield = (heights_m (rows, cols), size_x_m, size_y_m): terrain heights [m; world z] on a
    grid spanning the full extent size_x_m x size_y_m centred on the world origin; row i is
    y = -size_y_m/2 + i * size_y_m/(rows-1), column j is x = -size_x_m/2 + j * size_x_m/(cols-1).
    """
    data = read_legged_urdf(urdf)
    spec = load_floating_base(urdf, physics_dt_s)
    spec.compiler.fusestatic = False   # keep the foot links as bodies
    spec.option.cone, spec.option.impratio = CONE, IMPRATIO
    for name, armature in zip(data.joint_names, data.armature_kg_m2):
        joint = spec.joint(name)
        joint.armature = float(armature)
        effort = float(joint.actfrcrange[1])
        if effort <= 0.0:
            raise UrdfError(f'{urdf}: joint "{name}" needs <limit effort> > 0')
        spec.add_actuator(name=name.removesuffix('_joint'), trntype=mujoco.mjtTrn.mjTRN_JOINT,
                          target=name, ctrllimited=True, ctrlrange=[-effort, effort])
    _set_contacts(spec)
    if hfield is not None:
        _add_hfield(spec, hfield)
    return spec


def legged_info(model: mujoco.MjModel, urdf: str | Path) -> LeggedInfo:
    """Resolve names to ids and addresses once, and the standing height, for a legged model."""
    data = read_legged_urdf(urdf)
    names = data.joint_names
    chain = joint_chain_info(model, urdf, names, [n.removesuffix('_joint') for n in names])
    foot_bodies = np.array([model.body(name).id for name in FOOT_LINKS])
    foot_geoms = np.array([_sphere_geom(model, body) for body in foot_bodies])
    return LeggedInfo(
        **vars(chain),
        default_joint_pos_rad=data.default_joint_pos_rad,
        stall_torque_nm=data.stall_torque_nm,
        no_load_speed_rad_s=data.no_load_speed_rad_s,
        armature_kg_m2=data.armature_kg_m2,
        foot_names=FOOT_LINKS,
        foot_body_ids=foot_bodies,
        foot_geom_ids=foot_geoms,
        foot_radius_m=float(model.geom_size[foot_geoms[0], 0]),
        base_body_id=model.body(BASE_BODY).id,
        thigh_body_ids=np.array([model.body(f'{leg}_thigh').id for leg in LEGS]),
        calf_body_ids=np.array([model.body(f'{leg}_calf').id for leg in LEGS]),
        nominal_base_height_m=_standing_height(model, chain.qpos_adr,
                                               data.default_joint_pos_rad, foot_geoms),
    )


def _sphere_geom(model: mujoco.MjModel, body_id: int) -> int:
    """The (single) sphere geom of a foot body."""
    ids = [g for g in range(model.ngeom) if model.geom_bodyid[g] == body_id
           and model.geom_type[g] == mujoco.mjtGeom.mjGEOM_SPHERE]
    if len(ids) != 1:
        raise UrdfError(f'foot body "{model.body(body_id).name}" needs exactly one sphere '
                        f'collision, found {len(ids)}')
    return ids[0]


def _standing_height(model: mujoco.MjModel, qpos_adr: np.ndarray, pose_rad: np.ndarray,
                     foot_geoms: np.ndarray) -> float:
    """Base height [m] that puts the lowest foot sphere on z = 0 in the standing pose."""
    data = mujoco.MjData(model)
    data.qpos[3:7] = [1.0, 0.0, 0.0, 0.0]
    data.qpos[qpos_adr] = pose_rad
    mujoco.mj_kinematics(model, data)
    lowest = np.min(data.geom_xpos[foot_geoms, 2] - model.geom_size[foot_geoms, 0])
    return float(data.qpos[2] - lowest)


def legged_model(urdf: str | Path, physics_dt_s: float,
                 hfield: tuple[np.ndarray, float, float] | None = None,
                 ) -> tuple[mujoco.MjModel, LeggedInfo]:
    """Compiled legged model and its resolved indices, both from one URDF (see legged_spec)."""
    model = legged_spec(urdf, physics_dt_s, hfield).compile()
    return model, legged_info(model, urdf)
