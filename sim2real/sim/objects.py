"""Free objects a robot handles (a cube in a hand), declared in its URDF's <sim2real>.

``<object name shape size_m mass_kg friction link pos_m/>``: shape ``box`` (size_m: full
edge lengths [m], x y z) or ``sphere`` (size_m: diameter [m]); mass [kg]; sliding, torsional
and rolling friction; spawned at pos_m [m] in the frame of ``link`` at the robot's zero pose
(a fixed-base robot's links do not move at zero angles, so this is a world position). Each
object gets a free joint named as the object, after the robot's joints in qpos.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np

from sim2real.urdf import float_attr, float_list, parse_urdf, sim2real_element, UrdfError

SHAPES = {'box': (mujoco.mjtGeom.mjGEOM_BOX, 3), 'sphere': (mujoco.mjtGeom.mjGEOM_SPHERE, 1)}


@dataclass(frozen=True)
class ObjectCfg:
    """One free object: shape, size, mass, friction and spawn position."""

    name: str
    """Body, free joint and geom name."""
    shape: str
    """'box' or 'sphere'."""
    size_m: tuple[float, ...]
    """Full edge lengths (box: x, y, z) or the diameter (sphere) [m]."""
    mass_kg: float
    """Mass [kg], uniform density."""
    friction: tuple[float, float, float]
    """Sliding, torsional, rolling friction."""
    link: str
    """The robot link pos_m is given in."""
    pos_m: tuple[float, float, float]
    """Spawn position in link's frame at the robot's zero pose [m]."""


def read_objects(urdf: str | Path) -> tuple[ObjectCfg, ...]:
    """The URDF's <sim2real><object/> elements, in file order."""
    path = Path(urdf)
    ext = sim2real_element(parse_urdf(path))
    out = []
    for obj in ext.findall('object') if ext is not None else ():
        name, shape, link = obj.get('name'), obj.get('shape'), obj.get('link')
        if not name or shape not in SHAPES or not link:
            raise UrdfError(f'{path}: <object> needs name, link and shape in {sorted(SHAPES)}; '
                            f'got name={name!r} shape={shape!r} link={link!r}')
        size = float_list(obj.get('size_m', ''), SHAPES[shape][1], f'{name} size_m', path)
        mass = float_attr(obj, 'mass_kg', path)
        if min(size) <= 0.0 or mass <= 0.0:
            raise UrdfError(f'{path}: <object name="{name}"> needs size_m and mass_kg > 0')
        friction = float_list(obj.get('friction', '1 0.005 0.0001'), 3, f'{name} friction', path)
        pos = float_list(obj.get('pos_m', ''), 3, f'{name} pos_m', path)
        out.append(ObjectCfg(name=name, shape=shape, size_m=tuple(size), mass_kg=mass,
                             friction=tuple(friction), link=link, pos_m=tuple(pos)))
    return tuple(out)


def add_free_object(spec: mujoco.MjSpec, cfg: ObjectCfg, urdf: str | Path = '') -> None:
    """A body with a free joint and one geom for cfg, placed from cfg.link's frame; call it
    after the robot's bodies are in spec (its qpos comes after theirs). urdf: the file that
    declared it, for the error message."""
    model = spec.copy().compile()   # the link's pose at zero angles
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    try:
        link = model.body(cfg.link)
    except KeyError as exc:
        raise UrdfError(f'{urdf}: <object name="{cfg.name}"> link "{cfg.link}" is not a link '
                        'of the robot') from exc
    pos_w = data.xpos[link.id] + data.xmat[link.id].reshape(3, 3) @ np.array(cfg.pos_m)
    body = spec.worldbody.add_body(name=cfg.name, pos=pos_w.tolist())
    body.simple = False   # its centre of mass may be randomized off the geometric centre
    body.add_freejoint(name=cfg.name)
    geom_type, _ = SHAPES[cfg.shape]
    half = [s / 2 for s in cfg.size_m]
    body.add_geom(name=cfg.name, type=geom_type, size=half + [0.0] * (3 - len(half)),
                  mass=cfg.mass_kg, friction=list(cfg.friction), rgba=[0.85, 0.35, 0.2, 1])
