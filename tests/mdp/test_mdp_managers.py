"""Managers driven by a real quadrotor RLEnv: rewards, terminations, observations, events."""

import pytest
import torch

from sim2real.mdp.cfg import (
    EventTermCfg, ObsGroupCfg, ObsTermCfg, RewardTermCfg, TerminationTermCfg)
from sim2real.mdp.managers import (
    EventManager, ObservationManager, RewardManager, TerminationManager, TermError)

HEIGHTS = (1.0, 2.0, 3.0, 4.0)


def _place(env, heights=HEIGHTS, x=None):
    """Put env i level and at rest at (x_i, 0, heights[i]) and refresh the derived state."""
    n = env.num_envs
    ids = torch.arange(n)
    pos = torch.zeros(n, 3, dtype=torch.float64)
    pos[:, 2] = torch.tensor(heights, dtype=torch.float64)
    if x is not None:
        pos[:, 0] = torch.tensor(x, dtype=torch.float64)
    quat = torch.tensor([[1.0, 0.0, 0.0, 0.0]]).repeat(n, 1)
    env.scene.backend.write_root_state(ids, pos, quat, torch.zeros(n, 3), torch.zeros(n, 3))
    env.scene.refresh()


def height(env):
    """Base height [m], (N,)."""
    return env.scene.pos_w[:, 2]


def height_column(env):
    """Base height [m], (N, 1)."""
    return env.scene.pos_w[:, 2:3]


def constant(env, value):
    """value for every env, (N,)."""
    return torch.full((env.num_envs,), value)


def explode(env):
    """A term that must never be evaluated."""
    raise AssertionError('a zero-weight term was evaluated')


def test_reward_is_weight_times_dt_times_term(make_env):
    """2*0.01*z - 0.5*0.01*3 for z = 1..4 gives (0.005, 0.025, 0.045, 0.065); zero weight drops."""
    env = make_env()
    _place(env)
    manager = RewardManager(env, {
        'height': RewardTermCfg(height, weight=2.0),
        'const': RewardTermCfg(constant, weight=-0.5, params={'value': 3.0}),
        'unused': RewardTermCfg(explode, weight=0.0)})
    assert list(manager.terms) == ['height', 'const']
    total = manager.compute(0.01)
    torch.testing.assert_close(total, torch.tensor([0.005, 0.025, 0.045, 0.065]))
    manager.compute(0.01)
    # two steps of height: 2 * 0.02 * z = (0.04, 0.08, 0.12, 0.16); logged means of ids 0, 3
    log = manager.reset(torch.tensor([0, 3]))
    assert log['reward/height'] == pytest.approx((0.04 + 0.16) / 2)
    assert log['reward/const'] == pytest.approx(-0.03)
    torch.testing.assert_close(manager.episode_sums['height'], torch.tensor([0, 0.08, 0.12, 0]))


def test_only_positive_rewards_clips_the_step_total_but_not_the_logged_terms(make_env):
    """2*0.01*z - 0.05 for z = 1..4: (-0.03, -0.01, 0.01, 0.03) clipped to (0, 0, .01, .03)."""
    env = make_env()
    _place(env)
    manager = RewardManager(env, {
        'height': RewardTermCfg(height, weight=2.0),
        'const': RewardTermCfg(constant, weight=-5.0, params={'value': 1.0})},
        only_positive=True)
    torch.testing.assert_close(manager.compute(0.01), torch.tensor([0.0, 0.0, 0.01, 0.03]))
    torch.testing.assert_close(manager.episode_sums['const'], torch.full((4,), -0.05))


def test_after_clip_terms_are_added_past_the_only_positive_clip(make_env):
    """clip(2*0.01*z - 0.05, 0) for z = 1..4 is (0, 0, .01, .03); an after_clip term of
    -1*0.01 then gives (-0.01, -0.01, 0, 0.02): a fall's penalty counts where the rest clips."""
    env = make_env()
    _place(env)
    manager = RewardManager(env, {
        'height': RewardTermCfg(height, weight=2.0),
        'const': RewardTermCfg(constant, weight=-5.0, params={'value': 1.0}),
        'fall': RewardTermCfg(constant, weight=-1.0, params={'value': 1.0}, after_clip=True)},
        only_positive=True)
    torch.testing.assert_close(manager.compute(0.01), torch.tensor([-0.01, -0.01, 0.0, 0.02]))
    torch.testing.assert_close(manager.episode_sums['fall'], torch.full((4,), -0.01))


