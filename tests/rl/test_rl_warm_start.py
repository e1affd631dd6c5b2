"""Warm start: a quadruped-rough policy starts from a quadruped-flat run's policy."""

import copy

import pytest
import torch

from sim2real.rl.checkpoint import (
    CheckpointError, latest_checkpoint, load_checkpoint, save_checkpoint)
from sim2real.rl.ppo import PPO, PPOCfg
from sim2real.rl.runner import RunnerCfg
from sim2real.rl.warm_start import warm_start
from sim2real.tasks import get_task
from sim2real.training import build_env, run_config, train, TrainArgs
from warm_start_setup import ENVS, learner, one_iteration_run


@pytest.fixture(scope='module')
def flat_run(tmp_path_factory):
    """One PPO iteration of quadruped-flat on 16 envs: a checkpoint with trained statistics."""
    return one_iteration_run('quadruped-flat', tmp_path_factory)


def _target(task='quadruped-rough'):
    """A fresh learner for task and the run config train() would store for it."""
    return learner(task)[:2]


def test_rough_policy_starts_from_the_flat_policy(flat_run):
    """Actor, log-std and policy normalizer equal the flat run's; the critic stays fresh.

    The rough critic also sees 77 terrain heights (critic input 169 against 92 on flat), so
    its first layer could not be copied at all.
    """
    source = load_checkpoint(latest_checkpoint(flat_run))['model']
    actor_critic, config = _target()
    fresh_critic = {k: v.clone() for k, v in actor_critic.state_dict().items()
                    if k.startswith('critic')}
    warm_start(actor_critic, flat_run, config)
    state = actor_critic.state_dict()
    copied = [k for k in source if k.startswith(('actor.', 'log_std', 'policy_normalizer.'))]
    assert len(copied) == 10
    for key in copied:
        torch.testing.assert_close(state[key], source[key], rtol=0, atol=0)
    assert float(state['policy_normalizer.count']) > 0   # statistics of the flat rollout
    for key, value in fresh_critic.items():
        torch.testing.assert_close(state[key], value, rtol=0, atol=0)
    assert source['critic.0.weight'].shape == (256, 92)
    assert state['critic.0.weight'].shape == (256, 169)


def test_a_fine_tune_of_the_same_task_takes_the_critic_too(flat_run):
    """From a quadruped-flat checkpoint into quadruped-flat: the critic and its normalizer are
    copied bit for bit as well (9 tensors: 3 layers, mean, var, count), so the first
    advantages are not noise."""
    source = load_checkpoint(latest_checkpoint(flat_run))['model']
    actor_critic, config = _target('quadruped-flat')
    warm_start(actor_critic, flat_run, config)
    state = actor_critic.state_dict()
    critic = [k for k in source if k.startswith(('critic.', 'critic_normalizer.'))]
    assert len(critic) == 9 and float(source['critic_normalizer.count']) > 0
    for key in source:
        torch.testing.assert_close(state[key], source[key], rtol=0, atol=0)


def test_a_critic_of_other_layers_stays_fresh(flat_run):
    """The same task with critic layers (128, 128) against the source's: actor copied, critic
    left as initialized (it could not be loaded), and no error."""
    env = build_env('quadruped-flat', seed=1, num_envs=ENVS, num_threads=1)
    train_cfg = copy.deepcopy(get_task('quadruped-flat').train)
    train_cfg.ppo.policy.critic_hidden_dims = (128, 128)
    ppo = PPO(env.obs_dims['policy'], env.obs_dims['critic'], env.num_actions, ENVS,
              train_cfg.ppo)
    config = run_config(TrainArgs('quadruped-flat'), env, train_cfg, RunnerCfg())
    fresh = {k: v.clone() for k, v in ppo.actor_critic.state_dict().items()
             if k.startswith('critic')}
    warm_start(ppo.actor_critic, flat_run, config)
    source = load_checkpoint(latest_checkpoint(flat_run))['model']
    torch.testing.assert_close(ppo.actor_critic.state_dict()['actor.0.weight'],
                               source['actor.0.weight'], rtol=0, atol=0)
    for key, value in fresh.items():
        torch.testing.assert_close(ppo.actor_critic.state_dict()[key], value, rtol=0, atol=0)


