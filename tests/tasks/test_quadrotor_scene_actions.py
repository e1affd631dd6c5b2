"""Quadrotor scene (nominal parameters, derived frames) and action terms with delay."""

import math

import pytest
import torch

from sim2real.contract import file_sha256
from sim2real.tasks.quadrotor import mdp

S = math.sqrt(0.5)


def _quiet(cfg):
    """No randomization or start event: every parameter is nominal."""
    cfg.events = {}


def test_scene_nominal_parameters(make_env, repo_root):
    """Nominal mass 0.027 kg, inertia (Ixx, Iyy, Izz), hover 0.26487 N at 1515.9 rad/s."""
    scene = make_env(num_envs=2, edit=_quiet).scene
    assert scene.robot_name == 'crazyflie21'
    assert scene.urdf_sha256 == file_sha256(repo_root / 'urdf' / 'quadrotor.urdf')
    assert scene.nominal_mass_kg == 0.027
    torch.testing.assert_close(torch.from_numpy(scene.nominal_inertia_kg_m2),
                               torch.tensor([1.657171e-5, 1.6655602e-5, 2.9261652e-5],
                                            dtype=torch.float64))
    assert scene.hover_thrust_n == pytest.approx(0.26487)     # 0.027 * 9.81
    assert scene.hover_speed_rad_s == pytest.approx(1515.903, abs=1e-3)


def test_refresh_derives_body_frame_velocity(make_env):
    """Yawed +90 deg and moving at world (1, 0, 0) m/s, the body sees (0, -1, 0) m/s."""
    env = make_env(num_envs=2, edit=_quiet)
    scene = env.scene
    scene.backend.write_root_state(
        torch.tensor([1]), torch.tensor([[0.0, 0.0, 1.0]]), torch.tensor([[S, 0.0, 0.0, S]]),
        torch.tensor([[1.0, 0.0, 0.0]]), torch.tensor([[0.1, 0.2, 0.3]]))
    scene.refresh()
    torch.testing.assert_close(scene.lin_vel_b[1], torch.tensor([0.0, -1.0, 0.0]))
    torch.testing.assert_close(scene.ang_vel_b[1], torch.tensor([0.1, 0.2, 0.3]))
    # rotation_matrix observation, row-major: (0,-1,0, 1,0,0, 0,0,1)
    torch.testing.assert_close(mdp.rotation_matrix(env)[1],
                               torch.tensor([0.0, -1, 0, 1, 0, 0, 0, 0, 1]))
    assert mdp.tilt(env)[1].item() == pytest.approx(0.0, abs=1e-6)


def test_refresh_replaces_a_diverged_state(make_env):
    """A NaN state is flagged not finite and replaced by qpos0 and zero velocity."""
    env = make_env(num_envs=3, edit=_quiet)
    backend = env.scene.backend
    backend.qvel[1, 2] = float('nan')
    env.scene.refresh()
    assert env.scene.finite.tolist() == [True, False, True]
    assert backend.qpos[1].tolist() == [0, 0, 0, 1, 0, 0, 0]
    assert (backend.qvel[1] == 0).all()


def test_refresh_of_reset_rows_matches_a_full_refresh(make_env):
    """refresh(env_ids) after resetting env_ids leaves every derived tensor exactly as a full
    refresh makes it (the env's reset path refreshes only the reset rows)."""
    env = make_env(num_envs=6)
    for _ in range(20):
        env.step(torch.rand(6, 4) * 2 - 1)
    ids = torch.tensor([1, 4])
    env.scene.reset(ids)
    env.events.apply('reset', ids)
    env.scene.refresh(ids)
    partial = {n: getattr(env.scene, n).clone() for n in (
        'finite', 'pos_w', 'quat_w', 'rotmat_wb', 'lin_vel_w', 'lin_vel_b', 'ang_vel_b')}
    env.scene.refresh()
    for name, value in partial.items():
        assert torch.equal(value, getattr(env.scene, name)), name
    assert not torch.equal(partial['pos_w'][ids], env.scene.pos_w[[0, 2]])


def test_position_reward_far_away_is_tiny_not_subnormal(make_env):
    """10 m off with std 0.1 m: exp(-10^4) is capped at exp(-87) (a normal float32); at
    0.1 m it is exp(-1)."""
    env = make_env(num_envs=2, edit=_quiet)
    target = env.command('target').pos_w
    env.scene.pos_w = target + torch.tensor([[10.0, 0.0, 0.0], [0.0, 0.1, 0.0]])
    reward = mdp.track_position_exp(env, std_m=0.1)
    assert reward[0].item() == pytest.approx(math.exp(-87.0), rel=1e-5)
    assert reward[0].item() >= torch.finfo(torch.float32).tiny
    assert reward[1].item() == pytest.approx(math.exp(-1.0), rel=1e-4)