@pytest.mark.parametrize('func, message', [
    (height_column, 'term "bad" returned shape (4, 1), expected (4,)'),
    (lambda env: height(env) / 0.0 * 0.0, 'term "bad" returned non-finite values'),
])
def test_reward_term_with_wrong_shape_or_nan_is_named(make_env, func, message):
    """A reward term of shape (N, 1) or with NaN raises TermError naming the term."""
    env = make_env()
    _place(env)
    manager = RewardManager(env, {'bad': RewardTermCfg(func, weight=1.0)})
    with pytest.raises(TermError) as info:
        manager.compute(0.01)
    assert str(info.value) == message


def test_terminations_separate_time_outs(make_env):
    """Crash (z < 1.5) terminates env 0; time-out of envs 0, 2, 3 truncates only 2 and 3."""
    env = make_env()
    _place(env)
    manager = TerminationManager(env, {
        'low': TerminationTermCfg(lambda env: height(env) < 1.5),
        'time_out': TerminationTermCfg(lambda env: torch.tensor([True, False, True, True]),
                                       time_out=True)})
    terminated, truncated = manager.compute()
    assert terminated.tolist() == [True, False, False, False]
    assert truncated.tolist() == [False, False, True, True]
    assert manager.last['time_out'].tolist() == [True, False, True, True]
    assert manager.last['low'].tolist() == [True, False, False, False]


def test_observation_scale_clip_and_sizes(make_env):
    """z scaled by 2 and clipped at 5: (1, 2, 3, 4) -> (2, 4, 5, 5); the group is 1 + 3 wide."""
    env = make_env()
    _place(env)
    manager = ObservationManager(env, {'g': ObsGroupCfg({
        'z': ObsTermCfg(height_column, scale=2.0, clip=5.0),
        'pos': ObsTermCfg(lambda env: env.scene.pos_w, scale=-1.0)})})
    assert manager.term_sizes == {'g': {'z': 1, 'pos': 3}}
    assert manager.group_dims == {'g': 4}
    manager.reset(torch.arange(4))
    obs = manager.compute()['g']
    torch.testing.assert_close(obs[:, 0], torch.tensor([2.0, 4.0, 5.0, 5.0]))
    torch.testing.assert_close(obs[:, 3], -torch.tensor(HEIGHTS))


def test_observation_delay_shows_previous_tick(make_env):
    """With delay 1 a compute returns the previous compute's values (fresh rows: the current)."""
    env = make_env()
    _place(env)
    manager = ObservationManager(env, {
        'late': ObsGroupCfg({'z': ObsTermCfg(height_column)}, delay_ticks=(1, 1)),
        'now': ObsGroupCfg({'z': ObsTermCfg(height_column)})})
    manager.reset(torch.arange(4))
    first = manager.compute()
    torch.testing.assert_close(first['late'][:, 0], torch.tensor(HEIGHTS))  # nothing older yet
    _place(env, heights=(1.5, 2.5, 3.5, 4.5))
    second = manager.compute()
    torch.testing.assert_close(second['late'][:, 0], torch.tensor(HEIGHTS))
    torch.testing.assert_close(second['now'][:, 0], torch.tensor([1.5, 2.5, 3.5, 4.5]))
    _place(env, heights=(1.7, 2.7, 3.7, 4.7))
    manager.reset(torch.tensor([2]))   # a reset env has no past: it sees the current value
    third = manager.compute()
    torch.testing.assert_close(third['late'][:, 0], torch.tensor([1.5, 2.5, 3.7, 4.5]))


def test_observation_noise_std_and_switch(make_env):
    """noise_std 0.1 gives a sample std of 0.1 (+-10 %) with add_noise, exact values without."""
    env = make_env(num_envs=64)
    _place(env, heights=[1.0] * 64)
    term = ObsTermCfg(lambda env: env.scene.pos_w, noise_std=0.1)
    noisy = ObservationManager(env, {'g': ObsGroupCfg({'p': term})})
    clean = ObservationManager(env, {'g': ObsGroupCfg({'p': term}, add_noise=False)})
    noise = torch.cat([noisy.compute_group('g') - env.scene.pos_w for _ in range(20)])
    assert noise.numel() == 64 * 3 * 20
    assert noise.std().item() == pytest.approx(0.1, rel=0.1)
    assert abs(noise.mean().item()) < 0.01
    torch.testing.assert_close(clean.compute_group('g'), env.scene.pos_w, rtol=0, atol=0)


