"""Tests of RolloutStorage and the PPO learner's bookkeeping."""

import math

import pytest
import torch

from sim2real.rl import PPO, PolicyCfg, PPOCfg, RolloutStorage
from sim2real.rl.storage import Transition

STEPS, ENVS, POLICY_OBS, CRITIC_OBS, ACTIONS = 4, 3, 2, 3, 1


def filled_storage():
    """Return a storage whose step t, env n holds obs_policy = 10 t + n in every feature."""
    storage = RolloutStorage(STEPS, ENVS, POLICY_OBS, CRITIC_OBS, ACTIONS)
    for t in range(STEPS):
        ids = 10.0 * t + torch.arange(ENVS, dtype=torch.float32)
        storage.add(Transition(
            obs_policy=ids[:, None].expand(ENVS, POLICY_OBS), obs_critic=torch.zeros(ENVS, 3),
            actions=torch.zeros(ENVS, 1), values=torch.zeros(ENVS), log_probs=torch.zeros(ENVS),
            action_means=torch.zeros(ENVS, 1), action_stds=torch.ones(ENVS, 1),
            rewards=torch.ones(ENVS), dones=torch.zeros(ENVS),
        ))
    storage.compute_returns(torch.zeros(ENVS), gamma=0.99, lam=0.95)
    return storage


def test_each_epoch_visits_every_sample_once():
    """Per epoch the minibatches partition the T*N samples, each of size T*N / M."""
    storage = filled_storage()
    batches = list(storage.minibatches(3, 2, torch.Generator().manual_seed(0)))
    assert len(batches) == 6
    for epoch in (batches[:3], batches[3:]):
        seen = torch.cat([mb.obs_policy[:, 0] for mb in epoch])
        assert all(mb.obs_policy.shape == (4, POLICY_OBS) for mb in epoch)
        assert sorted(seen.tolist()) == sorted(storage.obs_policy[:, :, 0].flatten().tolist())


def test_shuffling_is_reproducible_from_the_generator():
    """The same generator seed yields the same minibatch order; another seed a different one."""
    def order(seed):
        """Return the sample ids in minibatch order for a generator seeded with seed."""
        storage = filled_storage()
        gen = torch.Generator().manual_seed(seed)
        return [mb.obs_policy[:, 0].tolist() for mb in storage.minibatches(2, 2, gen)]

    assert order(3) == order(3)
    assert order(3) != order(4)


def test_storage_refuses_overfilling_and_incomplete_rollouts():
    """add() past T steps and compute_returns() before T steps raise RuntimeError."""
    storage = filled_storage()
    with pytest.raises(RuntimeError):
        storage.add(None)
    storage.clear()
    with pytest.raises(RuntimeError):
        storage.compute_returns(torch.zeros(ENVS), 0.99, 0.95)


def make_ppo(**overrides):
    """Return a tiny PPO learner for STEPS x ENVS rollouts."""
    cfg = PPOCfg(num_steps_per_env=STEPS, num_mini_batches=2, num_learning_epochs=2,
                 policy=PolicyCfg(actor_hidden_dims=(8,), critic_hidden_dims=(8,)), **overrides)
    torch.manual_seed(0)
    return PPO(POLICY_OBS, CRITIC_OBS, ACTIONS, ENVS, cfg, torch.Generator().manual_seed(0))


def test_timeouts_bootstrap_with_discounted_value():
    """A time-out adds gamma * V(s_t) to the stored reward; a termination adds nothing."""
    ppo = make_ppo(gamma=0.9)
    obs_critic = torch.randn(ENVS, CRITIC_OBS)
    ppo.act_on(torch.randn(ENVS, POLICY_OBS), obs_critic)
    values = ppo.actor_critic.value(obs_critic).detach()
    timeouts = torch.tensor([True, False, False])
    dones = torch.tensor([True, True, False])
    ppo.store_step(torch.ones(ENVS), dones, timeouts)
    expected = torch.ones(ENVS) + 0.9 * values * timeouts.float()
    torch.testing.assert_close(ppo.storage.rewards[0], expected)
    torch.testing.assert_close(ppo.storage.dones[0], dones.float())


def test_adaptive_learning_rate_rule():
    """lr / 1.5 when KL > 2 KL*, lr * 1.5 when KL < KL* / 2, unchanged between, clamped."""
    ppo = make_ppo(learning_rate=1e-3, desired_kl=0.01)
    ppo.adapt_learning_rate(0.03)
    assert math.isclose(ppo.learning_rate, 1e-3 / 1.5)
    ppo.adapt_learning_rate(0.01)
    assert math.isclose(ppo.learning_rate, 1e-3 / 1.5)
    ppo.adapt_learning_rate(0.001)
    assert math.isclose(ppo.learning_rate, 1e-3)
    assert ppo.optimizer.param_groups[0]['lr'] == ppo.learning_rate
    for _ in range(50):
        ppo.adapt_learning_rate(1.0)
    assert ppo.learning_rate == 1e-5
    for _ in range(50):
        ppo.adapt_learning_rate(0.0)
    assert ppo.learning_rate == 1e-2


