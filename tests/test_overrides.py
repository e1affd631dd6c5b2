"""`--set` overrides on the real task and training configs: typed, all-or-nothing, typos named."""

import copy
import re

import pytest

from sim2real.algo_cfg import TrainCfg
from sim2real.overrides import apply_overrides, ConfigError, split_by_root
from sim2real.tasks import get_task, make_env_cfg


@pytest.fixture
def roots():
    """The configs `sim2real train` exposes, as the quadrotor hover task declares them."""
    train = copy.deepcopy(get_task('quadrotor-hover').train)
    return {'env': make_env_cfg('quadrotor-hover'), 'train': train, 'ppo': train.ppo}


def test_sets_fields_of_every_kind(roots):
    apply_overrides(roots, [
        'env.num_envs=64', 'ppo.learning_rate=3e-4', 'train.max_iterations=7',
        'env.rewards.tilt.weight=-0.5', 'ppo.policy.actor_hidden_dims=[32, 16]',
        'env.events.mass.params.value_range=[0.7, 1.3]', 'train.max_seconds=null',
        'ppo.gamma=1'])
    env, train = roots['env'], roots['train']
    assert env.num_envs == 64
    assert train.ppo.learning_rate == 3e-4 and train.max_iterations == 7
    assert env.rewards['tilt'].weight == -0.5
    assert train.ppo.policy.actor_hidden_dims == (32, 16)
    assert env.events['mass'].params['value_range'] == (0.7, 1.3)
    assert train.max_seconds is None
    assert train.ppo.gamma == 1.0 and isinstance(train.ppo.gamma, float)


@pytest.mark.parametrize('text, words', [
    ('ppo.learning_rte=1e-3', 'did you mean "learning_rate"'),
    ('env.rewards.tlt.weight=1', 'did you mean "tilt"'),
    ('ppo.num_mini_batches=2.5', 'takes int, not 2.5'),
    ('ppo.normalize_advantage=1', 'takes bool, not 1'),
    ('env.events.mass.params.value_range=[1, 2, 3]', 'a value like (0.8, 1.2)'),
    ('ppo.policy=3', 'takes'),
    ('train.algo=dqn', 'unknown algorithm "dqn"'),
    ('ppo.learning_rate', 'expected dotted.path=value'),
    ('ppo.gamma=[1', 'not valid YAML'),
])
def test_refuses_with_a_reason(roots, text, words):
    before = roots['train'].ppo.learning_rate
    with pytest.raises(ConfigError) as info:
        apply_overrides(roots, ['ppo.learning_rate=0.123', text])
    assert words in str(info.value)
    assert roots['train'].ppo.learning_rate == before     # nothing set
    assert roots['train'].algo == 'ppo'


def test_split_by_root_names_the_closest_config():
    assert split_by_root(['env.num_envs=2', 'ppo.gamma=0.9'], ('env', 'ppo', 'train')) == {
        'env': ['env.num_envs=2'], 'ppo': ['ppo.gamma=0.9'], 'train': []}
    with pytest.raises(ConfigError, match='did you mean "train"'):
        split_by_root(['trian.max_iterations=3'], ('env', 'ppo', 'train'))


def test_train_defaults_are_typed():
    for name in ('quadrotor-hover', 'quadrotor-track', 'quadruped-flat'):
        assert isinstance(get_task(name).train, TrainCfg)


@pytest.mark.parametrize('text, words', [
    ('ppo.schedule=bogus', 'schedule "bogus" is not adaptive or fixed'),
    ('ppo.policy.activation=gelu', 'activation "gelu" is not one of'),
    ('train.edge_prob=2', 'edge_prob must be in [0, 1]'),
    ('train.num_envs=0', 'num_envs must be > 0'),
    ('ppo.policy.actor_hidden_dims=[]', 'actor_hidden_dims must be one or more widths'),
    ('ppo.gamma=.nan', 'takes float'),
])
def test_values_outside_their_domain_are_refused(roots, text, words):
    with pytest.raises(ConfigError, match=re.escape(words)):
        apply_overrides(roots, [text])


def test_assignments_apply_in_the_order_given():
    from sim2real.training import resolve_train_cfg
    cfg = resolve_train_cfg(get_task('quadrotor-hover').train,
                            ['ppo.gamma=0.8', 'train.ppo.gamma=0.9'])
    assert cfg.ppo.gamma == 0.9


