"""The observation link of our Isaac Lab env (sim2real.isaaclab.observation_link) without
Isaac Lab: per-env draws at resets and one lag/drop decision per tick for every term; the
linked terms themselves run in the Isaac Lab stage (tests/isaaclab)."""

from types import SimpleNamespace

import pytest
import torch

from sim2real.isaaclab.observation_link import link_of, LINK_ATTR


def _env(num_envs: int = 4000):
    """The attributes of an Isaac Lab env that the link reads."""
    return SimpleNamespace(num_envs=num_envs, device='cpu')


def test_draws_stay_in_their_ranges_and_reset_only_the_given_envs():
    """Delays 0 or 1 (both drawn over 4000 envs), dropout probabilities in [0, 0.3] with
    mean 0.15 +- 0.01; a reset of envs 0-9 redraws those rows only. The ring holds the
    current tick and 2 older ones (1 tick of delay, 1 of jitter), as ours
    (ObsGroupCfg.max_delay_ticks); without jitter 1 older one."""
    torch.manual_seed(0)
    env = _env()
    link = link_of(env, (0, 1), 0.3, (0.0, 0.3))
    assert getattr(env, LINK_ATTR) is link and link.depth == 3
    assert link_of(_env(8), (0, 1), 0.0, (0.0, 0.3)).depth == 2
    assert sorted(set(link.delay.tolist())) == [0, 1]
    assert 0.0 <= float(link.drop_prob.min()) and float(link.drop_prob.max()) <= 0.3
    assert float(link.drop_prob.mean()) == pytest.approx(0.15, abs=0.01)
    before = link.drop_prob.clone()
    link.reset(torch.arange(10))
    assert torch.equal(link.drop_prob[10:], before[10:])
    assert not torch.equal(link.drop_prob[:10], before[:10])


def test_one_decision_per_tick_shared_by_every_term():
    """Two reads in one tick get the same lag and drop tensors, the next tick new ones; a lag
    is the env's delay, or one more with probability 0.3 (2 ticks for envs delayed by 1, as
    ours); drops come at the env's probability (0.3 +- 0.02 over 4000 envs at p = 0.3)."""
    torch.manual_seed(1)
    env = _env()
    link = link_of(env, (0, 1), 0.3, (0.3, 0.3))
    lag, dropped = link.decide(5)
    assert link.decide(5)[0] is lag and link.decide(5)[1] is dropped
    assert int(lag.max()) == 2 and bool((lag >= link.delay).all())
    for delay in (0, 1):
        late = (lag > link.delay)[link.delay == delay].float().mean()
        assert float(late) == pytest.approx(0.3, abs=0.03)
    assert float(dropped.float().mean()) == pytest.approx(0.3, abs=0.02)
    assert link.decide(6)[0] is not lag


def test_terms_with_another_link_are_refused():
    """Every linked term of an env passes the same ranges: a second range is an error."""
    env = _env(8)
    link_of(env, (0, 1), 0.3, (0.0, 0.3))
    with pytest.raises(ValueError, match='different links'):
        link_of(env, (0, 2), 0.3, (0.0, 0.3))
