"""Proximal Policy Optimization with GAE and an asymmetric actor-critic.

Schulman et al. 2017, Proximal Policy Optimization Algorithms (arXiv:1707.06347), with advantages
from Schulman et al. 2016, GAE (arXiv:1506.02438), and the KL-adaptive learning rate used for
massively parallel legged-robot training (Rudin et al. 2022, arXiv:2109.11978).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from sim2real.algo_cfg import PPOCfg
from sim2real.rl import losses
from sim2real.rl.distributed import all_reduce_gradients, mean_over_ranks
from sim2real.rl.networks import ActorCritic, ExportablePolicy
from sim2real.rl.storage import RolloutStorage, Transition


class PPOExplorer:
    """The acting half of PPO that a rollout worker runs: one policy version's actor-critic
    samples actions and records what the update needs (values, log-probabilities, the
    Gaussian's mean and std), T x N steps per chunk."""

    def __init__(self, cfg: PPOCfg, policy_dim: int, critic_dim: int, num_actions: int):
        """An eval-mode actor-critic (its normalizers frozen: the learner owns them)."""
        self.net = ActorCritic(policy_dim, critic_dim, num_actions, cfg.policy).eval()
        self.gamma = cfg.gamma
        self._steps: list[dict[str, torch.Tensor]] = []

    def load(self, state: dict[str, torch.Tensor]) -> None:
        """Take the learner's network weights and normalizer statistics."""
        self.net.load_state_dict(state)

    @torch.no_grad()
    def act(self, obs: dict[str, torch.Tensor], generator: torch.Generator) -> torch.Tensor:
        """Sample actions (N, A) and remember what the update will need of this step."""
        dist = self.net.distribution(obs['policy'])
        actions = dist.mean + dist.stddev * torch.randn(
            dist.mean.shape, generator=generator, dtype=dist.mean.dtype)
        self._steps.append({
            'obs_policy': obs['policy'], 'obs_critic': obs['critic'], 'actions': actions,
            'values': self.net.value(obs['critic']),
            'log_probs': dist.log_prob(actions).sum(dim=-1),
            'action_means': dist.mean, 'action_stds': dist.stddev})
        return actions

    def observe(self, obs: dict[str, torch.Tensor], rewards: torch.Tensor,
                terminated: torch.Tensor, truncated: torch.Tensor,
                extras: dict[str, Any]) -> None:
        """Complete the last step with its outcome."""
        self._steps[-1].update(rewards=rewards.float(), terminated=terminated,
                               truncated=truncated)

    @torch.no_grad()
    def chunk(self, obs: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """The recorded steps stacked (T, N, ...) and V of the chunk's last observations."""
        steps, self._steps = self._steps, []
        out = {key: torch.stack([step[key] for step in steps]) for key in steps[0]}
        out['last_values'] = self.net.value(obs['critic'])
        return out


class PPO:
    """PPO-Clip learner that owns the actor-critic, the Adam optimizer and the rollout storage
    (an Algorithm, sim2real.rl.algorithm)."""

    name = 'ppo'
    state_keys = ('model', 'optimizer', 'learning_rate')
    log_keys = ('approx_kl', 'learning_rate')
    final_observations = False

    def __init__(
        self, num_policy_obs: int, num_critic_obs: int, num_actions: int, num_envs: int,
        cfg: PPOCfg, generator: torch.Generator | None = None,
    ) -> None:
        """Build networks, optimizer and storage; generator shuffles minibatches."""
        if cfg.schedule not in ('adaptive', 'fixed'):
            raise ValueError(f'schedule must be adaptive or fixed, got {cfg.schedule!r}')
        self.cfg = cfg
        self.actor_critic = ActorCritic(num_policy_obs, num_critic_obs, num_actions, cfg.policy)
        self.optimizer = torch.optim.Adam(self.actor_critic.parameters(), lr=cfg.learning_rate)
        self.learning_rate = cfg.learning_rate
        self.storage = RolloutStorage(
            cfg.num_steps_per_env, num_envs, num_policy_obs, num_critic_obs, num_actions
        )
        self.generator = generator if generator is not None else torch.Generator()
        self.rollout_steps = cfg.rollout_steps
        self._pending: dict[str, torch.Tensor] = {}
        self._explained_variance = float('nan')
        self.updates_done = 0
        """update() calls so far, over resumes (the critic warm-up counts them)."""

    def act(self, obs: dict[str, torch.Tensor]) -> torch.Tensor:
        """Sample actions (N, A) for the 'policy' and 'critic' observation groups."""
        return self.act_on(obs['policy'], obs['critic'])

    def process_step(self, obs: dict[str, torch.Tensor], rewards: torch.Tensor,
                     terminated: torch.Tensor, truncated: torch.Tensor,
                     extras: dict[str, Any]) -> None:
        """Store the step: an episode ends at either flag; only time-outs bootstrap."""
        self.store_step(rewards, terminated | truncated, truncated & ~terminated)

    def episodes_restarted(self) -> None:
        """Nothing spans steps outside a rollout (the storage restarts with each one)."""

    def end_rollout(self, obs: dict[str, torch.Tensor]) -> None:
        """GAE over the stored rollout, bootstrapped from the critic at obs."""
        self.compute_returns(obs['critic'])

    @property
    def network(self) -> ActorCritic:
        """Every parameter and normalizer: the checkpoint's 'model'."""
        return self.actor_critic

    @torch.no_grad()
    def ingest(self, chunks: list[dict[str, torch.Tensor]]) -> None:
        """Fill the rollout storage from rollout workers' chunks (PPOExplorer.chunk) of this
        policy version, side by side along the env axis, and compute the returns.

        The normalizers take each step's observations in order before the update, as in
        in-process collection. (Merging them only after the update, so that the update
        would run on the statistics the workers acted with, trained hover seed 0 to 0.38
        evaluated success instead of 0.996: the weights then always lagged the inputs'
        normalization by one iteration.)
        """
        if not chunks:
            raise RuntimeError('no rollout chunk to learn from')
        # (T, N, ...) per step, (N,) for last_values: side by side along the env axis
        data = {key: torch.cat([c[key] for c in chunks], dim=1 if key != 'last_values' else 0)
                for key in chunks[0]}
        steps, envs = data['rewards'].shape
        if (steps, envs) != (self.storage.num_steps, self.storage.num_envs):
            raise ValueError(f'chunks hold {steps} steps x {envs} envs; this PPO stores '
                             f'{self.storage.num_steps} x {self.storage.num_envs}')
        for t in range(steps):
            self.actor_critic.update_normalizers(data['obs_policy'][t], data['obs_critic'][t])
            timeouts = (data['truncated'][t] & ~data['terminated'][t]).float()
            self.storage.add(Transition(
                obs_policy=data['obs_policy'][t], obs_critic=data['obs_critic'][t],
                actions=data['actions'][t], values=data['values'][t],
                log_probs=data['log_probs'][t], action_means=data['action_means'][t],
                action_stds=data['action_stds'][t],
                rewards=data['rewards'][t] + self.cfg.gamma * data['values'][t] * timeouts,
                dones=(data['terminated'][t] | data['truncated'][t]).float()))
        self._returns_from(data['last_values'])

    def inference_policy(self) -> ExportablePolicy:
        """The deterministic policy (the Gaussian's mean) with its normalizer, eval mode."""
        return ExportablePolicy(self.actor_critic)

    @torch.no_grad()
    def act_on(self, obs_policy: torch.Tensor, obs_critic: torch.Tensor) -> torch.Tensor:
        """Update the normalizers with obs, sample actions (N, A), remember the step for storage.

        The normalizer statistics move during the rollout, so stored log-probabilities used
        slightly older statistics than the update will; the gap shrinks as the count grows.
        """
        ac = self.actor_critic
        ac.update_normalizers(obs_policy, obs_critic)
        dist = ac.distribution(obs_policy)
        actions = dist.sample()
        self._pending = {
            'obs_policy': obs_policy, 'obs_critic': obs_critic, 'actions': actions,
            'values': ac.value(obs_critic), 'log_probs': dist.log_prob(actions).sum(dim=-1),
            'action_means': dist.mean, 'action_stds': dist.stddev,
        }
        return actions

    @torch.no_grad()
    def store_step(
        self, rewards: torch.Tensor, dones: torch.Tensor, timeouts: torch.Tensor
    ) -> None:
        """Store the step's outcome; time-outs bootstrap with gamma * V(s_t).

        The env auto-resets, so the true final state s_{t+1} of a truncated episode is gone;
        V(s_t) stands in for V(s_{t+1}) (one step earlier, nearly the same value).
        """
        if not self._pending:
            raise RuntimeError('store_step() called without a preceding act()')
        # r_t <- r_t + gamma * V(s_t) on time-outs (episode cut, not ended)
        rewards = rewards + self.cfg.gamma * self._pending['values'] * timeouts.float()
        self.storage.add(Transition(**self._pending, rewards=rewards, dones=dones.float()))
        self._pending = {}

    @torch.no_grad()
    def compute_returns(self, last_obs_critic: torch.Tensor) -> None:
        """Compute GAE advantages and returns, bootstrapping from V(last_obs_critic)."""
        self._returns_from(self.actor_critic.value(last_obs_critic))

    def _returns_from(self, last_values: torch.Tensor) -> None:
        """GAE advantages and returns bootstrapped from last_values (N,); advantages
        standardized when configured."""
        cfg = self.cfg
        self.storage.compute_returns(last_values, cfg.gamma, cfg.lam)
        self._explained_variance = losses.explained_variance(
            self.storage.values, self.storage.returns
        )
        if cfg.normalize_advantage:
            adv = self.storage.advantages
            # A <- (A - mean(A)) / (std(A) + 1e-8)
            self.storage.advantages = (adv - adv.mean()) / (adv.std() + 1e-8)

    def adapt_learning_rate(self, kl: float) -> None:
        """Apply the KL-adaptive rule: lr / 1.5 if kl > 2 kl*, lr * 1.5 if kl < kl* / 2."""
        cfg = self.cfg
        if kl > 2.0 * cfg.desired_kl:
            self.learning_rate /= 1.5
        elif kl < 0.5 * cfg.desired_kl:
            self.learning_rate *= 1.5
        self.learning_rate = min(max(self.learning_rate, cfg.min_learning_rate),
                                 cfg.max_learning_rate)
        for group in self.optimizer.param_groups:
            group['lr'] = self.learning_rate

    def update(self) -> dict[str, float]:
        """Run the PPO epochs over the stored rollout, clear it, and return mean diagnostics."""
        cfg = self.cfg
        ac = self.actor_critic
        sums = dict.fromkeys(
            ('surrogate_loss', 'value_loss', 'entropy', 'approx_kl', 'clip_fraction'), 0.0
        )
        num_updates = 0
        critic_only = self.updates_done < cfg.critic_warmup_iterations
        batches = self.storage.minibatches(
            cfg.num_mini_batches, cfg.num_learning_epochs, self.generator
        )
        for mb in batches:
            dist = ac.distribution(mb.obs_policy)
            log_prob = dist.log_prob(mb.actions).sum(dim=-1)
            entropy = dist.entropy().sum(dim=-1).mean()
            values = ac.value(mb.obs_critic)
            with torch.no_grad():
                kl = losses.approx_kl(mb.old_means, mb.old_stds, dist.mean, dist.stddev).item()
                kl = mean_over_ranks(kl)   # every replica adapts its learning rate alike
                clipped = losses.clip_fraction(log_prob, mb.old_log_probs, cfg.clip_param).item()
            if cfg.schedule == 'adaptive' and not critic_only:
                self.adapt_learning_rate(kl)
            surrogate = losses.surrogate_loss(
                log_prob, mb.old_log_probs, mb.advantages, cfg.clip_param
            )
            value = losses.value_loss(
                values, mb.old_values, mb.returns, cfg.clip_param, cfg.use_clipped_value_loss
            )
            # L = -L^CLIP + c1 L^VF - c2 H[pi]; while the critic warms up c1 L^VF alone, so the
            # actor and its std get no gradient and Adam leaves them
            loss = cfg.value_loss_coef * value
            if not critic_only:
                loss = surrogate + loss - cfg.entropy_coef * entropy
            self.optimizer.zero_grad()
            loss.backward()
            # under torchrun: the ranks' mean (of the critic alone while it warms up: a
            # gradient of zeros would still count as an Adam step for the actor)
            all_reduce_gradients(ac.critic.parameters() if critic_only else ac.parameters())
            nn.utils.clip_grad_norm_(ac.parameters(), cfg.max_grad_norm)
            self.optimizer.step()
            num_updates += 1
            sums['surrogate_loss'] += surrogate.item()
            sums['value_loss'] += value.item()
            sums['entropy'] += entropy.item()
            sums['approx_kl'] += kl
            sums['clip_fraction'] += clipped
        self.storage.clear()
        self.updates_done += 1
        metrics = {k: v / max(num_updates, 1) for k, v in sums.items()}
        metrics['explained_variance'] = self._explained_variance
        metrics['learning_rate'] = self.learning_rate
        metrics['action_std'] = float(ac.action_std.mean())
        return metrics

    def state_dict(self) -> dict:
        """Return model, optimizer and learning rate (weights_only-loadable)."""
        return {
            'model': self.actor_critic.state_dict(),
            'optimizer': self.optimizer.state_dict(),
            'learning_rate': float(self.learning_rate),
            'updates_done': self.updates_done,
        }

    def load_state_dict(self, state: dict) -> None:
        """Restore what state_dict() returned."""
        self.actor_critic.load_state_dict(state['model'])
        self.optimizer.load_state_dict(state['optimizer'])
        self.learning_rate = float(state['learning_rate'])
        # absent before the warm-up existed: a runner checkpoint's iteration counts the same
        self.updates_done = int(state.get('updates_done', state.get('iteration', 0)))
        for group in self.optimizer.param_groups:
            group['lr'] = self.learning_rate
