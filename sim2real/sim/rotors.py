"""Quadrotor rotor model: allocation, motor lag, thrust and yaw torque (sim2real.urdf reads it).

Rotor speeds w are in rad/s. Thrust is kf * w^2 along the rotor axis (body +z) and the drag
reaction torque about body z is -direction * km * w^2, with direction = +1 for a rotor turning
counter-clockwise seen from above. The motor follows its command with a first-order lag of
time constant tau, integrated exactly over a physics step of a zero-order-held command.
"""

from __future__ import annotations

import numpy as np

from sim2real.urdf import RotorParams


def allocation_matrix(params: RotorParams) -> np.ndarray:
    """Map rotor thrusts (4,) [N] to [collective thrust N, torque x, y, z N*m] (4, 4)."""
    pos = np.asarray(params.positions_b)
    dirs = np.asarray(params.directions, dtype=np.float64)
    return np.stack([
        np.ones(len(dirs)),
        pos[:, 1],                      # tau_x = y * f
        -pos[:, 0],                     # tau_y = -x * f
        -dirs * params.yaw_torque_per_thrust_m,
    ])
