"""Soft Actor-Critic for many parallel envs, with an asymmetric (privileged) critic.

Haarnoja et al. 2018, Soft Actor-Critic Algorithms and Applications (arXiv:1812.05905). The
actor sees the 'policy' observations, the twin critics the 'critic' ones; both are normalized
by running statistics that the exported policy carries. Choices for thousands of envs are in
SACCfg's docstring.
"""

from __future__ import annotations

import copy
import logging
import math
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from sim2real.algo_cfg import SACCfg
from sim2real.rl.distributed import all_reduce_gradients
from sim2real.rl.networks import build_mlp, deployable_mlp
from sim2real.rl.normalizer import EmpiricalNormalizer
from sim2real.rl.replay import FIELDS, NStepWindow, ReplayBuffer, Transitions

log = logging.getLogger(__name__)


class SACModel(nn.Module):
    """Actor, twin critics, their targets, the temperature and the observation normalizers."""

    def __init__(self, policy_dim: int, critic_dim: int, num_actions: int, cfg: SACCfg):
        """Build the networks; the actor's outputs are (mean, log std) of the pre-tanh
        Gaussian, its std starting near cfg.policy.init_noise_std."""
        super().__init__()
        pcfg = cfg.policy
        self.num_actions = num_actions
        self.action_bound = cfg.action_bound
        self.log_std_range = tuple(cfg.log_std_range)
        self.normalize_obs = pcfg.normalize_obs
        self.actor = build_mlp(policy_dim, pcfg.actor_hidden_dims, 2 * num_actions,
                               pcfg.activation, pcfg.actor_output_gain)
        with torch.no_grad():
            self.actor[-1].bias[num_actions:] = math.log(pcfg.init_noise_std)
        outputs = max(cfg.critic_atoms, 1)   # atoms' logits, or the scalar Q
        self.critics = nn.ModuleList(
            build_mlp(critic_dim + num_actions, pcfg.critic_hidden_dims, outputs,
                      pcfg.activation, 1.0, layer_norm=cfg.critic_layer_norm)
            for _ in range(2))
        self.distributional = cfg.critic_atoms > 1
        self.register_buffer('support', torch.linspace(cfg.q_min, cfg.q_max, outputs),
                             persistent=False)   # from the config, not the checkpoint
        self.targets = copy.deepcopy(self.critics).requires_grad_(False)
        self.log_alpha = nn.Parameter(torch.tensor(math.log(cfg.init_alpha)))
        self.policy_normalizer = EmpiricalNormalizer(policy_dim, pcfg.normalizer_eps,
                                                     pcfg.obs_clip)
        self.critic_normalizer = EmpiricalNormalizer(critic_dim, pcfg.normalizer_eps,
                                                     pcfg.obs_clip)

    def norm_policy(self, obs: torch.Tensor) -> torch.Tensor:
        """Normalized policy observations (unchanged when normalization is off)."""
        return self.policy_normalizer(obs) if self.normalize_obs else obs

    def norm_critic(self, obs: torch.Tensor) -> torch.Tensor:
        """Normalized critic observations (unchanged when normalization is off)."""
        return self.critic_normalizer(obs) if self.normalize_obs else obs

    def sample(self, obs_policy: torch.Tensor, generator: torch.Generator | None = None,
               ) -> tuple[torch.Tensor, torch.Tensor]:
        """Squashed Gaussian actions (N, A) in action units and their log-densities (N,)."""
        out = self.actor(self.norm_policy(obs_policy))
        mean, log_std = out[:, :self.num_actions], out[:, self.num_actions:]
        log_std = log_std.clamp(*self.log_std_range)
        noise = torch.randn(mean.shape, generator=generator, device=mean.device,
                            dtype=mean.dtype)
        u = mean + log_std.exp() * noise
        # log pi(a) = log N(u) - sum log(b (1 - tanh(u)^2)); 1 - tanh^2 = 4 / (e^u + e^-u)^2
        log_n = (-0.5 * noise.pow(2) - log_std - 0.5 * math.log(2 * math.pi)).sum(-1)
        log_jac = (2.0 * (math.log(2.0) - u - F.softplus(-2.0 * u))).sum(-1)
        log_prob = log_n - log_jac - self.num_actions * math.log(self.action_bound)
        return self.action_bound * torch.tanh(u), log_prob

    def critic_outputs(self, critics: nn.ModuleList, obs_critic: torch.Tensor,
                       actions: torch.Tensor) -> torch.Tensor:
        """Each critic's output (2, N, K) for raw critic obs and actions: the atoms' logits
        of a distributional critic, Q itself (K = 1) of a scalar one."""
        x = torch.cat([self.norm_critic(obs_critic), actions / self.action_bound], dim=-1)
        return torch.stack([q(x) for q in critics])

    def expected(self, outputs: torch.Tensor) -> torch.Tensor:
        """Q (2, N) of critic outputs: the mean of the atoms' distribution, or Q itself."""
        if not self.distributional:
            return outputs.squeeze(-1)
        return (outputs.softmax(-1) * self.support).sum(-1)

    def q_values(self, critics: nn.ModuleList, obs_critic: torch.Tensor,
                 actions: torch.Tensor) -> torch.Tensor:
        """Q of each critic (2, N) for raw critic obs and actions."""
        return self.expected(self.critic_outputs(critics, obs_critic, actions))


