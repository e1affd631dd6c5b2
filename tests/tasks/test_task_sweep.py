"""Every registered task builds, steps, is deterministic and exports a consistent contract."""

import pytest
import torch

from sim2real.contract import Contract
from sim2real.mdp.contract import contract_from_env
from sim2real.mdp.serialize import to_plain
from sim2real.tasks import get_task, make_env_cfg, task_names

NUM_ENVS = 8
QUADROTOR_TASKS = ('quadrotor-hover', 'quadrotor-track')
# quadruped policy: the last 3 ticks of ang_vel 3, gravity 3, joint pos 12 and joint vel
# 12, then command 3 and last action 12 = 3 x 30 + 15 = 105
QUADRUPED_TERMS = [('ang_vel_b', 3, 3), ('projected_gravity', 3, 3), ('velocity_command', 3, 1),
                   ('joint_pos_rel', 12, 3), ('joint_vel', 12, 3), ('action_history', 12, 1)]
POLICY_TERMS = {
    # (name, size of one tick, ticks); hover 3 + 9 + 3 x 3 (velocity of the last 3 ticks)
    # + 3 x 4 (rates of the last 4) + 4 x 4 (actions of the last 4 ticks) = 49, track adds
    # the reference velocity: 52
    'quadrotor-hover': [('position_error_w', 3, 1), ('rotation_matrix', 9, 1),
                        ('lin_vel_b', 3, 3), ('ang_vel_b', 3, 4), ('action_history', 16, 1)],
    'quadrotor-track': [('position_error_w', 3, 1), ('rotation_matrix', 9, 1),
                        ('lin_vel_b', 3, 3), ('ang_vel_b', 3, 4), ('action_history', 16, 1),
                        ('reference_velocity_w', 3, 1)],
    'quadruped-flat': QUADRUPED_TERMS,
    'quadruped-rough': QUADRUPED_TERMS,
    # the hand: 3 ticks of 16 joint positions and 16 previous targets = 96 (HORA, LEAP)
    'hand-rotate': [('joint_pos_unit', 16, 3), ('joint_target_unit', 16, 3)],
    # reorientation: the same 96, then the tracked cube's position 3, orientation 6 and its
    # rotation from the goal 6 = 111
    'hand-reorient': [('joint_pos_unit', 16, 3), ('joint_target_unit', 16, 3),
                      ('tracked_cube_pos', 3, 1), ('tracked_cube_rot6', 6, 1),
                      ('tracked_goal_rot6', 6, 1)],
}
# critic width: the quadrotor's = its policy's + physical_params 13; the quadruped's =
# lin_vel 3 + one tick of each policy term (45) + physical_params 44 (friction, payload,
# centre of mass 3, link-mass scale, Kp, Kd and strength of 12 joints, 2 delays), + an
# 11 x 7 height scan on rough ground; the hand's = joint positions, targets and velocities
# 3 x 16, the cube's position 3, quaternion 4, velocities 3 + 3 and rotation rate 1; the
# reorientation's the same without the rate, with the rotation from the goal 6 and its angle 1
CRITIC_DIMS = {'hand-reorient': 48 + 13 + 7, 'quadrotor-hover': 49 + 13,
               'quadrotor-track': 52 + 13, 'quadruped-flat': 92,
               'quadruped-rough': 92 + 77, 'hand-rotate': 48 + 14}
NUM_ACTIONS = {'hand-reorient': 16, 'quadrotor-hover': 4, 'quadrotor-track': 4,
               'quadruped-flat': 12,
               'quadruped-rough': 12, 'hand-rotate': 16}
# the disturbance event play mode drops
DISTURBANCE = {'quadrotor-hover': 'disturbance', 'quadrotor-track': 'disturbance',
               'quadruped-flat': 'push_base', 'quadruped-rough': 'push_base',
               'hand-rotate': 'push_cube', 'hand-reorient': 'push_cube'}
ROBOT = {'quadrotor-hover': ('crazyflie21', 'thrust_body_rates'),
         'quadrotor-track': ('crazyflie21', 'thrust_body_rates'),
         'quadruped-flat': ('go2class', 'joint_position_offset'),
         'quadruped-rough': ('go2class', 'joint_position_offset'),
         'hand-rotate': ('leapclass', 'joint_position_delta'),
         'hand-reorient': ('leapclass', 'joint_position_delta')}
QUADRUPED_TASKS = ('quadruped-flat', 'quadruped-rough')
HAND_TASKS = ('hand-rotate', 'hand-reorient')


def _actions(steps, seed=0, size=4):
    """Uniform random actions in [-1, 1], (steps, 8, size)."""
    gen = torch.Generator().manual_seed(seed)
    return torch.rand(steps, NUM_ENVS, size, generator=gen) * 2 - 1