@pytest.mark.parametrize('edit,reason', [
    (lambda c: c['env']['rewards']['joint_torques'].update(weight=-1.0),
     "reward terms ['joint_torques']"),
    (lambda c: c['algo_cfg'].update(gamma=0.9), 'gamma: 0.9 vs'),
])
def test_a_critic_that_predicts_other_returns_stays_fresh(flat_run, tmp_path, caplog, edit,
                                                          reason):
    """A source trained on another reward weight or discount: the actor is copied, the critic
    (which predicts those returns) is not, and the log names the difference."""
    state = load_checkpoint(latest_checkpoint(flat_run))
    edit(state['config'])
    edited = save_checkpoint(tmp_path / 'edited.pt', state)
    actor_critic, config = _target('quadruped-flat')
    fresh = {k: v.clone() for k, v in actor_critic.state_dict().items()
             if k.startswith('critic')}
    with caplog.at_level('INFO', logger='sim2real.rl.warm_start'):
        warm_start(actor_critic, edited, config)
    state_now = actor_critic.state_dict()
    torch.testing.assert_close(state_now['actor.0.weight'], state['model']['actor.0.weight'],
                               rtol=0, atol=0)
    for key, value in fresh.items():
        torch.testing.assert_close(state_now[key], value, rtol=0, atol=0)
    assert 'critic and optimizer fresh' in caplog.text and reason in caplog.text, caplog.text


def test_reward_terms_stored_before_after_clip_carry_the_critic(flat_run, tmp_path):
    """A source stored before reward terms had after_clip (the field absent) predicts the same
    returns as after_clip False: its critic is loaded bit for bit."""
    state = load_checkpoint(latest_checkpoint(flat_run))
    rewards = state['config']['env']['rewards']
    rewards.pop('termination')   # a run from before the fall penalty...
    for term in rewards.values():
        del term['after_clip']   # ...and before the field
    edited = save_checkpoint(tmp_path / 'edited.pt', state)
    actor_critic, config = _target('quadruped-flat')
    config['env']['rewards'].pop('termination')
    warm_start(actor_critic, edited, config)
    for key, value in state['model'].items():
        torch.testing.assert_close(actor_critic.state_dict()[key], value, rtol=0, atol=0)


def test_a_changed_observation_scale_is_refused_by_name(flat_run, tmp_path):
    """A source whose joint_vel scale differs (0.05 -> 0.1) is refused, naming term and field."""
    state = load_checkpoint(latest_checkpoint(flat_run))
    state['config']['env']['observations']['policy']['terms']['joint_vel']['scale'] = 0.1
    edited = save_checkpoint(tmp_path / 'edited.pt', state)
    actor_critic, config = _target()
    before = copy.deepcopy(actor_critic.state_dict())
    with pytest.raises(ValueError, match='observation "joint_vel" scale: 0.1 vs 0.05'):
        warm_start(actor_critic, edited, config)
    for key, value in before.items():   # nothing half-loaded
        torch.testing.assert_close(actor_critic.state_dict()[key], value, rtol=0, atol=0)


def test_another_robot_is_refused_with_every_difference(flat_run):
    """A quadrotor policy cannot start from a quadruped run: terms, sizes, action, actions."""
    actor_critic, config = _target('quadrotor-hover')
    with pytest.raises(ValueError) as info:
        warm_start(actor_critic, flat_run, config)
    message = str(info.value)
    for field in ('policy observation terms', 'policy observation size: 105 vs',
                  'actions: 12 vs 4', 'action:'):
        assert field in message, message


def test_rewards_stored_before_after_clip_and_the_move_of_is_terminated_are_the_same():
    """A hover config stored before after_clip existed and while is_terminated lived in the
    quadrotor's mdp module predicts the same returns; after_clip set on a term does not."""
    from sim2real.mdp.serialize import to_plain
    from sim2real.rl.warm_start import critic_interface, interface_mismatches
    from sim2real.tasks import make_env_cfg

    def interface(env):
        return critic_interface({'env': env, 'obs_dims': {'critic': 62},
                                 'ppo': to_plain(PPOCfg())})
    now = to_plain(make_env_cfg('quadrotor-hover'))
    stored = copy.deepcopy(now)
    for term in stored['rewards'].values():
        del term['after_clip']
    stored['rewards']['crash']['func'] = 'sim2real.tasks.quadrotor.mdp:is_terminated'
    assert interface_mismatches(interface(stored), interface(now)) == []
    now['rewards']['crash']['after_clip'] = True
    assert interface_mismatches(interface(stored), interface(now)) == ["reward terms ['crash']"]