def test_env_policy_delay_of_one_tick(make_env):
    """In a real env with policy delay 1 (no jitter, no dropout), step k+1's sensor terms are
    step k's undelayed ones; the action history (delayed=False) is step k+1's own."""
    def edit(cfg):
        group = cfg.observations['policy']
        group.delay_ticks, group.jitter_prob, group.dropout_prob = (1, 1), 0.0, (0.0, 0.0)
    env = make_env(num_envs=4, play=True, edit=edit)
    # position error, rotation, linear (3 ticks) and angular velocity (4 ticks)
    sensors = 3 + 9 + 3 * 3 + 3 * 4
    actions = torch.zeros(4, 4)
    obs = env.step(actions)[0]['policy']
    for k in range(5):
        fresh = env.observations.compute_group('policy')
        actions = torch.full((4, 4), 0.01 * (k + 1))
        obs, _, terminated, truncated, _ = env.step(actions)
        alive = ~(terminated | truncated)
        assert alive.any()
        now = env.observations.compute_group('policy')
        torch.testing.assert_close(obs['policy'][alive, :sensors], fresh[alive, :sensors],
                                   rtol=0, atol=0)
        torch.testing.assert_close(obs['policy'][alive, sensors:], now[alive, sensors:],
                                   rtol=0, atol=0)
        assert not torch.equal(obs['policy'][alive, :sensors], now[alive, :sensors])


def test_interval_events_fire_on_schedule(make_env):
    """Interval 1 s stepped by 0.25 s fires at ticks 4, 8 and 12 for every env."""
    env = make_env(num_envs=3)
    fired = []
    manager = EventManager(env, {'tick': EventTermCfg(
        lambda env, ids: fired.append((tick, ids.tolist())), 'interval', interval_s=(1.0, 1.0))})
    for tick in range(1, 13):
        manager.step_intervals(0.25)
    assert fired == [(4, [0, 1, 2]), (8, [0, 1, 2]), (12, [0, 1, 2])]


def test_interval_events_respect_the_interval_range(make_env):
    """With interval U(0.5, 1.5) s and dt 0.25 s, gaps between firings are 2 to 6 ticks."""
    env = make_env(num_envs=16)
    times = {i: [0] for i in range(16)}
    manager = EventManager(env, {'tick': EventTermCfg(
        lambda env, ids: [times[i].append(tick) for i in ids.tolist()], 'interval',
        interval_s=(0.5, 1.5))})
    for tick in range(1, 41):
        manager.step_intervals(0.25)
    gaps = [b - a for t in times.values() for a, b in zip(t, t[1:])]
    assert len(gaps) >= 16 * 6          # every env fires at least every 6 ticks in 40
    assert min(gaps) >= 2 and max(gaps) <= 6
    assert len(set(gaps)) > 1           # the interval is drawn, not constant


def test_event_modes_and_reset_restarts_timers(make_env):
    """startup runs for all envs, reset only for its ids and restarts their interval timers."""
    env = make_env(num_envs=4)
    calls = []
    manager = EventManager(env, {
        'once': EventTermCfg(lambda env, ids: calls.append(('once', ids.tolist())), 'startup'),
        'each': EventTermCfg(lambda env, ids, k: calls.append(('each', ids.tolist(), k)),
                             'reset', params={'k': 7}),
        'tick': EventTermCfg(lambda env, ids: None, 'interval', interval_s=(1.0, 1.0))})
    manager.apply('startup')
    manager.step_intervals(0.25)
    manager.apply('reset', torch.tensor([1, 3]))
    assert calls == [('once', [0, 1, 2, 3]), ('each', [1, 3], 7)]
    # 1.0 - 0.25 = 0.75 left for envs 0 and 2; envs 1 and 3 restart at 1.0
    torch.testing.assert_close(manager._time_left_s['tick'], torch.tensor([0.75, 1, 0.75, 1]))


def test_unknown_event_mode_is_rejected(make_env):
    """An event with mode 'sometimes' raises ValueError naming the event and the mode."""
    env = make_env(num_envs=2)
    with pytest.raises(ValueError, match='event "bad": unknown mode "sometimes"'):
        EventManager(env, {'bad': EventTermCfg(lambda env, ids: None, 'sometimes')})


def test_jitter_makes_a_tick_one_older_and_undelayed_terms_stay_current(make_env):
    """jitter_prob 1 with no delay: the previous tick's height; a delayed=False term is
    always the current value."""
    env = make_env()
    _place(env)
    manager = ObservationManager(env, {'g': ObsGroupCfg({
        'z': ObsTermCfg(height_column),
        'now': ObsTermCfg(height_column, delayed=False)}, jitter_prob=1.0)})
    assert manager.groups['g'].max_delay_ticks == 1
    manager.reset(torch.arange(4))
    manager.compute()
    _place(env, heights=(1.5, 2.5, 3.5, 4.5))
    obs = manager.compute()['g']
    torch.testing.assert_close(obs[:, 0], torch.tensor(HEIGHTS))
    torch.testing.assert_close(obs[:, 1], torch.tensor([1.5, 2.5, 3.5, 4.5]))