def test_descent_penalty_counts_only_sinking_beyond_the_limit(make_env):
    """Limit 1 m/s: sinking at 2.5 m/s costs (2.5 - 1)^2 = 2.25; at 0.5 m/s or climbing at
    3 m/s nothing."""
    env = make_env(num_envs=3, edit=_quiet)
    env.scene.lin_vel_w = torch.tensor([[0.0, 0.0, -2.5], [4.0, 0.0, -0.5], [0.0, 0.0, 3.0]])
    penalty = mdp.descent_speed_excess_sq(env, max_m_s=1.0)
    torch.testing.assert_close(penalty, torch.tensor([2.25, 0.0, 0.0]))


def test_physical_params_of_a_nominal_env(make_env):
    """Nominal parameters read as ratios of 1; the privileged vector has 13 entries."""
    env = make_env(num_envs=2, edit=_quiet)
    params = mdp.physical_params(env)
    assert params.shape == (2, 13)
    # mass 1, inertia 1 1 1, thrust scales 1 1 1 1, tau 1, delay 0, external force 0 0 0
    ones = torch.tensor([1.0] * 9 + [0.0] * 4)
    ones[9] = env.action_term.delay[0].item()
    torch.testing.assert_close(params[0], ones)


def test_thrust_body_rates_command_by_hand(make_env):
    """a = (0.5, 1, -1, 0.25): thrust 0.26487 + 0.5 (0.595315 - 0.26487) = 0.430092 N (halfway
    from hover to the rotors' 4 x 0.14883 N), rates (6, -6, 1.5) rad/s; a0 = -0.5 gives half
    the hover thrust, +1 (and 2, clipped to +1 first) the rotors' full 0.59531 N."""
    env = make_env(num_envs=1, edit=_quiet)
    command = env.action_term.to_command(torch.tensor([[0.5, 1.0, -1.0, 0.25]]))
    torch.testing.assert_close(command, torch.tensor([[0.430092, 6.0, -6.0, 1.5]],
                                                     dtype=torch.float64), rtol=0, atol=1e-6)
    half = env.action_term.to_command(torch.tensor([[-0.5, 0.0, 0.0, 0.0]]))[0, 0].item()
    assert half == pytest.approx(0.5 * env.scene.hover_thrust_n)
    full = 4 * env.scene.rotors.max_thrust_n
    assert full == pytest.approx(0.59531, rel=1e-4)
    for a0 in (1.0, 2.0):
        env.action_term.process(torch.tensor([[a0, 0.0, 0.0, 0.0]]))
        assert env.scene.actuator.command[0, 0].item() == pytest.approx(full)


def test_rotor_speeds_command_by_hand(make_env):
    """a = (-1, 0, 0.5, 1) maps to (0, 1136.31, 1704.47, 2272.63) rad/s."""
    env = make_env(num_envs=1, action='rotor_speeds', edit=_quiet)
    command = env.action_term.to_command(torch.tensor([[-1.0, 0.0, 0.5, 1.0]]))
    w_max = 2272.6281256068564
    torch.testing.assert_close(command, torch.tensor([[0.0, w_max / 2, 0.75 * w_max, w_max]],
                                                     dtype=torch.float64))


def test_action_delay_and_clipping(make_env):
    """With a 2-tick delay the actuator gets the action of two steps ago, clipped to [-1, 1]."""
    def delayed(cfg):
        _quiet(cfg)
        cfg.action.params['delay_ticks'] = (2, 2)
    env = make_env(num_envs=1, action='rotor_speeds', edit=delayed)
    term, actuator = env.action_term, env.scene.actuator
    w_max = env.scene.rotors.max_speed_rad_s
    sent = [torch.full((1, 4), v) for v in (3.0, 0.0, -0.5)]
    # commands after each process(): reset history (a = 0), a = 0 again, then a = clip(3) = 1
    expected = [w_max / 2, w_max / 2, w_max]
    for action, speed in zip(sent, expected):
        term.process(action)
        torch.testing.assert_close(actuator.command, torch.full((1, 4), speed,
                                                                dtype=torch.float64))
    torch.testing.assert_close(term.last_action, torch.full((1, 4), -0.5))


@pytest.mark.parametrize('delay', [(0, 0), (0, 3), (5, 5)])
def test_observed_action_history_is_fixed_by_the_task(make_env, delay):
    """4 past outputs (16 entries) whatever the delay range; a 5-tick delay still delays."""
    def edit(cfg):
        _quiet(cfg)
        cfg.action.params['delay_ticks'] = delay
    env = make_env(num_envs=2, edit=edit)
    assert mdp.action_history(env).shape == (2, 16)
    assert env.observations.term_sizes['policy']['action_history'] == 16
    if delay == (5, 5):
        term = env.action_term
        for k in range(6):
            term.process(torch.full((2, 4), 0.1 * (k + 1)))
        # the command now is the first output (0.1): a tenth of the way from hover to full
        hover, full = env.scene.hover_thrust_n, 4 * env.scene.rotors.max_thrust_n
        assert env.scene.actuator.command[0, 0].item() == pytest.approx(
            hover + 0.1 * (full - hover), rel=1e-5)