def test_edge_biased_training_is_no_interface_difference():
    """A run trained with edge-biased ranges (an action delay stored as an EdgeRange) starts a
    run without them; a different delay range is a change of training conditions, named, not
    of the interface; a different action history is an interface difference."""
    from sim2real.mdp.ranges import bias_edges
    from sim2real.mdp.serialize import to_plain
    from sim2real.rl.warm_start import (
        action_condition_changes, interface_mismatches, policy_interface)
    from sim2real.tasks import make_env_cfg

    def interface(cfg):
        config = {'env': to_plain(cfg), 'obs_dims': {'policy': 49}, 'num_actions': 4,
                  'ppo': to_plain(PPOCfg())}
        return policy_interface(config)
    biased, plain = make_env_cfg('quadrotor-hover'), make_env_cfg('quadrotor-hover')
    bias_edges(biased, 0.5, per_env=True)
    assert interface_mismatches(interface(biased), interface(plain)) == []
    plain.action.params['delay_ticks'] = (0, 3)
    assert interface_mismatches(interface(biased), interface(plain)) == []
    changes = action_condition_changes({'env': to_plain(biased)}, {'env': to_plain(plain)})
    assert changes == ['delay_ticks: [0.0, 2.0] -> [0, 3]']   # quadrotor-hover: 0-2 ticks
    plain.action.params['history_ticks'] = 2
    lines = interface_mismatches(interface(biased), interface(plain))
    assert len(lines) == 1 and lines[0].startswith('action:')


def test_missing_sources_are_reported(tmp_path):
    """A path that does not exist, and a run directory without checkpoints."""
    actor_critic, config = _target()
    with pytest.raises(FileNotFoundError, match='no such run directory or checkpoint'):
        warm_start(actor_critic, tmp_path / 'nope', config)
    with pytest.raises(FileNotFoundError, match='holds no checkpoints'):
        warm_start(actor_critic, tmp_path, config)


def test_train_rough_with_init_from_records_it_and_resume_keeps_training(flat_run, tmp_path):
    """`train quadruped-rough --init-from FLAT`: 1 iteration, then resume to 2 (no re-init)."""
    args = TrainArgs('quadruped-rough', num_envs=ENVS, max_iterations=1, num_threads=1,
                     init_from=str(flat_run))
    run = tmp_path / 'rough'
    summary = train(args, run, progress_bar=False)
    assert summary['iterations'] == 1
    first = load_checkpoint(latest_checkpoint(run))
    assert first['config']['args']['init_from'] == str(flat_run)
    resumed = train(TrainArgs('quadruped-rough', max_iterations=2), run, resume=True,
                    progress_bar=False)
    assert resumed['iterations'] == 2
    second = load_checkpoint(latest_checkpoint(run))
    # the resumed run continued from iteration 1's normalizer, not from the flat run's again
    assert float(second['model']['policy_normalizer.count']) > float(
        first['model']['policy_normalizer.count'])


def test_a_refused_start_writes_no_run_files(flat_run, tmp_path):
    """train() refuses before writing config.yaml or a checkpoint into the new run."""
    args = TrainArgs('quadrotor-hover', num_envs=ENVS, max_iterations=1, num_threads=1,
                     init_from=str(flat_run))
    with pytest.raises(ValueError, match='its interface differs'):
        train(args, tmp_path / 'hover', progress_bar=False)
    assert list((tmp_path / 'hover').iterdir()) == []


@pytest.fixture(scope='module')
def flat_onnx(flat_run, tmp_path_factory):
    """The flat run exported to a policy file."""
    from sim2real.policy_io import export_run
    return export_run(flat_run, tmp_path_factory.mktemp('onnx') / 'policy.onnx')[0]


