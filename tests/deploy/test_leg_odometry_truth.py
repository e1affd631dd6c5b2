"""Leg odometry against ground truth: the shipped quadruped policy walks the HIL's simulated
Go2 (QuadrupedSim: the training plant behind its motor driver) through the deploy Runtime in
one process, time injected, no ROS; the estimate is compared with MuJoCo's base velocity.

The estimator that guessed stance from foot clearance read -0.006 m/s at a true 0.46 m/s
here (the policy lifts its swing feet about 5 mm, so every foot counted as in stance).
"""

from pathlib import Path

import mujoco
import numpy as np
import pytest

from sim2real.assets import urdf_path
from sim2real.deploy.robots.quadruped.bridge_sim import PUBLISHED_ORDER, QuadrupedSim
from sim2real.deploy.runtime import Runtime, Sample
from sim2real.deploy.runtime.parts import LegOdometryPart

ROOT = Path(__file__).resolve().parents[2]
TICK_S, PHYSICS_HZ = 0.02, 500.0
STAND_UP_S = 0.5
"""A shorter stand-up than the parameter file's 2 s keeps the test short."""


def foot_forces_n(sim) -> np.ndarray:
    """Normal contact force on each foot [N] (FL, FR, RL, RR: the contract's foot order)."""
    model, data = sim.model, sim.data
    feet = [model.geom(f'{leg}_foot_collision').id for leg in ('FL', 'FR', 'RL', 'RR')]
    force, wrench = np.zeros(4), np.zeros(6)
    for i in range(data.ncon):
        contact = data.contact[i]
        for k, geom in enumerate(feet):
            if geom in (contact.geom1, contact.geom2):
                mujoco.mj_contactForce(model, data, i, wrench)
                force[k] += wrench[0]
    return force


def walk(command, duration_s, push=None, foot_force=False):
    """Stand up and walk at command (vx, vy, yaw rate) for duration_s; push(t, sim) may act
    on the simulation before each tick; foot_force: the node also reads the feet's contact
    forces [N] (contact above 20 N). Per tick: (state, reason, true v_b, estimate v_b, stance
    weights, the foot forces the tick read)."""
    overrides = {'soft_start_s': STAND_UP_S}
    if foot_force:
        overrides.update(foot_force_topic='foot_force', foot_contact_threshold=20.0)
    runtime = Runtime.from_files(ROOT / 'policies/quadruped_flat.onnx',
                                 ROOT / 'config/quadruped.yaml', overrides=overrides)
    sim = QuadrupedSim(urdf_path('quadruped'), PHYSICS_HZ, [25.0] * 12, [0.5] * 12, 1.0,
                       0.1, 0.0, 0)
    odometry = runtime.profile.part(LegOdometryPart).odometry
    steps, log = round(TICK_S * PHYSICS_HZ), []
    for tick in range(round(duration_s / TICK_S) + 1):
        now = tick * TICK_S
        if push is not None:
            push(now, sim)
        joints, imu, forces = sim.joint_states(), sim.imu(), foot_forces_n(sim)
        runtime.put('joint_state', Sample({'names': list(PUBLISHED_ORDER),
                                           'pos_rad': joints['pos_rad'],
                                           'vel_rad_s': joints['vel_rad_s']}, now, now))
        runtime.put('imu', Sample({'quat_wxyz': imu['quat_wxyz'],
                                   'ang_vel_b': imu['ang_vel_b']}, now, now))
        runtime.put('command', Sample({'velocity_command': np.asarray(command)}, now, now))
        if foot_force:
            runtime.put('foot_force', Sample({'force': forces}, now, now))
        if tick == 0:
            assert runtime.enable(now) == (True, '')
        result = runtime.step(now)
        log.append((result.state, result.reason, sim.ground_truth()['lin_vel_b'],
                    odometry.lin_vel_b.copy(), odometry.stance.copy(), forces))
        sim.set_targets(result.command[:12], now)
        sim.set_gains('kp', result.command[12:24])
        sim.set_gains('kd', result.command[24:])
        for k in range(steps):
            sim.step(now + k / PHYSICS_HZ)
    return log


@pytest.mark.parametrize('foot_force', [False, True], ids=['kinematics', 'foot_force'])
@pytest.mark.parametrize('command', [(0.5, 0.0, 0.0), (1.0, 0.0, 0.0), (-0.5, 0.0, 0.0),
                                     (0.0, 0.4, 0.0), (0.0, 0.0, 0.8), (0.0, 0.0, 0.0)])
def test_leg_odometry_tracks_the_true_base_velocity(command, foot_force):
    """Walking at commands across the trained ranges (|vx| <= 1, |vy| <= 0.5, |yaw| <= 1),
    from the legs' kinematics alone or with the feet's measured contact forces: after 1.5 s
    of walking, the planar estimate's mean absolute error over the next 1.5 s is at most
    0.1 m/s per axis (0.04-0.06 measured), and the robot moves as commanded."""
    log = walk(command, STAND_UP_S + 3.0, foot_force=foot_force)
    window = log[round((STAND_UP_S + 1.5) / TICK_S):]
    assert all(tick[0] == 'active' for tick in window)
    truth = np.array([tick[2] for tick in window])[:, :2]
    estimate = np.array([tick[3] for tick in window])[:, :2]
    error = np.abs(estimate - truth).mean(axis=0)
    assert np.all(error <= 0.1), (error, truth.mean(axis=0), estimate.mean(axis=0))
    assert np.allclose(truth.mean(axis=0), command[:2], atol=0.35)


def test_feet_out_of_measured_contact_get_no_stance_weight():
    """With foot forces, a foot reading 20 N or less carries no stance weight; walking at
    0.5 m/s, some foot reads so in most ticks (the swing feet), and without the forces
    those feet do get weight."""
    walking = round((STAND_UP_S + 0.5) / TICK_S)
    log = walk((0.5, 0.0, 0.0), STAND_UP_S + 2.0, foot_force=True)[walking:]
    off = np.array([tick[5] <= 20.0 for tick in log])
    stance = np.array([tick[4] for tick in log])
    assert off.any(axis=1).mean() > 0.5
    assert np.all(stance[off] == 0.0)
    plain = walk((0.5, 0.0, 0.0), STAND_UP_S + 2.0)[walking:]
    assert np.array([tick[4] for tick in plain])[off].max() > 0.01