def test_dropout_repeats_the_last_delivered_values(make_env):
    """Dropout probability 1: after a reset's first tick every tick repeats it; 0: never."""
    env = make_env()
    _place(env)
    always = ObservationManager(env, {'g': ObsGroupCfg({'z': ObsTermCfg(height_column)},
                                                       dropout_prob=(1.0, 1.0))})
    never = ObservationManager(env, {'g': ObsGroupCfg({'z': ObsTermCfg(height_column)},
                                                      dropout_prob=(0.0, 0.0))})
    always.reset(torch.arange(4))
    never.reset(torch.arange(4))
    always.compute()
    for heights in ((1.5, 2.5, 3.5, 4.5), (1.7, 2.7, 3.7, 4.7)):
        _place(env, heights=heights)
        torch.testing.assert_close(always.compute()['g'][:, 0], torch.tensor(HEIGHTS))
        torch.testing.assert_close(never.compute()['g'][:, 0], torch.tensor(heights))
    always.reset(torch.tensor([1]))   # a reset env delivers its current value once
    torch.testing.assert_close(always.compute()['g'][:, 0],
                               torch.tensor([1.0, 2.7, 3.0, 4.0]))


def test_dropout_rate_matches_its_probability(make_env):
    """Dropout probability 0.3 per tick: about 30 % of 64 envs x 50 ticks repeat (+-5 %)."""
    env = make_env(num_envs=64)
    manager = ObservationManager(env, {'g': ObsGroupCfg(
        {'n': ObsTermCfg(lambda env: env.scene.pos_w[:, :1], noise_std=1.0)},
        dropout_prob=(0.3, 0.3))})
    manager.reset(torch.arange(64))
    last = manager.compute()['g']
    repeats = 0
    for _ in range(50):
        obs = manager.compute()['g']
        repeats += int((obs == last).all(dim=1).sum())
        last = obs
    assert abs(repeats / (64 * 50) - 0.3) < 0.05


def test_state_saved_before_the_delay_ring_still_loads(make_env):
    """An old '_previous' state (one-tick delay) loads and delivers what it held."""
    env = make_env()
    _place(env)
    groups = {'late': ObsGroupCfg({'z': ObsTermCfg(height_column)}, delay_ticks=(1, 1))}
    manager = ObservationManager(env, groups)
    manager.reset(torch.arange(4))
    previous = torch.tensor([[7.0], [8.0], [torch.nan], [9.0]])
    manager.load_state_dict({'_delay': {'late': torch.ones(4, dtype=torch.long)},
                             '_previous': {'late': previous}})
    out = manager.compute()['late'][:, 0]
    torch.testing.assert_close(out, torch.tensor([7.0, 8.0, 3.0, 9.0]))


def test_term_history_stacks_delivered_values_newest_first(make_env):
    """z with history 3 behind a 1-tick delay: [z_t-1, z_t-2, z_t-3] as delivered, the first
    delivered value repeated until there are three; a reset env starts afresh with its
    current value; 'x' (history 1, delayed alike) stays one column; the group is 3 + 1 wide."""
    env = make_env()
    _place(env)
    manager = ObservationManager(env, {'g': ObsGroupCfg({
        'z': ObsTermCfg(height_column, history_length=3),
        'x': ObsTermCfg(lambda env: env.scene.pos_w[:, :1])}, delay_ticks=(1, 1))})
    assert manager.group_dims == {'g': 4}
    manager.reset(torch.arange(4))
    rows = [manager.compute()['g'][0].tolist()]
    for dz in (0.5, 0.7, 0.9):
        _place(env, heights=[h + dz for h in HEIGHTS], x=[dz] * 4)
        if dz == 0.9:
            manager.reset(torch.tensor([3]))
        rows.append(manager.compute()['g'].tolist())
    assert rows[0] == [1.0, 1.0, 1.0, 0.0]
    assert rows[1][0] == [1.0, 1.0, 1.0, 0.0]           # delayed: the tick before's values
    assert rows[2][0] == [1.5, 1.0, 1.0, 0.5]
    torch.testing.assert_close(torch.tensor(rows[3][0]), torch.tensor([1.7, 1.5, 1.0, 0.7]))
    torch.testing.assert_close(torch.tensor(rows[3][3]), torch.tensor([4.9, 4.9, 4.9, 0.9]))


def test_compute_group_with_history_changes_no_state(make_env):
    """compute_group (the final observation of an episode) stacks the current values on the
    history without advancing it: two calls agree and the next compute is unaffected."""
    env = make_env()
    _place(env)
    groups = {'g': ObsGroupCfg({'z': ObsTermCfg(height_column, history_length=2)})}
    manager = ObservationManager(env, groups)
    manager.reset(torch.arange(4))
    manager.compute()
    _place(env, heights=(1.5, 2.5, 3.5, 4.5))
    peek = manager.compute_group('g')
    torch.testing.assert_close(peek, manager.compute_group('g'))
    torch.testing.assert_close(peek[:, 1], torch.tensor(HEIGHTS))
    torch.testing.assert_close(manager.compute()['g'], peek)
