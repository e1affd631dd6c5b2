"""Observation math shared by the training env (torch) and the deploy runtime (numpy).

Written against the Python array API (``array-api-compat``), so one function serves both
sides and the deploy runtime never imports torch. Quaternions are (w, x, y, z), MuJoCo's
convention, and rotate body-frame vectors into the world frame.
"""

from array_api_compat import array_namespace


def quat_to_rotmat(quat_wxyz):
    """Rotation matrix R_wb (..., 3, 3) of unit quaternions (..., 4) [w, x, y, z]."""
    xp = array_namespace(quat_wxyz)
    w, x, y, z = (quat_wxyz[..., i] for i in range(4))
    rows = [
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ]
    return xp.stack([xp.stack(r, axis=-1) for r in rows], axis=-2)


def rotate_world_to_body(rotmat_wb, vec_w):
    """Express world-frame vectors (..., 3) in the body frame: R_wb^T v."""
    xp = array_namespace(rotmat_wb, vec_w)
    return xp.sum(rotmat_wb * vec_w[..., :, None], axis=-2)


def rotate_body_to_world(rotmat_wb, vec_b):
    """Express body-frame vectors (..., 3) in the world frame: R_wb v."""
    xp = array_namespace(rotmat_wb, vec_b)
    return xp.sum(rotmat_wb * vec_b[..., None, :], axis=-1)


def projected_gravity(rotmat_wb):
    """Unit gravity direction in the body frame (..., 3); (0, 0, -1) when level."""
    return -rotmat_wb[..., 2, :]


def flatten_rotmat(rotmat_wb):
    """Row-major flattening (..., 9) of rotation matrices (..., 3, 3)."""
    xp = array_namespace(rotmat_wb)
    return xp.reshape(rotmat_wb, (*rotmat_wb.shape[:-2], 9))


def position_error_w(target_pos_w, pos_w):
    """Target minus current position [m; world frame]."""
    return target_pos_w - pos_w


def joint_pos_rel(joint_pos_rad, default_joint_pos_rad):
    """Joint positions relative to the standing pose [rad], (..., J)."""
    return joint_pos_rad - default_joint_pos_rad


def scale_clip(values, scale: float, clip: float | None):
    """Multiply by scale, then clip to [-clip, clip] when clip is given."""
    xp = array_namespace(values)
    scaled = values * scale
    if clip is None:
        return scaled
    return xp.clip(scaled, -clip, clip)
