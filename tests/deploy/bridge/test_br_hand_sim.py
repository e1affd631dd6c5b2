"""The hand's simulated twin: the training plant at the nominal robot, servo-ordered joint
states, and the fallback's open pose (config/hand.yaml) leaves the cube on the palm."""

from pathlib import Path

import mujoco
import numpy as np
import torch
import yaml

from sim2real.deploy.robots.hand.bridge_sim import HandSim, SERVO_ORDER

ROOT = Path(__file__).resolve().parents[3]


def test_the_twin_is_the_training_plant_at_the_nominal_robot(make_env):
    """hand-rotate with no randomization event nor lag and the HIL's HandSim, started in the env's
    reset state and given the env's motor targets of 40 ticks of random outputs (2 s), have
    the same joint angles and cube pose after every tick (to 1e-9), while the cube is pushed
    more than 1 cm: what the HIL measures is the trained plant, not a different hand."""
    def nominal(cfg):
        cfg.events = {}
        cfg.action.params['lag_substeps'] = (0, 0)   # the twin applies targets at the tick
    env = make_env('hand-rotate', num_envs=1, play=True, edit=nominal,
                   action='joint_position_rate_capped')
    env.reset(seed=0)
    qpos, qvel = env.scene.backend.qpos, env.scene.backend.qvel
    sim = HandSim(ROOT / 'urdf' / 'hand.urdf')
    sim.data.qpos[:], sim.data.qvel[:] = qpos[0].numpy(), qvel[0].numpy()
    mujoco.mj_forward(sim.model, sim.data)
    sim.driver.reset(sim.data.qpos[sim.info.qpos_adr].copy(), 0.0)
    cube = sim.info.object_qpos_adr
    start_m = sim.data.qpos[cube:cube + 3].copy()
    gen = torch.Generator().manual_seed(0)
    now_s, moved_m = 0.0, 0.0
    for _ in range(40):
        env.step(torch.rand(1, 16, generator=gen) - 0.5)
        sim.set_targets(env.scene.actuator.target_rad[0].numpy(), now_s)
        for _ in range(10):
            sim.step(now_s)
            now_s += sim.dt_s
        np.testing.assert_allclose(sim.data.qpos, qpos[0].numpy(), rtol=0, atol=1e-9)
        moved_m = max(moved_m, float(np.linalg.norm(sim.data.qpos[cube:cube + 3] - start_m)))
    assert moved_m > 0.01


def test_joint_states_come_in_servo_order():
    """16 names in LEAP's servo-ID order (index abduction first), not the URDF's, with each
    joint's own angle."""
    sim = HandSim(ROOT / 'urdf' / 'hand.urdf')
    names = sim.info.joint_names
    assert SERVO_ORDER[:2] == ('if_abd', 'if_mcp') and names[:2] == ('if_mcp', 'if_abd')
    assert sorted(SERVO_ORDER) == sorted(names)
    pos = sim.joint_states()['pos_rad']
    q = sim.data.qpos[sim.info.qpos_adr]
    for i, name in enumerate(SERVO_ORDER):
        assert pos[i] == q[names.index(name)]


def test_relaxing_to_the_open_pose_keeps_the_cube_on_the_palm():
    """From the grasp, targets moving to config/hand.yaml's relax_pose_rad over 1.5 s (no
    joint faster than its relax_max_rate_rad_s, 1 rad/s), then held to 3 s: the cube moves
    less than 5 mm."""
    node = yaml.safe_load((ROOT / 'config' / 'hand.yaml').read_text())[
        'policy_node']['ros__parameters']
    relax = dict(zip(node['joint_names'], node['relax_pose_rad']))
    assert max(node['relax_max_rate_rad_s']) <= 1.0
    sim = HandSim(ROOT / 'urdf' / 'hand.urdf')
    goal = np.array([relax[n] for n in sim.info.joint_names])
    start_q, start_cube = sim.info.default_joint_pos_rad.copy(), sim.ground_truth()['pos_w']
    assert np.abs(goal - start_q).max() <= 1.5
    now_s = 0.0
    for k in range(round(3.0 / sim.dt_s)):
        fraction = min(1.0, k * sim.dt_s / 1.5)
        assert sim.set_targets(start_q + fraction * (goal - start_q), now_s)
        sim.step(now_s)
        now_s += sim.dt_s
    assert np.linalg.norm(sim.ground_truth()['pos_w'] - start_cube) < 0.005
