"""Build MuJoCo models from the robots' URDFs with mujoco.MjSpec (no second description)."""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np

from sim2real.urdf import parse_urdf, read_rotor_params, RotorParams, UrdfError

BASE_BODY = 'base_link'
BASE_JOINT = 'root'
"""The free joint of a floating-base robot's base body."""
IMU_SITE = 'imu'


def _import_urdf(urdf: Path) -> mujoco.MjSpec:
    """MuJoCo's URDF import, with a clear UrdfError for malformed XML or what MuJoCo refuses."""
    parse_urdf(urdf)  # clear error on malformed XML before MuJoCo's own parser
    try:
        return mujoco.MjSpec.from_file(str(urdf))
    except ValueError as exc:
        raise UrdfError(f'{urdf}: MuJoCo cannot import it: {exc}') from exc


def _add_world(spec: mujoco.MjSpec, physics_dt_s: float, target_body: str) -> None:
    """Timestep, a floor plane, a light and a chase camera aimed at target_body."""
    spec.option.timestep = physics_dt_s
    spec.worldbody.add_geom(
        name='floor', type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 0.05],
        friction=[1.0, 0.005, 0.0001])
    spec.worldbody.add_light(pos=[0, 0, 4], dir=[0, 0, -1])
    spec.worldbody.add_camera(
        name='chase', pos=[1.2, -1.2, 2.2], mode=mujoco.mjtCamLight.mjCAMLIGHT_TARGETBODYCOM,
        targetbody=target_body)


def load_floating_base(urdf: str | Path, physics_dt_s: float) -> mujoco.MjSpec:
    """URDF -> MjSpec with a free-floating base, a floor and the given timestep."""
    urdf = Path(urdf)
    spec = _import_urdf(urdf)
    base = spec.body(BASE_BODY)
    if base is None:
        raise UrdfError(f'{urdf}: no link named "{BASE_BODY}"')
    base.add_freejoint(name=BASE_JOINT)
    full = np.asarray(base.fullinertia)
    if np.all(np.isfinite(full)) and not np.any(full[3:]):
        # Diagonal URDF inertia: keep the body axes as the inertial axes. From fullinertia,
        # MuJoCo sorts the principal moments and rotates the inertial frame (here 90 deg about
        # y), so body_inertia would read (Izz, Iyy, Ixx) where consumers expect (x, y, z).
        base.inertia = full[:3]
        base.fullinertia = [np.nan, 0, 0, 0, 0, 0]
    _add_world(spec, physics_dt_s, BASE_BODY)
    base.add_site(name=IMU_SITE, pos=[0, 0, 0])
    spec.add_sensor(name='gyro', type=mujoco.mjtSensor.mjSENS_GYRO,
                    objtype=mujoco.mjtObj.mjOBJ_SITE, objname=IMU_SITE)
    spec.add_sensor(name='accelerometer', type=mujoco.mjtSensor.mjSENS_ACCELEROMETER,
                    objtype=mujoco.mjtObj.mjOBJ_SITE, objname=IMU_SITE)
    spec.add_sensor(name='base_pos', type=mujoco.mjtSensor.mjSENS_FRAMEPOS,
                    objtype=mujoco.mjtObj.mjOBJ_SITE, objname=IMU_SITE)
    spec.add_sensor(name='base_quat', type=mujoco.mjtSensor.mjSENS_FRAMEQUAT,
                    objtype=mujoco.mjtObj.mjOBJ_SITE, objname=IMU_SITE)
    return spec


def load_fixed_base(urdf: str | Path, physics_dt_s: float) -> mujoco.MjSpec:
    """URDF -> MjSpec with its root link welded to the world (an arm on a table, a hand on a
    wrist mount), a floor and the given timestep. No free joint: qpos holds the joints only."""
    urdf = Path(urdf)
    spec = _import_urdf(urdf)
    roots = [b for b in spec.worldbody.bodies]
    if len(roots) != 1:
        raise UrdfError(f'{urdf}: expected one root link, MuJoCo imported {len(roots)}')
    if any(j.type == mujoco.mjtJoint.mjJNT_FREE for j in spec.joints):
        raise UrdfError(f'{urdf}: a fixed-base robot has no free joint')
    spec.compiler.fusestatic = False   # keep links on fixed joints (end effectors) as bodies
    _add_world(spec, physics_dt_s, roots[0].name)
    return spec


def add_rotor_actuators(spec: mujoco.MjSpec, rotors: RotorParams) -> None:
    """One thrust actuator per rotor: ctrl is thrust [N]; gear adds the yaw reaction torque."""
    base = spec.body(BASE_BODY)
    for i, (pos, direction) in enumerate(zip(rotors.positions_b, rotors.directions)):
        site = f'rotor_{i}'
        base.add_site(name=site, pos=list(pos))
        # force along body z; torque about z = -direction * (km / kf) * thrust
        gear = [0, 0, 1, 0, 0, -direction * rotors.yaw_torque_per_thrust_m]
        spec.add_actuator(
            name=site, trntype=mujoco.mjtTrn.mjTRN_SITE, target=site, gear=gear,
            ctrllimited=True, ctrlrange=[0.0, rotors.max_thrust_n])


def quadrotor_model(urdf: str | Path, physics_dt_s: float) -> tuple[mujoco.MjModel, RotorParams]:
    """Compiled quadrotor model and its rotor parameters, both from one URDF."""
    rotors = read_rotor_params(urdf)
    # MuJoCo fuses links on fixed joints into base_link, so a rotor's mass would silently
    # move the centre of mass; the subtree-mass check below cannot see it
    root = parse_urdf(urdf)
    rotor_links = {r.get('link') for r in root.find('sim2real').findall('rotor')}
    for link in root.findall('link'):
        mass = link.find('inertial/mass')
        massive = mass is not None and float(mass.get('value', '0')) != 0.0
        if link.get('name') in rotor_links and massive:
            raise UrdfError(f'{urdf}: rotor link "{link.get("name")}" has mass; '
                            'rotors must be massless')
    spec = load_floating_base(urdf, physics_dt_s)
    add_rotor_actuators(spec, rotors)
    model = spec.compile()
    if not np.isclose(model.body(BASE_BODY).mass[0], model.body_subtreemass[1]):
        raise UrdfError(f'{urdf}: mass found outside {BASE_BODY}; rotors must be massless')
    return model, rotors