class SquashedPolicy(nn.Module):
    """Deterministic deployment policy: bound * tanh(mean(normalize(obs)))."""

    def __init__(self, model: SACModel) -> None:
        """Copy the actor and its normalizer out of a SAC model (eval mode)."""
        super().__init__()
        self.normalize_obs = model.normalize_obs
        self.normalizer = copy.deepcopy(model.policy_normalizer)
        self.normalizer.freeze()
        self.actor = deployable_mlp(model.actor)
        self.num_actions = model.num_actions
        self.action_bound = model.action_bound
        self.eval()

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        """The mean action, squashed, for policy observations obs (N, D)."""
        if self.normalize_obs:
            obs = self.normalizer(obs)
        return self.action_bound * torch.tanh(self.actor(obs)[:, :self.num_actions])


class SACExplorer:
    """The acting half of SAC that a rollout worker runs: one policy version's actor samples
    actions; the worker's own n-step window turns its steps into replay transitions (it
    spans chunks, so no transition is cut at a chunk's end)."""

    def __init__(self, cfg: SACCfg, policy_dim: int, critic_dim: int, num_actions: int):
        """An eval-mode SAC model (only its actor and normalizers are used)."""
        self.model = SACModel(policy_dim, critic_dim, num_actions, cfg).eval()
        self.window = NStepWindow(cfg.n_step, cfg.gamma)
        self._done: list[Transitions] = []
        self._pending: dict[str, torch.Tensor] = {}

    def load(self, state: dict[str, torch.Tensor]) -> None:
        """Take the learner's model weights and normalizer statistics."""
        self.model.load_state_dict(state)

    @torch.no_grad()
    def act(self, obs: dict[str, torch.Tensor], generator: torch.Generator) -> torch.Tensor:
        """Squashed Gaussian actions (N, A)."""
        actions, _ = self.model.sample(obs['policy'], generator)
        self._pending = {'obs_policy': obs['policy'], 'obs_critic': obs['critic'],
                         'actions': actions}
        return actions

    def observe(self, obs: dict[str, torch.Tensor], rewards: torch.Tensor,
                terminated: torch.Tensor, truncated: torch.Tensor,
                extras: dict[str, Any]) -> None:
        """Push the step into the n-step window (an ended episode bootstraps from its last
        observations, extras['final_obs_groups'])."""
        done = push_step(self.window, self._pending, obs, rewards, terminated, truncated,
                         extras)
        if done is not None:
            self._done.append(done)

    def chunk(self, obs: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """The n-step transitions completed since the last chunk, flat (B, ...); empty while
        the window fills."""
        done, self._done = self._done, []
        if not done:
            return {}
        return {name: torch.cat([getattr(t, name) for t in done]) for name in FIELDS}


def push_step(window: NStepWindow, pending: dict[str, torch.Tensor],
              obs: dict[str, torch.Tensor], rewards: torch.Tensor, terminated: torch.Tensor,
              truncated: torch.Tensor, extras: dict[str, Any]) -> Transitions | None:
    """Push one acted step and its outcome into an n-step window; what it completes."""
    if not pending:
        raise RuntimeError('a step was recorded without a preceding act()')
    done = terminated | truncated
    next_policy, next_critic = obs['policy'], obs['critic']
    final = extras.get('final_obs_groups')
    if final is not None:
        mask = done[:, None]
        next_policy = torch.where(mask, final['policy'], next_policy)
        next_critic = torch.where(mask, final['critic'], next_critic)
    elif bool(done.any()):
        raise RuntimeError('an episode ended without its final observations: the env '
                           'must report extras["final_obs_groups"]')
    return window.push({**pending, 'rewards': rewards.float(), 'terminated': terminated,
                        'done': done, 'next_policy': next_policy, 'next_critic': next_critic})


class SAC:
    """SAC learner owning the model, its optimizers and the replay buffer (an Algorithm)."""

    name = 'sac'
    state_keys = ('model', 'actor_optimizer', 'critic_optimizer', 'alpha_optimizer')
    log_keys = ('critic_loss', 'alpha', 'entropy')
    final_observations = True

    def __init__(self, policy_dim: int, critic_dim: int, num_actions: int, num_envs: int,
                 cfg: SACCfg, generator: torch.Generator | None = None) -> None:
        """Networks, optimizers and a replay buffer on the default device."""
        self.cfg = cfg
        self.num_envs = num_envs
        self.rollout_steps = cfg.rollout_steps
        self.model = SACModel(policy_dim, critic_dim, num_actions, cfg)
        self.generator = generator if generator is not None else torch.Generator()
        model = self.model
        # fused: one kernel per parameter group (6 % of a gradient step on a 2-core CPU)
        self.actor_optimizer = torch.optim.Adam(model.actor.parameters(),
                                                lr=cfg.actor_learning_rate, fused=True)
        self.critic_optimizer = torch.optim.Adam(model.critics.parameters(),
                                                 lr=cfg.critic_learning_rate, fused=True)
        self.alpha_optimizer = torch.optim.Adam([model.log_alpha], lr=cfg.alpha_learning_rate,
                                                fused=True)
        self.target_entropy = cfg.target_entropy_per_action * num_actions
        device = model.log_alpha.device
        self.buffer = ReplayBuffer(cfg.buffer_size, policy_dim, critic_dim, num_actions,
                                   device)
        self.window = NStepWindow(cfg.n_step, cfg.gamma)
        self.gradient_steps = 0
        self._pending: dict[str, torch.Tensor] = {}

    @torch.no_grad()
    def act(self, obs: dict[str, torch.Tensor]) -> torch.Tensor:
        """Update the normalizers with obs; sample squashed actions (N, A)."""
        model = self.model
        if model.normalize_obs:
            model.policy_normalizer.update(obs['policy'])
            model.critic_normalizer.update(obs['critic'])
        actions, _ = model.sample(obs['policy'], self.generator)
        self._pending = {'obs_policy': obs['policy'], 'obs_critic': obs['critic'],
                         'actions': actions}
        return actions

    @torch.no_grad()
    def process_step(self, obs: dict[str, torch.Tensor], rewards: torch.Tensor,
                     terminated: torch.Tensor, truncated: torch.Tensor,
                     extras: dict[str, Any]) -> None:
        """Push the step into the n-step window and what it completes into the buffer; an
        ended episode's next observations are its last ones (extras['final_obs_groups'])."""
        done = push_step(self.window, self._pending, obs, rewards, terminated, truncated,
                         extras)
        if done is not None:
            self.buffer.add(done)
        self._pending = {}

    def episodes_restarted(self) -> None:
        """Drop the n-step window's steps: they would chain rewards across the reset."""
        self.window.clear()
        self._pending = {}

    def end_rollout(self, obs: dict[str, torch.Tensor]) -> None:
        """Nothing to close: transitions went to the buffer as they completed."""

    @torch.no_grad()
    def ingest(self, chunks: list[dict[str, torch.Tensor]]) -> None:
        """Add rollout workers' transitions (SACExplorer.chunk) to the replay buffer; the
        normalizers take their observations."""
        for chunk in chunks:
            if not chunk:   # a worker's window was still filling
                continue
            if self.model.normalize_obs:
                self.model.policy_normalizer.update(chunk['obs_policy'])
                self.model.critic_normalizer.update(chunk['obs_critic'])
            self.buffer.add(Transitions(**chunk))

    def update(self) -> dict[str, float]:
        """updates_per_iteration gradient steps once learning_starts transitions are held."""
        cfg = self.cfg
        metrics = {'buffer_size': float(self.buffer.size)}
        if self.buffer.added < max(cfg.learning_starts, 1):
            return metrics
        sums: dict[str, float] = {}
        counts: dict[str, int] = {}
        for _ in range(cfg.updates_per_iteration):
            for key, value in self._gradient_step(self.buffer.sample(cfg.batch_size,
                                                                     self.generator)).items():
                sums[key] = sums.get(key, 0.0) + value
                counts[key] = counts.get(key, 0) + 1   # actor metrics: on actor steps only
        metrics.update({k: v / counts[k] for k, v in sums.items()})
        metrics['alpha'] = self.model.log_alpha.exp().item()
        return metrics

    def _gradient_step(self, batch: Transitions) -> dict[str, float]:
        """One critic step, and every actor_update_interval an actor and temperature step."""
        cfg, model = self.cfg, self.model
        alpha = model.log_alpha.exp().detach()
        if model.distributional:
            critic_loss, q = self._distributional_loss(batch, alpha)
        else:
            with torch.no_grad():
                # y = R + gamma^n (1 - d) (min_i Q'_i(s', a') - alpha log pi(a'|s'))
                next_actions, next_log_prob = model.sample(batch.next_policy, self.generator)
                target_q = model.q_values(model.targets, batch.next_critic,
                                          next_actions).min(0)[0]
                target = batch.returns + batch.discounts * (target_q - alpha * next_log_prob)
            q = model.q_values(model.critics, batch.obs_critic, batch.actions)
            critic_loss = 0.5 * (q - target).pow(2).mean(1).sum()
        self.critic_optimizer.zero_grad()
        critic_loss.backward()
        all_reduce_gradients(model.critics.parameters())   # under torchrun: the ranks' mean
        nn.utils.clip_grad_norm_(model.critics.parameters(), cfg.max_grad_norm)
        self.critic_optimizer.step()
        self.gradient_steps += 1
        out = {'critic_loss': critic_loss.item(), 'q_mean': q.mean().item()}
        if self.gradient_steps % cfg.actor_update_interval == 0:
            out.update(self._actor_step(batch, alpha))
        self._polyak()
        return out

    def _distributional_loss(self, batch: Transitions, alpha: torch.Tensor,
                             ) -> tuple[torch.Tensor, torch.Tensor]:
        """C51's cross-entropy of both critics against the projected soft target
        distribution, and the critics' Q (2, B)."""
        model = self.model
        with torch.no_grad():
            next_actions, next_log_prob = model.sample(batch.next_policy, self.generator)
            logits = model.critic_outputs(model.targets, batch.next_critic, next_actions)
            probs = logits.softmax(-1)   # (2, B, K)
            lower = (probs * model.support).sum(-1).argmin(0)   # clipped double-Q
            chosen = probs[lower, torch.arange(probs.shape[1], device=probs.device)]
            # atoms z_j move to R + gamma^n (1 - d) (z_j - alpha log pi(a'|s'))
            moved = batch.returns[:, None] + batch.discounts[:, None] * (
                model.support[None, :] - alpha * next_log_prob[:, None])
            target = project_onto_support(moved, chosen, model.support)
        outputs = model.critic_outputs(model.critics, batch.obs_critic, batch.actions)
        loss = -(target * outputs.log_softmax(-1)).sum(-1).mean(1).sum()
        return loss, model.expected(outputs.detach())

    def _actor_step(self, batch: Transitions, alpha: torch.Tensor) -> dict[str, float]:
        """Minimize E[alpha log pi(a|s) - min_i Q_i(s, a)], then fit the temperature."""
        model, cfg = self.model, self.cfg
        model.critics.requires_grad_(False)
        actions, log_prob = model.sample(batch.obs_policy, self.generator)
        q = model.q_values(model.critics, batch.obs_critic, actions).min(0)[0]
        actor_loss = (alpha * log_prob - q).mean()
        self.actor_optimizer.zero_grad()
        actor_loss.backward()
        all_reduce_gradients(model.actor.parameters())
        nn.utils.clip_grad_norm_(model.actor.parameters(), cfg.max_grad_norm)
        self.actor_optimizer.step()
        model.critics.requires_grad_(True)
        # J(alpha) = E[-alpha (log pi + H_target)]
        alpha_loss = -(model.log_alpha * (log_prob.detach() + self.target_entropy)).mean()
        self.alpha_optimizer.zero_grad()
        alpha_loss.backward()
        all_reduce_gradients([model.log_alpha])
        self.alpha_optimizer.step()
        return {'actor_loss': actor_loss.item(), 'entropy': -log_prob.mean().item()}

    @torch.no_grad()
    def _polyak(self) -> None:
        """theta' <- tau theta + (1 - tau) theta'."""
        online = list(self.model.critics.parameters())
        target = list(self.model.targets.parameters())
        torch._foreach_lerp_(target, online, self.cfg.tau)

    def state_dict(self) -> dict:
        """Model (normalizers and temperature inside) and the three optimizers; the replay
        buffer is not saved (up to GBs): a resumed run refills it before learning on."""
        return {'model': self.model.state_dict(),
                'actor_optimizer': self.actor_optimizer.state_dict(),
                'critic_optimizer': self.critic_optimizer.state_dict(),
                'alpha_optimizer': self.alpha_optimizer.state_dict(),
                'gradient_steps': self.gradient_steps}

    def load_state_dict(self, state: dict) -> None:
        """Restore what state_dict() returned; the replay buffer starts empty."""
        self.model.load_state_dict(state['model'])
        self.actor_optimizer.load_state_dict(state['actor_optimizer'])
        self.critic_optimizer.load_state_dict(state['critic_optimizer'])
        self.alpha_optimizer.load_state_dict(state['alpha_optimizer'])
        self.gradient_steps = int(state.get('gradient_steps', 0))
        self.window.clear()
        log.warning('SAC checkpoints hold no replay buffer: it refills with %d transitions '
                    '(sac.learning_starts) before learning goes on', self.cfg.learning_starts)

    @property
    def network(self) -> SACModel:
        """Every parameter and normalizer: the checkpoint's 'model'."""
        return self.model

    def inference_policy(self) -> SquashedPolicy:
        """The deterministic squashed policy with its normalizer, eval mode."""
        return SquashedPolicy(self.model)


def project_onto_support(atoms: torch.Tensor, probs: torch.Tensor,
                         support: torch.Tensor) -> torch.Tensor:
    """The categorical distribution on support (K,) nearest to probs (B, K) placed at atoms
    (B, K): each mass split between the two neighbouring support points in proportion to
    its distance, clamped to the support's ends (C51's projection)."""
    k = support.shape[0]
    delta = (support[-1] - support[0]) / (k - 1)
    b = ((atoms.clamp(support[0], support[-1]) - support[0]) / delta).clamp(0, k - 1)
    low, high = b.floor().long(), b.ceil().long()
    to_high = b - low.to(b.dtype)   # 0 where b is on a support point: all mass to low
    out = torch.zeros_like(probs)
    out.scatter_add_(1, low, probs * (1.0 - to_high))
    out.scatter_add_(1, high, probs * to_high)
    return out
