"""The hand twin's variant knobs: the in-hand tasks' randomization boxes (tasks/hand/cfg.py,
reorient_cfg.py) by name, set as the training's events set them (the cube's mass with its
inertia, cube and fingertip friction absolute, motor strength as the torque limit)."""

import numpy as np

from sim2real.deploy.bridge.variant import (
    COMMAND_DELAY, delay, joint_strength, Knob, scale, SENSOR_DELAY, unmodelled, write_field)

TRACKER = ("the tracker's refresh and latency are the bridge's own parameters "
           '(cube_pose_rate_hz, tracker_latency_frames)')


def _cube(sim) -> int:
    """The cube's body."""
    return sim.info.object_body_id


def _cube_geom(sim) -> np.ndarray:
    """The cube's collision geom."""
    return np.array([sim.info.object_geom_id])


def _fingertips(sim) -> np.ndarray:
    """The fingertip pads."""
    return np.asarray(sim.info.fingertip_geom_ids)


def _cube_mass(sim, value: float) -> None:
    """The cube's mass and inertia x value (a uniform cube of the same size)."""
    body = _cube(sim)
    sim.model.body_mass[body] *= value
    sim.model.body_inertia[body] *= value


def knobs() -> dict[str, Knob]:
    """Box name -> how the twin takes it."""
    return {
        'cube_mass': scale(set=_cube_mass),
        'cube_size': unmodelled('a different cube is a different model (rebuild the hand '
                                'with another object); not changed on a running twin'),
        'cube_friction': scale(set=write_field('geom_friction', _cube_geom, 0)),
        'fingertip_friction': scale(set=write_field('geom_friction', _fingertips, 0)),
        'torque_limit': scale(set=joint_strength),
        'action_delay_ticks': delay(COMMAND_DELAY, 'tick'),
        'action_lag_substeps': delay(COMMAND_DELAY, 'substep'),
        'observation_delay_ticks': delay(SENSOR_DELAY, 'tick'),
        'joint_sensor_age_substeps': unmodelled(
            "the bridge's sensor latency holds back every stream alike "
            '(sensor_latency_s); a joint-state-only age is not modelled'),
        'tracker_refresh_ticks': unmodelled(TRACKER),
        'tracker_latency_ticks': unmodelled(TRACKER),
    }