def test_a_policy_file_starts_the_actor_and_normalizer(flat_run, flat_onnx):
    """From policy.onnx: actor weights equal the run's bit for bit, the normalizer's mean too
    and its variance to float32 rounding (the file folds sqrt(var + eps)); the action std is
    the new run's init_noise_std (1.0; the file has none), the critic stays fresh."""
    source = load_checkpoint(latest_checkpoint(flat_run))['model']
    actor_critic, config, contract = learner('quadruped-flat')
    fresh = {k: v.clone() for k, v in actor_critic.state_dict().items()
             if k.startswith(('critic', 'log_std'))}
    warm_start(actor_critic, flat_onnx, config, contract)
    state = actor_critic.state_dict()
    actor_keys = [k for k in source if k.startswith('actor.')]
    assert len(actor_keys) == 6
    for key in actor_keys:
        torch.testing.assert_close(state[key], source[key], rtol=0, atol=0)
    torch.testing.assert_close(state['policy_normalizer.mean'], source['policy_normalizer.mean'],
                               rtol=0, atol=0)
    torch.testing.assert_close(state['policy_normalizer.var'], source['policy_normalizer.var'],
                               rtol=1e-5, atol=1e-6)
    assert not torch.equal(state['policy_normalizer.var'], torch.ones_like(
        state['policy_normalizer.var']))   # trained statistics, not the fresh ones
    assert int(state['policy_normalizer.count']) == 10 ** 8
    for key, value in fresh.items():
        torch.testing.assert_close(state[key], value, rtol=0, atol=0)


def test_a_policy_file_of_another_robot_is_refused_and_nothing_loaded(flat_onnx):
    """A quadrotor run cannot start from the quadruped file: the differing contract fields
    are named and the run's weights stay as they were."""
    actor_critic, config, contract = learner('quadrotor-hover')
    before = copy.deepcopy(actor_critic.state_dict())
    with pytest.raises(ValueError, match='its interface differs') as info:
        warm_start(actor_critic, flat_onnx, config, contract)
    for field in ('robot', 'joint_names', 'observations[0].name', 'action.kind'):
        assert f'\n  {field}' in str(info.value), str(info.value)
    for key, value in before.items():
        torch.testing.assert_close(actor_critic.state_dict()[key], value, rtol=0, atol=0)


@pytest.mark.parametrize('field,value,match', [
    ('actor_hidden_dims', (64, 64), 'do not fit this run'),
    # same layers, other activation: only the check against onnxruntime can tell
    ('activation', 'tanh', 'its outputs differ from the file'),
])
def test_a_policy_file_of_another_actor_is_refused_and_nothing_kept(
        flat_onnx, field, value, match):
    """Another layout is refused by shape; another activation by the check against the
    file's outputs, after loading, which is undone: the run keeps its weights."""
    from sim2real.mdp.contract import contract_from_env
    env = build_env('quadruped-flat', seed=1, num_envs=ENVS, num_threads=1)
    cfg = copy.deepcopy(get_task('quadruped-flat').train.ppo)
    setattr(cfg.policy, field, value)
    ppo = PPO(env.obs_dims['policy'], env.obs_dims['critic'], env.num_actions, ENVS, cfg)
    before = copy.deepcopy(ppo.actor_critic.state_dict())
    with pytest.raises(CheckpointError, match=match):
        warm_start(ppo.actor_critic, flat_onnx, {}, contract_from_env(env))
    for key, value in before.items():
        torch.testing.assert_close(ppo.actor_critic.state_dict()[key], value, rtol=0, atol=0)


def test_a_policy_file_with_another_action_scale_is_refused(flat_onnx):
    """The action scale maps outputs to joint targets: a run that doubles it is refused
    (gains only warn)."""
    from sim2real.mdp.contract import contract_from_env
    env = build_env('quadruped-flat', seed=1, num_envs=ENVS, num_threads=1,
                    sets=['env.action.params.scale=0.5'])
    actor_critic, config, _ = learner('quadruped-flat')
    with pytest.raises(ValueError, match=r'\n  action\.params\.scale'):
        warm_start(actor_critic, flat_onnx, config, contract_from_env(env))


def test_train_with_a_policy_file_warns_of_changed_gains(flat_onnx, tmp_path, caplog):
    """`train quadruped-flat --init-from policy.onnx --set env...kp=...`: trains, records the
    source in the run's config, and the log names the gains that differ from the file's."""
    args = TrainArgs('quadruped-flat', num_envs=ENVS, max_iterations=1, num_threads=1,
                     init_from=str(flat_onnx), sets=['env.scene.params.kp_nm_per_rad=30.0'])
    with caplog.at_level('WARNING', logger='sim2real.rl.warm_start_onnx'):
        summary = train(args, tmp_path / 'tuned', progress_bar=False)
    assert summary['iterations'] == 1
    stored = load_checkpoint(latest_checkpoint(tmp_path / 'tuned'))['config']['args']
    assert stored['init_from'] == str(flat_onnx)
    assert 'action.params.kp_nm_per_rad' in caplog.text
    assert 'kp_nm_per_rad[' not in caplog.text   # named once, not per joint