def test_registry_lists_the_tasks():
    """task_names() is sorted and holds the hand, quadrotor and quadruped tasks; unknown names
    list them."""
    assert task_names() == ['hand-reorient', 'hand-rotate', 'quadrotor-hover',
                            'quadrotor-track', 'quadruped-flat', 'quadruped-rough']
    with pytest.raises(KeyError, match='registered tasks: hand-reorient, hand-rotate, '
                                       'quadrotor-hover, '
                                       'quadrotor-track, quadruped-flat, quadruped-rough'):
        get_task('quadrotor-flip')


@pytest.mark.parametrize('task', task_names())
def test_task_builds_and_steps_finite(make_env, task):
    """8 envs reset and take 30 random steps with finite obs of obs_dims and (8,) rewards."""
    env = make_env(task, num_envs=NUM_ENVS)
    obs = env.reset(seed=1)
    expected_policy = sum(size * ticks for _, size, ticks in POLICY_TERMS[task])
    assert env.obs_dims['policy'] == expected_policy
    assert env.obs_dims['critic'] == CRITIC_DIMS[task]
    for step_actions in _actions(30, size=NUM_ACTIONS[task]):
        for group, dim in env.obs_dims.items():
            assert obs[group].shape == (NUM_ENVS, dim)
            assert torch.isfinite(obs[group]).all()
        obs, rewards, terminated, truncated, extras = env.step(step_actions)
        assert rewards.shape == (NUM_ENVS,) and torch.isfinite(rewards).all()
        assert terminated.dtype == truncated.dtype == torch.bool
        assert not (terminated & truncated).any()
        assert isinstance(extras['log'], dict)
    assert env.num_actions == NUM_ACTIONS[task]


@pytest.mark.parametrize('task', task_names())
def test_play_config_has_no_disturbance_or_noise(make_env, task):
    """play=True drops the disturbance and policy noise: two resets with one seed agree."""
    cfg = make_env_cfg(task, play=True)
    assert DISTURBANCE[task] not in cfg.events
    assert DISTURBANCE[task] in make_env_cfg(task).events
    assert not cfg.observations['policy'].add_noise
    env = make_env(task, num_envs=NUM_ENVS, play=True)
    assert all(t.noise_std == 0.0 for t in contract_from_env(env).observations)
    first = env.reset(seed=5)['policy'].clone()
    for step_actions in _actions(3, size=NUM_ACTIONS[task]):
        env.step(step_actions)
    second = env.reset(seed=5)['policy']
    torch.testing.assert_close(second, first, rtol=0, atol=0)
    if task in HAND_TASKS:
        # noise off: joint positions (3 ticks x 16) read within their ranges, [-1, 1] (the
        # encoder offsets of up to 0.03 rad can reach 0.03 past a range's end)
        assert first[:, :48].abs().max() <= 1.0 + 0.03
        return
    if task in QUADRUPED_TASKS:
        # noise off: the projected gravity (IMU frame, after 3 ticks of rates) is a unit vector
        norm = torch.linalg.vector_norm(first[:, 9:12], dim=1)
        torch.testing.assert_close(norm, torch.ones(NUM_ENVS), rtol=0, atol=1e-5)
        return
    # noise off: the observation is the exact (scaled, clipped) state, e.g. a unit rotation
    rot = first[:, 3:12].reshape(NUM_ENVS, 3, 3)
    eye = torch.eye(3).expand(NUM_ENVS, 3, 3)
    torch.testing.assert_close(rot @ rot.transpose(1, 2), eye, rtol=0, atol=1e-5)


def test_training_config_observation_noise_is_on(make_env):
    """Without play the hover policy obs are noisy: its rotation rows are no longer orthonormal."""
    env = make_env('quadrotor-hover', num_envs=NUM_ENVS)
    rot = env.reset(seed=5)['policy'][:, 3:12].reshape(NUM_ENVS, 3, 3)
    eye = torch.eye(3).expand(NUM_ENVS, 3, 3)
    assert (rot @ rot.transpose(1, 2) - eye).abs().max() > 1e-3


@pytest.mark.parametrize('task', task_names())
def test_same_seed_same_observations(make_env, task):
    """Two envs with one seed give identical observations after 10 identical random steps."""
    first, second = (make_env(task, num_envs=NUM_ENVS) for _ in range(2))
    for step_actions in _actions(10, size=NUM_ACTIONS[task]):
        obs_a = first.step(step_actions)[0]
        obs_b = second.step(step_actions)[0]
    for group in obs_a:
        torch.testing.assert_close(obs_a[group], obs_b[group], rtol=0, atol=0)
    assert not torch.equal(obs_a['policy'], first.reset(seed=99)['policy'])


