"""Any jointed robot from its URDF: its movable joints (names read from the URDF, in its
order), one torque actuator per joint, and the resolved indices and limits.

``ctrl`` is the joint torque [N m] (force [N] on a prismatic joint) within the URDF's
``<limit effort>``; a PD law runs in our code at physics rate
(``sim2real.sim.joint_actuator``). ``JointChainInfo`` holds what the PD and the terms read,
in the policy's joint order. Units follow the joint type: rad for revolute joints, m for
prismatic ones. Continuous joints are refused: the deploy chain clamps every target to a
position range.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np

from sim2real.sim.contacts import apply_contact_settings
from sim2real.sim.mjcf import load_fixed_base
from sim2real.sim.objects import add_free_object, read_objects
from sim2real.urdf import float_attr, has_motors, parse_urdf, read_motors, UrdfError

MOVABLE = ('revolute', 'prismatic')
"""URDF joint types of the actuated joints (one degree of freedom, a position range)."""


@dataclass(frozen=True)
class JointChainInfo:
    """Indices and limits of a compiled model's actuated joints, in policy order."""

    joint_names: tuple[str, ...]
    """Actuated joints in policy order (the URDF's unless given)."""
    qpos_adr: np.ndarray
    """Address of each joint in qpos, (n,)."""
    qvel_adr: np.ndarray
    """Address of each joint in qvel, (n,)."""
    actuator_ids: np.ndarray
    """Torque actuator of each joint, (n,)."""
    effort_limit_nm: np.ndarray
    """Joint torque limit [N m; N on a prismatic joint], (n,)."""
    velocity_limit_rad_s: np.ndarray
    """Joint speed limit, the URDF's <limit velocity> [rad/s; m/s], (n,)."""
    pos_limits_rad: np.ndarray
    """Joint position range (lower, upper) [rad; m], (n, 2)."""


def movable_joints(urdf: str | Path) -> tuple[str, ...]:
    """Names of the URDF's movable joints (MOVABLE types), in the order the file lists them;
    UrdfError for a continuous joint (no position range)."""
    root = parse_urdf(Path(urdf))
    for joint in root.findall('joint'):
        if joint.get('type') == 'continuous':
            raise UrdfError(f'{urdf}: joint "{joint.get("name")}" is continuous; give it '
                            'type="revolute" with a <limit lower upper> (the deploy chain '
                            'clamps every target to a position range)')
    return tuple(j.get('name') for j in root.findall('joint') if j.get('type') in MOVABLE)


def velocity_limits(urdf: str | Path, joint_names) -> np.ndarray:
    """<limit velocity> of each named joint [rad/s]; UrdfError when one has none."""
    path = Path(urdf)
    joints = {j.get('name'): j for j in parse_urdf(path).findall('joint')}
    out = []
    for name in joint_names:
        limit = joints[name].find('limit') if name in joints else None
        if limit is None:
            raise UrdfError(f'{path}: joint "{name}" has no <limit>')
        out.append(float_attr(limit, 'velocity', path))
    return np.array(out)


def add_torque_actuators(spec: mujoco.MjSpec, joint_names, urdf: str | Path) -> None:
    """One torque actuator per joint, named as the joint, ctrl range +- its URDF effort."""
    for name in joint_names:
        joint = spec.joint(name)
        if joint is None:
            raise UrdfError(f'{urdf}: no joint named "{name}"')
        effort = float(joint.actfrcrange[1])
        if effort <= 0.0:
            raise UrdfError(f'{urdf}: joint "{name}" needs <limit effort> > 0')
        spec.add_actuator(name=name, trntype=mujoco.mjtTrn.mjTRN_JOINT, target=name,
                          ctrllimited=True, ctrlrange=[-effort, effort])


def joint_chain_info(model: mujoco.MjModel, urdf: str | Path, joint_names,
                     actuator_names=None) -> JointChainInfo:
    """Resolve joint_names (and their actuators: actuator_names, default the joint names) to
    addresses and limits once."""
    joints = [model.joint(name) for name in joint_names]
    actuators = np.array([model.actuator(name).id
                          for name in (actuator_names or joint_names)])
    return JointChainInfo(
        joint_names=tuple(joint_names),
        qpos_adr=np.array([j.qposadr[0] for j in joints]),
        qvel_adr=np.array([j.dofadr[0] for j in joints]),
        actuator_ids=actuators,
        effort_limit_nm=model.actuator_ctrlrange[actuators, 1].copy(),
        velocity_limit_rad_s=velocity_limits(urdf, joint_names),
        pos_limits_rad=np.array([j.range for j in joints]),
    )


def apply_armature(spec: mujoco.MjSpec, urdf: str | Path, joint_names) -> None:
    """Joint armature = reflected rotor inertia of the URDF's <sim2real><motor> (when it
    declares one; every named joint must then be covered)."""
    if not has_motors(urdf):
        return
    for name, (_, _, armature) in read_motors(urdf, joint_names).items():
        spec.joint(name).armature = armature


def fixed_base_spec(urdf: str | Path, physics_dt_s: float, joint_names=None) -> mujoco.MjSpec:
    """Uncompiled fixed-base MjSpec with a torque actuator on each joint (default: every
    movable joint of the URDF, in its order), the armature of its motor model, its contact
    settings and its free objects (all from <sim2real>, where declared)."""
    names = joint_names or movable_joints(urdf)
    if not names:
        raise UrdfError(f'{urdf}: no movable joint ({", ".join(MOVABLE)})')
    spec = load_fixed_base(urdf, physics_dt_s)
    add_torque_actuators(spec, names, urdf)
    apply_armature(spec, urdf, names)
    apply_contact_settings(spec, urdf)
    for obj in read_objects(urdf):
        add_free_object(spec, obj, urdf)
    return spec


def fixed_base_model(urdf: str | Path, physics_dt_s: float, joint_names=None,
                     ) -> tuple[mujoco.MjModel, JointChainInfo]:
    """Compiled fixed-base model and its joint chain, both from one URDF."""
    names = tuple(joint_names or movable_joints(urdf))
    model = fixed_base_spec(urdf, physics_dt_s, names).compile()
    return model, joint_chain_info(model, urdf, names)
