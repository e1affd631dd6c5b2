"""RLEnv's masked reset (reset_envs) and seed-only restart (reseed) on real envs."""

import torch

FIELDS = ('geom_friction', 'body_mass', 'body_ipos')
"""Model fields the quadruped's startup events randomize."""


def _fields(env) -> dict[str, torch.Tensor]:
    """Copies of the per-env model fields the startup events write."""
    return {f: env.scene.backend.expand(f).clone() for f in FIELDS}


def test_reset_envs_touches_only_the_given_envs(make_env):
    """reset_envs([1]): env 1 restarts; envs 0, 2, 3 keep state, length, sums, obs bitwise."""
    env = make_env(num_envs=4)
    env.reset(seed=0)
    for _ in range(3):
        obs, *_ = env.step(torch.zeros(4, 4))
    qpos = env.scene.backend.qpos.clone()
    sums = env.rewards.episode_sums['alive'].clone()
    out = env.reset_envs(torch.tensor([1]))
    keep = torch.tensor([0, 2, 3])
    assert env.episode_length.tolist() == [3, 0, 3, 3]
    assert torch.equal(env.scene.backend.qpos[keep], qpos[keep])
    assert not torch.equal(env.scene.backend.qpos[1], qpos[1])
    assert env.rewards.episode_sums['alive'].tolist() == [sums[0], 0.0, sums[2], sums[3]]
    for group in out:
        assert torch.equal(out[group][keep], obs[group][keep])


def test_reseed_redraws_startup_events_without_drift(make_env):
    """reseed(5) gives envs built with seeds 0, 1 the same startup draws, again after 6."""
    a, b = (make_env('quadruped-flat', num_envs=3, edit=lambda c, s=s: setattr(c, 'seed', s))
            for s in (0, 1))
    assert not torch.equal(_fields(a)['body_mass'], _fields(b)['body_mass'])
    obs_a, obs_b = a.reseed(5), b.reseed(5)
    first = _fields(a)
    for name, value in _fields(b).items():
        assert torch.equal(value, first[name]), name
    for group in obs_a:
        assert torch.equal(obs_a[group], obs_b[group])
    a.reseed(6)
    assert not torch.equal(_fields(a)['body_mass'], first['body_mass'])
    a.reseed(5)
    for name, value in _fields(a).items():
        assert torch.equal(value, first[name]), name
    # trunk mass = default + U(-1, 3) kg, leg links x U(0.8, 1.2): relative to the model
    default = torch.as_tensor(a.scene.model.body_mass)
    base = a.scene.info.base_body_id
    added = first['body_mass'][:, base] - default[base]
    assert ((added >= -1.0 - 1e-9) & (added <= 3.0 + 1e-9)).all()
    links = [i for i in range(1, len(default)) if i != base]
    ratio = first['body_mass'][:, links] / default[links]
    assert ((ratio >= 0.8 - 1e-9) & (ratio <= 1.2 + 1e-9)).all()


def test_reset_seed_keeps_the_startup_draws(make_env):
    """RLEnv.reset(seed=5), the training runner's call, leaves the startup draws as built."""
    env = make_env('quadruped-flat', num_envs=3)
    before = _fields(env)
    env.step(torch.zeros(3, 12))
    env.reset(seed=5)
    for name, value in _fields(env).items():
        assert torch.equal(value, before[name]), name


def test_reset_envs_does_not_move_the_terrain_curriculum(make_env):
    """quadruped-rough after 10 steps: a masked reset of envs 0-3 (Gymnasium's reset_mask)
    leaves every terrain level as it was; an episode ended by the env itself would be judged."""
    env = make_env('quadruped-rough', num_envs=8)
    for _ in range(10):
        env.step(torch.zeros(8, env.num_actions))
    levels = env.scene.ground.curriculum.level.clone()
    env.reset_envs(torch.arange(4))
    assert torch.equal(env.scene.ground.curriculum.level, levels)


def test_final_observations_are_the_ended_episodes_last(make_env):
    """With final_obs_groups set, a time-out at step 5 reports the critic observations the
    episode ended in: those an env with longer episodes, same seed, sees at step 5; the
    returned observations already belong to the next episode."""
    def episodes(steps):
        return lambda cfg: setattr(cfg, 'episode_length_s', steps * cfg.physics_dt_s
                                   * cfg.decimation)
    short, long = make_env(num_envs=3, edit=episodes(5)), make_env(num_envs=3, edit=episodes(50))
    short.final_obs_groups = ('critic',)
    for env in (short, long):
        env.reset(seed=0)
    for step in range(5):
        out_s = short.step(torch.zeros(3, 4))
        out_l = long.step(torch.zeros(3, 4))
        assert ('final_obs_groups' in out_s[4]) == (step == 4)
    obs_s, _, terminated, truncated, extras = out_s
    assert truncated.all() and not terminated.any()
    assert torch.equal(extras['final_obs_groups']['critic'], out_l[0]['critic'])
    assert not torch.allclose(obs_s['critic'], out_l[0]['critic'])
    assert short.episode_length.tolist() == [0, 0, 0]