@pytest.mark.parametrize('schedule', ['adaptive', 'fixed'])
def test_update_reports_all_diagnostics_and_clears_storage(schedule):
    """update() returns finite diagnostics, leaves a fixed lr alone and empties the storage."""
    ppo = make_ppo(schedule=schedule)
    for _ in range(STEPS):
        ppo.act_on(torch.randn(ENVS, POLICY_OBS), torch.randn(ENVS, CRITIC_OBS))
        ppo.store_step(torch.randn(ENVS), torch.zeros(ENVS, dtype=torch.bool),
                       torch.zeros(ENVS, dtype=torch.bool))
    ppo.compute_returns(torch.randn(ENVS, CRITIC_OBS))
    metrics = ppo.update()
    assert set(metrics) == {'surrogate_loss', 'value_loss', 'entropy', 'approx_kl',
                            'clip_fraction', 'explained_variance', 'learning_rate', 'action_std'}
    assert all(math.isfinite(v) for v in metrics.values()), metrics
    if schedule == 'fixed':
        assert metrics['learning_rate'] == ppo.cfg.learning_rate
    assert ppo.storage.step == 0
    assert int(ppo.actor_critic.policy_normalizer.count) == STEPS * ENVS


def test_unknown_schedule_is_rejected():
    """A misspelled schedule fails at construction."""
    with pytest.raises(ValueError, match='schedule'):
        make_ppo(schedule='adaptiv')


def _rollout_and_update(ppo):
    """One random rollout of STEPS x ENVS, then update(); returns its metrics."""
    for _ in range(STEPS):
        ppo.act_on(torch.randn(ENVS, POLICY_OBS), torch.randn(ENVS, CRITIC_OBS))
        ppo.store_step(torch.randn(ENVS), torch.zeros(ENVS, dtype=torch.bool),
                       torch.zeros(ENVS, dtype=torch.bool))
    ppo.compute_returns(torch.randn(ENVS, CRITIC_OBS))
    return ppo.update()


def _params(ppo, prefix):
    """A copy of ppo's parameters whose names start with prefix, flattened into one."""
    return torch.cat([v.detach().flatten().clone()
                      for k, v in ppo.actor_critic.named_parameters() if k.startswith(prefix)])


def test_critic_warmup_trains_the_critic_alone_then_both():
    """With critic_warmup_iterations=2 the first two updates move the critic and leave the
    actor, its std and the adaptive learning rate as they were; the third moves the actor.
    The count travels with state_dict(), so a resumed run does not warm up again."""
    ppo = make_ppo(critic_warmup_iterations=2, learning_rate=1e-3)
    actor, log_std = _params(ppo, 'actor.'), _params(ppo, 'log_std')
    critic = _params(ppo, 'critic.')
    for _ in range(2):
        _rollout_and_update(ppo)
    assert torch.equal(_params(ppo, 'actor.'), actor)
    assert torch.equal(_params(ppo, 'log_std'), log_std)
    assert (_params(ppo, 'critic.') - critic).abs().max() > 1e-4
    assert ppo.learning_rate == 1e-3 and ppo.updates_done == 2
    state = ppo.state_dict()
    _rollout_and_update(ppo)
    assert (_params(ppo, 'actor.') - actor).abs().max() > 1e-5
    resumed = make_ppo(critic_warmup_iterations=2)
    resumed.load_state_dict(state)
    assert resumed.updates_done == 2
    before = _params(resumed, 'actor.')
    _rollout_and_update(resumed)
    assert (_params(resumed, 'actor.') - before).abs().max() > 1e-5


def test_a_negative_critic_warmup_is_rejected():
    """critic_warmup_iterations counts updates: below 0 fails at construction."""
    with pytest.raises(ValueError, match='critic_warmup_iterations'):
        make_ppo(critic_warmup_iterations=-1)


def test_critic_warmup_keeps_adam_off_the_actor_under_torchrun(monkeypatch):
    """torchrun's gradient all-reduce counts a missing gradient as zeros; during the warm-up
    it must see the critic alone, or Adam would count steps for the actor that it never took
    (and its first real steps would come out too large). Simulated in one process with an
    all-reduce that fills missing gradients as the real one does."""
    import sim2real.rl.ppo as ppo_module

    def fill_missing(params):
        """What distributed.all_reduce_gradients does to a parameter without a gradient."""
        for p in params:
            if p.grad is None:
                p.grad = torch.zeros_like(p)
    monkeypatch.setattr(ppo_module, 'all_reduce_gradients', fill_missing)
    ppo = make_ppo(critic_warmup_iterations=2)
    for _ in range(2):
        _rollout_and_update(ppo)
    stepped = {n for n, p in ppo.actor_critic.named_parameters() if p in ppo.optimizer.state}
    assert stepped and all(n.startswith('critic.') for n in stepped), stepped
