"""The recorded Isaac Lab run (fixtures/isaaclab_go2class_flat) and edited copies of it."""

import shutil
from pathlib import Path

FIXTURE = Path(__file__).resolve().parent / 'fixtures' / 'isaaclab_go2class_flat'
"""A real Isaac Lab 3.0 run of urdf/quadruped.urdf (fixtures/make_isaaclab_run.py)."""


def edited_run(tmp_path: Path, old: str, new: str, file: str = 'env.yaml') -> Path:
    """A copy of the fixture under tmp_path with one text edit in params/<file>."""
    run = tmp_path / 'run'
    shutil.copytree(FIXTURE, run)
    path = run / 'params' / file
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))
    return run


def feed_standing(runtime, ticks: int = 5, dt_s: float = 0.02) -> float:
    """Joint states at the contract's default pose, at rest, and a level, still IMU, once per
    tick for ticks ticks of dt_s; the time of the last [s]."""
    import numpy as np
    from sim2real.deploy.runtime import Sample
    q = np.asarray(runtime.contract.default_joint_pos_rad)
    t = 0.0
    for k in range(ticks):
        t = dt_s * k
        runtime.put('joint_state', Sample({'pos_rad': q, 'vel_rad_s': np.zeros(q.size)}, t, t))
        runtime.put('imu', Sample({'quat_wxyz': np.array([1.0, 0, 0, 0]),
                                   'ang_vel_b': np.zeros(3)}, t, t))
    return t
