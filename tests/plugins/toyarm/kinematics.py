"""The arm's description beyond its URDF: rest pose, link lengths and forward kinematics on
the array API (the same function in training with torch, in the runtime and the HIL
bridge with numpy)."""

from __future__ import annotations

from pathlib import Path

from array_api_compat import array_namespace

from sim2real.urdf import parse_urdf

DEFAULT_POSE_RAD = (0.6, 1.2)
"""Rest pose of shoulder and elbow [rad]: elbow bent, tip in front of the shoulder."""


def link_lengths_m(urdf: str | Path) -> tuple[float, float]:
    """Shoulder-elbow and elbow-tip distances [m]: x of the elbow's and the tip's joint origin."""
    joints = {j.get('name'): j for j in parse_urdf(Path(urdf)).findall('joint')}
    return tuple(float(joints[n].find('origin').get('xyz').split()[0])
                 for n in ('elbow', 'tip_joint'))


def tip_pos_b(joint_pos_rad, upper_m: float, fore_m: float):
    """Tip position [m; base frame xy, from the shoulder axis] of joint angles (..., 2)."""
    xp = array_namespace(joint_pos_rad)
    shoulder, elbow = joint_pos_rad[..., 0], joint_pos_rad[..., 0] + joint_pos_rad[..., 1]
    return xp.stack([upper_m * xp.cos(shoulder) + fore_m * xp.cos(elbow),
                     upper_m * xp.sin(shoulder) + fore_m * xp.sin(elbow)], axis=-1)


def tip_vel_b(joint_pos_rad, joint_vel_rad_s, upper_m: float, fore_m: float):
    """Tip velocity [m/s; base frame xy] of joint angles and rates (..., 2): d/dt tip_pos_b."""
    xp = array_namespace(joint_pos_rad)
    shoulder = joint_pos_rad[..., 0]
    elbow = joint_pos_rad[..., 0] + joint_pos_rad[..., 1]
    rate_s = joint_vel_rad_s[..., 0]
    rate_e = joint_vel_rad_s[..., 0] + joint_vel_rad_s[..., 1]
    return xp.stack([-upper_m * xp.sin(shoulder) * rate_s - fore_m * xp.sin(elbow) * rate_e,
                     upper_m * xp.cos(shoulder) * rate_s + fore_m * xp.cos(elbow) * rate_e],
                    axis=-1)
