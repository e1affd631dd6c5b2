"""Batched forward kinematics of URDF link frames in torch: where the deploy side runs
Pinocchio on one robot's measured joints, a training term runs this on every env's.

Each frame's chain of joints (fixed and revolute) from the URDF's root link is read once;
``positions(q)`` composes the joints' origins and rotations for a batch of joint vectors.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from sim2real.urdf import float_list, parse_urdf, UrdfError


def _origin(joint, path: Path) -> tuple[np.ndarray, np.ndarray]:
    """(R, p) of a joint's <origin> (rpy: fixed-axis roll, pitch, yaw), float64."""
    origin = joint.find('origin')
    xyz = float_list(origin.get('xyz', '0 0 0'), 3, 'origin xyz', path) if origin is not None \
        else [0.0, 0.0, 0.0]
    roll, pitch, yaw = (float_list(origin.get('rpy', '0 0 0'), 3, 'origin rpy', path)
                        if origin is not None else [0.0, 0.0, 0.0])
    cr, sr, cp, sp, cy, sy = (np.cos(roll), np.sin(roll), np.cos(pitch), np.sin(pitch),
                              np.cos(yaw), np.sin(yaw))
    rot = np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                    [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                    [-sp, cp * sr, cp * cr]])
    return rot, np.array(xyz)


def _skew(axis: np.ndarray) -> np.ndarray:
    """The cross-product matrix of a unit axis."""
    x, y, z = axis
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


class FrameKinematics:
    """Positions of URDF link frames in the root link's frame for batches of joint angles."""

    def __init__(self, urdf: str | Path, joint_names, frames):
        """Chains of the links frames (names) from the URDF's root; joint_names: the order
        of the angles positions() takes. UrdfError for a frame that is not a link, a
        prismatic or floating joint on a chain, or a chain joint missing from joint_names."""
        path = Path(urdf)
        root = parse_urdf(path)
        by_child = {j.find('child').get('link'): j for j in root.findall('joint')}
        links = {link.get('name') for link in root.findall('link')}
        names = list(joint_names)
        self.frames = tuple(frames)
        self._chains = []
        roots = set()
        for frame in self.frames:
            if frame not in links:
                raise UrdfError(f'{path}: no link "{frame}"')
            chain, link = [], frame
            while link in by_child:
                joint = by_child[link]
                chain.append(self._step(joint, names, path))
                link = joint.find('parent').get('link')
            roots.add(link)
            self._chains.append(chain[::-1])
        if len(roots) > 1:
            raise UrdfError(f'{path}: the frames {self.frames} hang from several roots {roots}')
        self.root = roots.pop() if roots else ''
        """The root link: the frame positions() is expressed in."""

    @staticmethod
    def _step(joint, names: list[str], path: Path) -> tuple:
        """(origin R, origin p, skew(axis) or None, joint index or -1) of one chain joint."""
        kind, name = joint.get('type'), joint.get('name')
        rot, pos = _origin(joint, path)
        if kind == 'fixed':
            return torch.from_numpy(rot), torch.from_numpy(pos), None, -1
        if kind not in ('revolute', 'continuous'):
            raise UrdfError(f'{path}: joint "{name}" is {kind}; frame kinematics takes fixed '
                            'and revolute joints')
        if name not in names:
            raise UrdfError(f'{path}: joint "{name}" is not among the joints given')
        axis_elem = joint.find('axis')
        axis = np.array(float_list(axis_elem.get('xyz'), 3, 'axis xyz', path)
                        if axis_elem is not None else [1.0, 0.0, 0.0])
        axis = axis / np.linalg.norm(axis)
        return (torch.from_numpy(rot), torch.from_numpy(pos), torch.from_numpy(_skew(axis)),
                names.index(name))

    def positions(self, joint_pos_rad: torch.Tensor) -> torch.Tensor:
        """Frame positions [m; root link frame], (N, frames, 3), of angles (N, joints) [rad]
        in joint_names order (computed in float64, returned in the input's dtype)."""
        q = joint_pos_rad.double()
        n = q.shape[0]
        eye = torch.eye(3, dtype=torch.float64, device=q.device)
        out = []
        for chain in self._chains:
            rot = eye.expand(n, 3, 3)
            pos = torch.zeros(n, 3, dtype=torch.float64, device=q.device)
            for origin_rot, origin_pos, skew, index in chain:
                pos = pos + rot @ origin_pos.to(q.device)
                rot = rot @ origin_rot.to(q.device)
                if skew is not None:   # Rodrigues: I + sin(q) K + (1 - cos(q)) K^2
                    k = skew.to(q.device)
                    angle = q[:, index, None, None]
                    rot = rot @ (eye + torch.sin(angle) * k + (1.0 - torch.cos(angle)) * (k @ k))
            out.append(pos)
        return torch.stack(out, dim=1).to(joint_pos_rad.dtype)
