"""The hand's tracked cube on the deploy side: the node's inputs build the policy vector the
env built (observation parity through the ObjectTrackerPart), a stale tracker latches, and a
proprioceptive policy neither needs nor watches the tracker; the bridge's tracker frames
are late and noisy as asked."""

from pathlib import Path

import numpy as np
import pytest
import torch

from sim2real import terms
from sim2real.contract import ContractError
from sim2real.deploy.robots.hand.bridge_sim import HandSim
from sim2real.deploy.robots.hand.runtime import ObjectTrackerPart, RUNTIME
from sim2real.deploy.runtime.integrators import make_integrator
from sim2real.deploy.runtime.observations import ObservationBuilder
from sim2real.deploy.runtime.params import load_params, ParamError
from sim2real.deploy.runtime.sensors import Sample, SensorStore
from sim2real.mdp.contract import contract_from_env

ROOT = Path(__file__).resolve().parents[3]
CONFIG = ROOT / 'config' / 'hand.yaml'


def _no_obs_delay(refresh, latency):
    """Edit: the tracker pinned (refresh, latency ticks), no policy observation delay."""
    def edit(cfg):
        cfg.observations['policy'].delay_ticks = (0, 0)
        cfg.scene.params['tracker_refresh_ticks'] = (refresh, refresh)
        cfg.scene.params['tracker_latency_ticks'] = (latency, latency)
    return edit


def _profile(contract, **overrides):
    """The hand's joint chain with its parts, from config/hand.yaml (policy_node)."""
    params = load_params(CONFIG, overrides={'policy_file': 'x.onnx', **overrides})
    return RUNTIME.make_profile(contract, params, make_integrator(contract, 1))


def test_node_inputs_build_the_envs_policy_vectors(make_env):
    """2 envs x 20 ticks (tracker every 2nd tick, 1 late): the deploy builder fed each env's
    joint readings, integrator targets, the tracker's held pose and the goal, as stream
    samples through the ObjectTrackerPart, gives the env's 111 inputs within 1e-5, goals
    reached and replaced included (goals set to the cube's orientation every 5th tick)."""
    env = make_env('hand-reorient', num_envs=2, play=True, edit=_no_obs_delay(2, 1))
    env.reset(seed=1)
    contract = contract_from_env(env)
    profile = _profile(contract)
    part = profile.part(ObjectTrackerPart)
    assert part.active and part.watchdogs[0].timeout_s == 0.3
    limits = np.asarray(contract.robot_params['joint_pos_limits_rad'])
    builders = [ObservationBuilder(contract) for _ in range(2)]
    stores = [SensorStore(profile.shapes) for _ in range(2)]
    goal = env.command('goal')
    gen = torch.Generator().manual_seed(3)
    obs = env.observations.compute()['policy']
    for tick in range(20):
        if tick > 0:
            if tick % 5 == 0:
                goal.quat_w[:] = env.scene.cube_quat_w
            obs = env.step(torch.rand(2, 16, generator=gen) * 2 - 1)[0]['policy']
        for i in range(2):
            tracker = env.scene.tracker
            stores[i].put('object_pose', Sample(
                {'pos_m': tracker.pos_m[i].double().numpy(),
                 'quat_wxyz': tracker.quat_wxyz[i].double().numpy()}, tick + 1.0, tick))
            stores[i].put('goal', Sample({'quat_wxyz': goal.quat_w[i].double().numpy()},
                                         tick + 1.0, tick))
            inputs = {'joint_pos_rad': env.scene.joint_pos_rad[i].double().numpy(),
                      'joint_target_rad': env.action_term.target_rad[i].numpy(),
                      'joint_pos_limits_rad': limits,
                      **part.observation_inputs(stores[i], float(tick))}
            np.testing.assert_allclose(builders[i].build(inputs, advance=True)[0],
                                       obs[i].numpy(), atol=1e-5, rtol=0)
    assert int(goal.successes.sum()) >= 2


def test_a_stale_tracker_latches_and_the_goal_starts_at_identity(make_env):
    """A reorientation profile: no goal yet reads the identity; a tracked pose 0.31 s old
    (timeout 0.3 s) latches 'stale:object_pose', 0.29 s old does not."""
    env = make_env('hand-reorient', num_envs=1, play=True)
    profile = _profile(contract_from_env(env))
    store = SensorStore(profile.shapes)
    q = env.scene.joint_pos_rad[0].double().numpy()
    store.put('joint_state', Sample({'pos_rad': q, 'vel_rad_s': np.zeros(16)}, 1.0, 10.0))
    store.put('object_pose', Sample({'pos_m': np.zeros(3),
                                     'quat_wxyz': np.array([1.0, 0, 0, 0])}, 1.0, 10.0))
    inputs = profile.observation_inputs(store, 10.0)
    np.testing.assert_array_equal(inputs['goal_quat_wxyz'], [1.0, 0.0, 0.0, 0.0])
    # fresh joint states (timeout 0.1 s), the tracked pose ageing
    store.put('joint_state', Sample({'pos_rad': q, 'vel_rad_s': np.zeros(16)}, 2.0, 10.25))
    assert profile.latch_reason(store, 10.29) == ''
    assert profile.latch_reason(store, 10.31) == 'stale:object_pose'


def test_a_proprioceptive_policy_ignores_the_tracker(make_env):
    """hand-rotate's contract: the tracker part is inactive and no tracker timeout applies
    (a node without any cube_pose arms and runs)."""
    env = make_env('hand-rotate', num_envs=1, play=True)
    profile = _profile(contract_from_env(env))
    part = profile.part(ObjectTrackerPart)
    assert not part.active and part.watchdogs[0].timeout_s == 0.0
    store = SensorStore(profile.shapes)
    q = env.scene.joint_pos_rad[0].double().numpy()
    store.put('joint_state', Sample({'pos_rad': q, 'vel_rad_s': np.zeros(16)}, 1.0, 10.0))
    assert profile.latch_reason(store, 10.05) == ''


