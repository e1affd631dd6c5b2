"""The hand's fingertip guard: Pinocchio fingertips equal MuJoCo's on the same URDF, the grasp
is safe, pads within 3 mm of each other and a fingertip out of the workspace box latch."""

import mujoco
import numpy as np
import pytest
import torch

from sim2real.deploy.robots.hand.params import HandParams
from sim2real.deploy.robots.hand.runtime import FingertipGuardPart
from sim2real.mdp.contract import contract_from_env


@pytest.fixture(scope='module')
def guard_env():
    """A guard built from hand-rotate's contract and the default parameters, and the env."""
    from sim2real.mdp.env import RLEnv
    from sim2real.tasks import make_env_cfg
    cfg = make_env_cfg('hand-rotate', play=True)
    cfg.num_envs, cfg.num_threads = 1, 1
    env = RLEnv(cfg)
    return FingertipGuardPart(contract_from_env(env), HandParams(urdf_file='hand')), env


def _pose(env, **joints):
    """The grasp pose with some joints changed [rad], contract order."""
    q = env.scene.info.default_joint_pos_rad.copy()
    for name, value in joints.items():
        q[env.scene.info.joint_names.index(name)] = value
    return q


def _pads_apart(guard, env) -> dict:
    """Index and middle stretched and abducted towards each other in 201 steps: the guard's
    closest pad distance rounded to 1 mm -> a pose giving it."""
    apart = {}
    for abd in np.linspace(0.0, 0.2, 201):
        pose = _pose(env, if_mcp=0.3, if_pip=0.0, if_dip=0.0, mf_mcp=0.3, mf_pip=0.0,
                     mf_dip=0.0, if_abd=abd, mf_abd=-abd)
        guard.check(pose)
        apart[round(guard.closest_now_m, 3)] = pose
    return apart


def _index_hyperextended(env):
    """The index's MCP, PIP and DIP at their lower limits, the rest at the grasp."""
    info = env.scene.info
    low = info.pos_limits_rad[:, 0]
    return _pose(env, **{n: low[info.joint_names.index(n)] for n in ('if_mcp', 'if_pip',
                                                                     'if_dip')})


def test_guard_fingertips_are_mujocos(guard_env):
    """At 10 random configurations the guard's fingertips equal MuJoCo's tip bodies (1e-9 m)."""
    guard, env = guard_env
    model, info = env.scene.model, env.scene.info
    data = mujoco.MjData(model)
    rng = np.random.default_rng(1)
    for _ in range(10):
        q = rng.uniform(info.pos_limits_rad[:, 0], info.pos_limits_rad[:, 1])
        data.qpos[info.qpos_adr] = q
        mujoco.mj_kinematics(model, data)
        guard.check(q)
        np.testing.assert_allclose(guard.fingertips_m, data.xpos[info.fingertip_body_ids],
                                   atol=1e-9)


def test_the_grasp_is_safe_and_touching_pads_latch(guard_env):
    """The grasp pose passes (pads >= 4 cm apart); index and middle abducted towards each
    other until the centres of their 11 mm pads are 2.3 cm apart (2 mm between the surfaces,
    under the 3 mm the default 2.5 cm keeps) latch 'fingertips'; 2.7 cm apart passes."""
    guard, env = guard_env
    assert guard.check(_pose(env)) == ''
    assert guard.closest_now_m > 0.04
    apart = _pads_apart(guard, env)
    assert guard.check(apart[0.023]) == 'fingertips'
    assert guard.check(apart[0.027]) == ''
    assert guard.closest_since_enable_m < 0.025


def test_a_fingertip_out_of_the_workspace_latches(guard_env):
    """Index hyperextended (MCP, PIP, DIP at their lower limits) dips below the box's floor
    (z 0.2 m, 5 cm under the palm top): 'fingertips'."""
    guard, env = guard_env
    assert guard.check(_index_hyperextended(env)) == 'fingertips'
    assert guard.fingertips_m[0, 2] < 0.2


def test_training_ends_an_episode_where_the_guard_latches(guard_env):
    """The training's fingertip_guard termination (tasks/hand/mdp.py, on the scene's torch
    forward kinematics of the measured joints) and the deploy guard (Pinocchio on the same
    readings) agree: at the grasp, with pads 2.3 and 2.7 cm apart and with the index
    hyperextended out of the box, each read through encoder offsets of up to 0.03 rad, the
    scene's fingertips equal the guard's within 1e-6 m (float32) and the termination fires
    exactly where the guard latches (the grasp passes, the hyperextended index and the 2.3 cm
    pads latch). The offsets matter: on the 2.7 cm pose they move a pad by over 1 mm."""
    from sim2real.tasks.hand import mdp
    from sim2real.tasks.hand.cfg import FINGERTIP_GUARD
    guard, env = guard_env
    scene, info = env.scene, env.scene.info
    apart = _pads_apart(guard, env)
    bias = torch.as_tensor(np.random.default_rng(4).uniform(-0.03, 0.03, 16)).float()
    latched = []
    try:
        for q in (_pose(env), apart[0.023], apart[0.027], _index_hyperextended(env)):
            scene.backend.qpos[0, info.qpos_adr] = torch.as_tensor(q, dtype=torch.float64)
            scene.encoder_bias_rad[0] = bias
            scene.refresh()
            reading = q + bias.double().numpy()
            reason = guard.check(reading)
            np.testing.assert_allclose(scene.fingertip_pos_m[0].numpy(), guard.fingertips_m,
                                       atol=1e-6)
            assert bool(mdp.fingertip_guard(env, **FINGERTIP_GUARD)[0]) == (reason != '')
            latched.append(reason != '')
    finally:
        scene.encoder_bias_rad[0] = 0.0
        scene.refresh()
    assert latched[0] is False and latched[3] is True and True in latched[1:3]
    guard.check(apart[0.027])
    true_tips = guard.fingertips_m.copy()
    guard.check(apart[0.027] + bias.double().numpy())
    assert np.abs(guard.fingertips_m - true_tips).max() > 0.001


def test_the_training_guard_is_the_shipped_parameter_files():
    """tasks/hand/cfg.py's FINGERTIP_GUARD equals config/hand.yaml's guard: a policy trained
    to keep out of the guard's reach is deployed with that same guard."""
    import yaml
    from pathlib import Path
    from sim2real.tasks.hand.cfg import FINGERTIP_GUARD
    config = Path(__file__).resolve().parents[3] / 'config' / 'hand.yaml'
    params = yaml.safe_load(config.read_text())['policy_node']['ros__parameters']
    assert params['min_fingertip_distance_m'] == FINGERTIP_GUARD['min_distance_m']
    assert tuple(params['workspace_min_m']) == FINGERTIP_GUARD['workspace_min_m']
    assert tuple(params['workspace_max_m']) == FINGERTIP_GUARD['workspace_max_m']