def test_an_overridden_range_is_still_edge_biased_in_training():
    """`--set` changes the task's range before training wraps it for edge draws; the run's
    shape fields come last; env.corner_prob belongs to the training config."""
    from sim2real.mdp.ranges import EdgeRange
    from sim2real.training import build_env, env_sets
    env = build_env('quadrotor-hover', seed=0, num_envs=4, num_threads=1, edge_prob=0.5,
                    sets=['env.events.mass.params.value_range=[0.7, 1.3]',
                          'env.num_envs=6'])
    drawn = env.cfg.events['mass'].params['value_range']
    assert isinstance(drawn, EdgeRange) and (drawn.low, drawn.high) == (0.7, 1.3)
    assert env.num_envs == 6
    with pytest.raises(ConfigError, match='set train.corner_prob instead'):
        env_sets(['env.corner_prob=0.5'])


def test_algorithm_choice_and_its_own_schedule():
    """--algo sac takes the task's SAC config and its run shape; sac. overrides reach it;
    an unknown algorithm or a SAC field under ppo. is refused."""
    from sim2real.training import resolve_train_cfg
    spec = get_task('quadrotor-hover')
    ppo = resolve_train_cfg(spec.train, [])
    assert (ppo.algo, ppo.schedule('num_envs'), ppo.schedule('max_iterations')) == (
        'ppo', spec.train.num_envs, spec.train.max_iterations)
    sac = resolve_train_cfg(spec.train, ['sac.batch_size=64', 'sac.n_step=3'], 'sac')
    assert sac.algo_cfg is sac.sac and (sac.sac.batch_size, sac.sac.n_step) == (64, 3)
    assert sac.schedule('num_envs') == spec.train.sac.num_envs != spec.train.num_envs
    assert spec.train.sac.batch_size != 64   # the task's defaults are not touched
    # train.num_envs names the run's env count whichever algorithm runs; the later wins
    assert resolve_train_cfg(spec.train, ['train.num_envs=512'], 'sac').schedule(
        'num_envs') == 512
    assert resolve_train_cfg(spec.train, ['train.num_envs=512', 'sac.num_envs=128'],
                             'sac').schedule('num_envs') == 128
    with pytest.raises(ConfigError, match='unknown algorithm "ddpg"'):
        resolve_train_cfg(spec.train, [], 'ddpg')
    with pytest.raises(ConfigError, match='batch_size'):
        resolve_train_cfg(spec.train, ['ppo.batch_size=64'])
    with pytest.raises(ValueError, match='n_step must be > 0'):
        resolve_train_cfg(spec.train, ['sac.n_step=0'], 'sac')


def test_a_mapping_parameter_takes_a_whole_mapping():
    """The hand's grasp_pose_rad (joint name -> rad, {} by default) takes a mapping; a
    non-mapping is refused; the scene then resets to it and the contract's default pose is
    it, while the joints not named keep the URDF's pose."""
    from sim2real.mdp.contract import contract_from_env
    from sim2real.mdp.env import RLEnv
    cfg = make_env_cfg('hand-rotate')
    roots = {'env': cfg}
    with pytest.raises(ConfigError, match='grasp_pose_rad takes a value like {}'):
        apply_overrides(roots, ['env.scene.params.grasp_pose_rad=[0.8]'])
    apply_overrides(roots, ['env.scene.params.grasp_pose_rad={th_cmc: 0.8, if_abd: -0.1}'])
    assert cfg.scene.params['grasp_pose_rad'] == {'th_cmc': 0.8, 'if_abd': -0.1}
    cfg.num_envs, cfg.num_threads = 2, 1
    env = RLEnv(cfg)
    contract = contract_from_env(env)
    names = contract.joint_names
    assert contract.default_joint_pos_rad[names.index('th_cmc')] == 0.8
    assert contract.default_joint_pos_rad[names.index('if_abd')] == -0.1
    assert contract.default_joint_pos_rad[names.index('if_pip')] == 1.7   # the URDF's
    assert env.scene.default_joint_pos_rad[names.index('th_cmc')].item() == pytest.approx(0.8)
    bad = make_env_cfg('hand-rotate')
    apply_overrides({'env': bad}, ['env.scene.params.grasp_pose_rad={thumb_cmc: 0.8}'])
    bad.num_envs, bad.num_threads = 1, 1
    with pytest.raises(ValueError, match=r"grasp_pose_rad: no joints \['thumb_cmc'\]"):
        RLEnv(bad)
