"""URDF -> MuJoCo model of a fixed-base hand holding a free object (a cube in the palm).

Built on the generic fixed-base path (``sim2real.sim.joint_robot``): one torque actuator per
joint (``ctrl`` is the joint torque [N m]; the PD law runs in our code at physics rate),
armature from the URDF's motor model, its contact settings, and the object its ``<sim2real>``
declares. This module adds what in-hand manipulation needs on top: the solver settings, the
default pose (``<sim2real><default_pose>``), the fingertips (``<sim2real><fingertips
links=""/>``) and the object's reference frame (the link its ``<object>`` is placed in, e.g.
the palm centre, whose z axis is the rotation axis). Names and addresses are resolved once,
into ``InHandInfo``. The task scene and the HIL twin both build their model here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np

from sim2real.sim.joint_robot import (
    fixed_base_spec, joint_chain_info, JointChainInfo, movable_joints)
from sim2real.sim.objects import read_objects
from sim2real.urdf import has_motors, parse_urdf, read_joint_pose, read_motors, \
    sim2real_element, UrdfError


@dataclass(frozen=True)
class SolverCfg:
    """MuJoCo solver settings of an in-hand model, chosen with bench/raw_hand.py: at a 5 ms
    physics step and 20 solver iterations the cube's drops under moving fingers match a 1 ms
    reference; MuJoCo Playground's LEAP setting (10 ms, 5 iterations) drops it 2-4x as often
    in this model."""

    iterations: int = 20
    """Constraint solver iterations (Playground's LEAP tasks: 5; MuJoCo's default: 100)."""
    ls_iterations: int = 10
    """Line-search iterations (Playground: 8; MuJoCo's default: 50)."""
    cone: str = 'pyramidal'
    """Friction cone: 'pyramidal' or 'elliptic'."""
    impratio: float = 1.0
    """Ratio of frictional to normal constraint impedance (elliptic cones)."""


@dataclass(frozen=True)
class InHandInfo(JointChainInfo):
    """JointChainInfo plus what in-hand terms read: pose, motors, fingertips, the object."""

    default_joint_pos_rad: np.ndarray = None
    """<sim2real><default_pose> [rad], (n,)."""
    stall_torque_nm: np.ndarray = None
    """Torque-speed line: torque at zero speed [N m], (n,)."""
    no_load_speed_rad_s: np.ndarray = None
    """Torque-speed line: speed of zero available torque [rad/s], (n,)."""
    armature_kg_m2: np.ndarray = None
    """Reflected rotor inertia [kg m^2], (n,)."""
    fingertip_names: tuple[str, ...] = ()
    """Fingertip links in <fingertips> order."""
    fingertip_body_ids: np.ndarray = None
    """Body of each fingertip, (k,)."""
    fingertip_geom_ids: np.ndarray = None
    """The collision geom centred on each fingertip frame (its pad), (k,)."""
    object_name: str = ''
    """The held object's body, free joint and geom name."""
    object_body_id: int = -1
    """The object's body."""
    object_geom_id: int = -1
    """The object's geom."""
    object_qpos_adr: int = -1
    """Address of the object's free joint in qpos (pos 3, quat wxyz 4)."""
    object_qvel_adr: int = -1
    """Address of the object's free joint in qvel (lin 3 world, ang 3 body)."""
    object_size_m: tuple[float, ...] = ()
    """The object's full edge lengths or diameter [m]."""
    object_mass_kg: float = 0.0
    """The object's nominal mass [kg]."""
    frame_body_id: int = -1
    """The link the object is placed in (the palm centre): its z axis is the task axis."""
    object_spawn_pos_m: np.ndarray = None
    """The object's spawn position [m; world]."""
    hand_body_ids: np.ndarray = None
    """Every body of the hand (not the world, not the object), (b,)."""


def _fingertips(urdf: Path) -> tuple[str, ...]:
    """<sim2real><fingertips links="..."/>; UrdfError when absent or not links."""
    root = parse_urdf(urdf)
    ext = sim2real_element(root)
    tips = ext.find('fingertips') if ext is not None else None
    names = tuple(tips.get('links', '').split()) if tips is not None else ()
    if not names:
        raise UrdfError(f'{urdf}: no <sim2real><fingertips links="..."/> element')
    links = {link.get('name') for link in root.findall('link')}
    unknown = [n for n in names if n not in links]
    if unknown:
        raise UrdfError(f'{urdf}: <fingertips> names no link {unknown}')
    return names


def _pad_geom(model: mujoco.MjModel, tip: int, path: Path) -> int:
    """The collision geom centred on fingertip body tip (on it or on its parent link)."""
    parent = int(model.body_parentid[tip])
    for geom in range(model.ngeom):
        body = int(model.geom_bodyid[geom])
        centre = model.geom_pos[geom] if body == tip else (
            model.geom_pos[geom] - model.body_pos[tip] if body == parent else None)
        if centre is not None and np.allclose(centre, 0.0, atol=1e-9):
            return geom
    raise UrdfError(f'{path}: fingertip "{model.body(tip).name}" is not the centre of a '
                    'collision geom of its link (the fingertip pad)')


def in_hand_spec(urdf: str | Path, physics_dt_s: float,
                 solver: SolverCfg = SolverCfg()) -> mujoco.MjSpec:
    """Uncompiled in-hand MjSpec: the fixed-base hand, its object, the solver settings."""
    path = Path(urdf)
    objects = read_objects(path)
    if len(objects) != 1:
        raise UrdfError(f'{path}: an in-hand model needs exactly one <sim2real><object>, '
                        f'found {len(objects)}')
    if not has_motors(path):
        raise UrdfError(f'{path}: no <sim2real><motor> model')
    spec = fixed_base_spec(path, physics_dt_s)
    spec.option.iterations, spec.option.ls_iterations = solver.iterations, solver.ls_iterations
    cones = {'pyramidal': mujoco.mjtCone.mjCONE_PYRAMIDAL,
             'elliptic': mujoco.mjtCone.mjCONE_ELLIPTIC}
    if solver.cone not in cones:
        raise ValueError(f'solver cone must be one of {sorted(cones)}, got {solver.cone!r}')
    spec.option.cone, spec.option.impratio = cones[solver.cone], solver.impratio
    return spec


def in_hand_info(model: mujoco.MjModel, urdf: str | Path) -> InHandInfo:
    """Resolve the hand's joints, pose, motors, fingertips and object once."""
    path = Path(urdf)
    names = movable_joints(path)
    chain = joint_chain_info(model, path, names)
    motors = np.array(list(read_motors(path, names).values()))
    obj = read_objects(path)[0]
    joint = model.joint(obj.name)
    tips = _fingertips(path)
    tip_ids = [model.body(n).id for n in tips]
    object_body = model.body(obj.name).id
    hand = np.array([b for b in range(1, model.nbody)
                     if b != object_body and model.body_rootid[b] != object_body])
    return InHandInfo(
        **vars(chain),
        default_joint_pos_rad=np.array(read_joint_pose(path, 'default_pose', names)),
        stall_torque_nm=motors[:, 0], no_load_speed_rad_s=motors[:, 1],
        armature_kg_m2=motors[:, 2],
        fingertip_names=tips,
        fingertip_body_ids=np.array(tip_ids),
        fingertip_geom_ids=np.array([_pad_geom(model, t, path) for t in tip_ids]),
        object_name=obj.name, object_body_id=object_body,
        object_geom_id=model.geom(obj.name).id,
        object_qpos_adr=int(joint.qposadr[0]), object_qvel_adr=int(joint.dofadr[0]),
        object_size_m=obj.size_m, object_mass_kg=obj.mass_kg,
        frame_body_id=model.body(obj.link).id,
        object_spawn_pos_m=model.body_pos[object_body].copy(),
        hand_body_ids=hand)


def in_hand_model(urdf: str | Path, physics_dt_s: float, solver: SolverCfg = SolverCfg(),
                  ) -> tuple[mujoco.MjModel, InHandInfo]:
    """Compiled in-hand model and its info, both from one URDF."""
    model = in_hand_spec(urdf, physics_dt_s, solver).compile()
    return model, in_hand_info(model, urdf)
