"""Contact settings a URDF declares in <sim2real>, applied to a MuJoCo spec of that robot.

``<exclude body1="A" body2="B"/>`` skips contacts between two links (MuJoCo already skips
parent-child pairs). ``<contact geoms="NAMES" friction="slide torsion roll" condim=""
priority=""/>`` sets the collision geoms named (URDF <collision name>; ``*`` = every geom of
the robot); later elements override earlier ones, so a hand can set its skin first and its
fingertips after.
"""

from __future__ import annotations

from pathlib import Path

import mujoco

from sim2real.urdf import float_list, parse_urdf, sim2real_element, UrdfError


def apply_contact_settings(spec: mujoco.MjSpec, urdf: str | Path) -> None:
    """Add the URDF's <exclude> pairs and apply its <contact> geom settings to spec."""
    path = Path(urdf)
    ext = sim2real_element(parse_urdf(path))
    if ext is None:
        return
    for pair in ext.findall('exclude'):
        bodies = [pair.get('body1'), pair.get('body2')]
        for name in bodies:
            if name is None or spec.body(name) is None:
                raise UrdfError(f'{path}: <exclude body1 body2> names no link "{name}"')
        spec.add_exclude(bodyname1=bodies[0], bodyname2=bodies[1])
    robot_geoms = [g for g in spec.geoms if g.parent.name != 'world']
    for contact in ext.findall('contact'):
        names = contact.get('geoms', '').split()
        if not names:
            raise UrdfError(f'{path}: <contact> lacks attribute "geoms"')
        if names == ['*']:
            geoms = robot_geoms
        else:
            by_name = {g.name: g for g in robot_geoms}
            unknown = [n for n in names if n not in by_name]
            if unknown:
                raise UrdfError(f'{path}: <contact geoms> names no collision geom {unknown}')
            geoms = [by_name[n] for n in names]
        for geom in geoms:
            if contact.get('friction') is not None:
                geom.friction = float_list(contact.get('friction'), 3, 'friction', path)
            if contact.get('condim') is not None:
                geom.condim = int(float_list(contact.get('condim'), 1, 'condim', path)[0])
            if contact.get('priority') is not None:
                geom.priority = int(float_list(contact.get('priority'), 1, 'priority', path)[0])