def test_tracker_contract_and_parameter_errors_are_named(make_env):
    """A reorientation contract without object_rest_pos_m is refused naming the field; a
    tracker timeout of 0 is refused naming the parameter."""
    env = make_env('hand-reorient', num_envs=1, play=True)
    contract = contract_from_env(env)
    with pytest.raises(ParamError, match='object_pose_timeout_s'):
        _profile(contract, object_pose_timeout_s=0.0)
    del contract.robot_params['object_rest_pos_m']
    with pytest.raises(ContractError, match='robot_params.object_rest_pos_m'):
        _profile(contract)


def test_bridge_tracker_frames_are_late_and_noisy():
    """The bridge's cube tracker, 2 frames late, 5 mm and 0.03 rad of noise, the cube moved
    5 mm in x before each frame: frame k reports frame k-2's true position (mean error
    within 1 mm over 400 frames; one frame off would be 5 mm) with a spread of 5 mm per
    axis (within 15 %), and orientation errors of mean 0.03 x a 3-D normal's norm (within
    15 %); without noise and latency the frame is the cube's exact pose."""
    sim = HandSim(ROOT / 'urdf' / 'hand.urdf', tracker_latency_frames=2,
                  tracker_pos_noise_m=0.005, tracker_rot_noise_rad=0.03, seed=1)
    cube = sim.info.object_qpos_adr
    truths, frames = [], []
    for _ in range(400):
        sim.data.qpos[cube] += 0.005
        truths.append(sim.ground_truth())
        frames.append(sim.cube_pose())
    error = (np.array([f['pos_m'] for f in frames[2:]])
             - np.array([t['pos_w'] for t in truths[:-2]]))
    assert np.abs(error.mean(axis=0)).max() < 0.001
    assert np.std(error, axis=0) == pytest.approx([0.005] * 3, rel=0.15)
    angles = terms.quat_angle_rad(np.array([f['quat_wxyz'] for f in frames[2:]]),
                                  np.array([t['quat_wxyz'] for t in truths[:-2]]))
    assert np.mean(angles) == pytest.approx(0.03 * np.sqrt(8 / np.pi), rel=0.15)
    exact = HandSim(ROOT / 'urdf' / 'hand.urdf')
    for _ in range(3):
        exact.data.qpos[cube] += 0.01
        frame, truth = exact.cube_pose(), exact.ground_truth()
        np.testing.assert_array_equal(frame['pos_m'], truth['pos_w'])
        np.testing.assert_array_equal(frame['quat_wxyz'], truth['quat_wxyz'])


def test_a_torque_constant_of_zero_is_refused(make_env):
    """The hand's parameter check refuses torque_constant_nm_per_a 0 naming it, and passes
    config/hand.yaml's 0.52."""
    contract = contract_from_env(make_env('hand-rotate', num_envs=1, play=True))
    params = load_params(CONFIG, overrides={'policy_file': 'x.onnx'})
    RUNTIME.check_params(contract, params)
    params.torque_constant_nm_per_a = 0.0
    with pytest.raises(ParamError, match='torque_constant_nm_per_a'):
        RUNTIME.check_params(contract, params)


def test_a_slew_cap_below_the_integrators_own_rate_is_said(make_env, caplog):
    """hand-rotate moves a target by up to 1/24 rad per 20 Hz tick (0.833 rad/s):
    config/hand.yaml's 8.48 rad/s cap passes silently; 0.8 on one joint, or the same file
    with a 1/2 rad step (10 rad/s), is logged naming each slowed joint. The rate-capped
    interface (8.48 rad/s trained) passes the file silently; a 4 rad/s cap slows all 16; a
    per-joint trained cap (contract order) is matched to the file's joints by name."""
    from sim2real.deploy.runtime.joints import slew_cap_warnings
    contract = contract_from_env(make_env('hand-rotate', num_envs=1, play=True))
    params = load_params(CONFIG, overrides={'policy_file': 'x.onnx'})
    assert slew_cap_warnings(contract, params) == []
    caps = list(params.max_rate_rad_s)
    caps[5] = 0.8
    params.max_rate_rad_s = caps
    with caplog.at_level('WARNING'):
        RUNTIME.check_params(contract, params)
    assert [r.getMessage()[:60] for r in caplog.records] == [
        'parameter "max_rate_rad_s[5]": 0.8 rad/s is below the rate o']
    assert '0.833333 rad/s' in caplog.records[0].getMessage()
    contract.action.params['scale'] = 0.5
    params = load_params(CONFIG, overrides={'policy_file': 'x.onnx'})
    assert len(slew_cap_warnings(contract, params)) == 16
    capped = contract_from_env(make_env('hand-rotate', num_envs=1, play=True,
                                        action='joint_position_rate_capped'))
    assert slew_cap_warnings(capped, params) == []
    params.max_rate_rad_s = [4.0] * 16
    slowed = slew_cap_warnings(capped, params)
    assert len(slowed) == 16 and 'its trained rate cap' in slowed[0]
    rates = [8.0] * 16   # a per-joint trained cap, contract order: one joint above the file's
    rates[capped.joint_names.index('th_axl')] = 9.0
    capped.action.params['max_rate_rad_s'] = rates
    params.max_rate_rad_s = [8.48] * 16
    slowed = slew_cap_warnings(capped, params)
    assert len(slowed) == 1 and '"th_axl", 9 rad/s' in slowed[0]
    assert slowed[0].startswith(f'parameter "max_rate_rad_s[{params.joint_names.index("th_axl")}]')