def test_reseeded_reset_reproduces_episodes_despite_history(make_env):
    """reset(seed=5) then 150 steps match between a fresh env and one with 190 steps of past."""
    fresh, used = (make_env('quadrotor-hover', num_envs=NUM_ENVS) for _ in range(2))
    gen = torch.Generator().manual_seed(1)
    actions = [torch.rand(NUM_ENVS, 4, generator=gen) * 0.2 - 0.1 for _ in range(190)]
    for step_actions in actions:
        used.step(step_actions)
    torch.testing.assert_close(used.reset(seed=5)['policy'], fresh.reset(seed=5)['policy'],
                               rtol=0, atol=0)
    # 1.5 s: long enough for the 1-3 s disturbance timers to fire
    for step_actions in actions[:150]:
        obs_fresh = fresh.step(step_actions)[0]
        obs_used = used.step(step_actions)[0]
    torch.testing.assert_close(obs_used['policy'], obs_fresh['policy'], rtol=0, atol=0)


@pytest.mark.parametrize('task', task_names())
def test_contract_lists_policy_terms_in_order(make_env, task):
    """The contract's terms are the policy group in order, sizes summing to obs_dims['policy']."""
    env = make_env(task, num_envs=NUM_ENVS)
    contract = contract_from_env(env)
    assert [(t.name, t.size, t.history_length)
            for t in contract.observations] == POLICY_TERMS[task]
    assert contract.observation_size == env.obs_dims['policy']
    robot, kind = ROBOT[task]
    assert contract.task == task and contract.robot == robot
    # rates follow the task config (e.g. 0.002 s x 5 -> 100 Hz policy, 500 Hz physics)
    assert contract.policy_rate_hz == pytest.approx(
        1.0 / (env.cfg.physics_dt_s * env.cfg.decimation))
    assert contract.physics_rate_hz == pytest.approx(1.0 / env.cfg.physics_dt_s)
    assert contract.action.kind == kind and contract.action.size == NUM_ACTIONS[task]
    # the registry lists the default interface first (`sim2real tasks`, `train --action`)
    assert get_task(task).actions[0] == kind
    text = contract.to_json()   # robot_params tuples become lists, so compare as JSON
    assert Contract.from_json(text).to_json() == text
    if task not in QUADROTOR_TASKS:
        return
    assert contract.robot_params['mass_kg'] == 0.027
    # inertia in body axes (roll, pitch, yaw) as the deploy-side rate controller reads it
    assert contract.robot_params['inertia_kg_m2'] == pytest.approx(
        [1.657171e-5, 1.6655602e-5, 2.9261652e-5])
    assert contract.robot_params['hover_thrust_n'] == pytest.approx(0.26487)


def test_rotor_speeds_action_contract(make_env):
    """action='rotor_speeds' exports kind rotor_speeds with the speed range 0..2272.63 rad/s."""
    env = make_env('quadrotor-hover', num_envs=NUM_ENVS, action='rotor_speeds')
    spec = contract_from_env(env).action
    assert spec.kind == 'rotor_speeds'
    assert spec.params['min_speed_rad_s'] == 0.0
    assert spec.params['max_speed_rad_s'] == pytest.approx(2272.628, abs=1e-3)


@pytest.mark.parametrize('task', task_names())
def test_config_serializes_to_plain_data(task):
    """to_plain turns the config into dicts/lists/strings; term functions become module:name."""
    plain = to_plain(make_env_cfg(task))
    assert plain['task'] == task
    if task in QUADROTOR_TASKS:
        assert plain['rewards']['alive']['func'] == 'sim2real.tasks.quadrotor.mdp:alive'
        assert plain['events']['mass']['params']['value_range'] == [0.8, 1.2]
    elif task == 'hand-rotate':
        assert plain['rewards']['rotation']['func'] == (
            'sim2real.tasks.hand.mdp:rotation_rate_clipped')
        assert plain['events']['cube_friction']['params']['friction_range'] == [0.3, 1.5]
    elif task == 'hand-reorient':
        assert plain['rewards']['orientation']['func'] == (
            'sim2real.tasks.hand.reorient_mdp:orientation_inverse')
        assert plain['scene']['params']['tracker_refresh_ticks'] == [1, 4]
    else:
        assert plain['rewards']['track_lin_vel_xy']['func'] == (
            'sim2real.tasks.quadruped.mdp:track_lin_vel_xy_exp')
        assert plain['events']['foot_friction']['params']['friction_range'] == [0.4, 1.25]
