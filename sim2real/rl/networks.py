"""Asymmetric Gaussian actor-critic and its exportable deterministic policy."""

from __future__ import annotations

import copy
import math

import torch
from torch import nn
from torch.distributions import Normal

from sim2real.algo_cfg import PolicyCfg
from sim2real.rl.activations import ExpELU
from sim2real.rl.normalizer import EmpiricalNormalizer

_ACTIVATIONS = {'elu': ExpELU, 'relu': nn.ReLU, 'tanh': nn.Tanh}


def build_mlp(
    in_dim: int, hidden_dims: tuple[int, ...], out_dim: int, activation: str, out_gain: float,
    layer_norm: bool = False,
) -> nn.Sequential:
    """Return an MLP with orthogonal weights (gain sqrt(2) hidden, out_gain last), zero biases;
    layer_norm: a LayerNorm after each hidden Linear, before its activation."""
    if activation not in _ACTIVATIONS:
        raise ValueError(f'activation {activation!r} is not one of {sorted(_ACTIVATIONS)}')
    layers: list[nn.Module] = []
    dims = (in_dim, *hidden_dims)
    for d_in, d_out in zip(dims[:-1], dims[1:]):
        linear = nn.Linear(d_in, d_out)
        nn.init.orthogonal_(linear.weight, gain=math.sqrt(2.0))
        nn.init.zeros_(linear.bias)
        layers += [linear, nn.LayerNorm(d_out), _ACTIVATIONS[activation]()] if layer_norm \
            else [linear, _ACTIVATIONS[activation]()]
    last = nn.Linear(dims[-1], out_dim)
    nn.init.orthogonal_(last.weight, gain=out_gain)
    nn.init.zeros_(last.bias)
    layers.append(last)
    return nn.Sequential(*layers)


class ActorCritic(nn.Module):
    """Gaussian actor on 'policy' observations, value critic on privileged 'critic' observations.

    The actor outputs the mean of a diagonal Gaussian whose log standard deviation is a learned,
    state-independent parameter. Each network owns an EmpiricalNormalizer for its input, so the
    running statistics are part of state_dict().
    """

    def __init__(
        self, num_policy_obs: int, num_critic_obs: int, num_actions: int, cfg: PolicyCfg
    ) -> None:
        """Build the actor, critic, log-std and observation normalizers."""
        super().__init__()
        if cfg.init_noise_std <= 0.0:
            raise ValueError(f'init_noise_std must be positive, got {cfg.init_noise_std}')
        self.cfg = cfg
        self.num_actions = num_actions
        self.actor = build_mlp(
            num_policy_obs, cfg.actor_hidden_dims, num_actions, cfg.activation,
            cfg.actor_output_gain,
        )
        self.critic = build_mlp(num_critic_obs, cfg.critic_hidden_dims, 1, cfg.activation, 1.0)
        self.log_std = nn.Parameter(torch.full((num_actions,), math.log(cfg.init_noise_std)))
        self.policy_normalizer = EmpiricalNormalizer(
            num_policy_obs, eps=cfg.normalizer_eps, clip=cfg.obs_clip
        )
        self.critic_normalizer = EmpiricalNormalizer(
            num_critic_obs, eps=cfg.normalizer_eps, clip=cfg.obs_clip
        )
        if not cfg.normalize_obs:
            self.policy_normalizer.freeze()
            self.critic_normalizer.freeze()

    def _normalize_policy_obs(self, obs_policy: torch.Tensor) -> torch.Tensor:
        """Apply the policy normalizer unless normalization is disabled in the config."""
        return self.policy_normalizer(obs_policy) if self.cfg.normalize_obs else obs_policy

    def _normalize_critic_obs(self, obs_critic: torch.Tensor) -> torch.Tensor:
        """Apply the critic normalizer unless normalization is disabled in the config."""
        return self.critic_normalizer(obs_critic) if self.cfg.normalize_obs else obs_critic

    def distribution(self, obs_policy: torch.Tensor) -> Normal:
        """Return the action distribution N(mu(obs), diag(sigma^2)) for (N, obs) observations."""
        mean = self.actor(self._normalize_policy_obs(obs_policy))
        std = torch.exp(self.log_std).expand_as(mean)
        return Normal(mean, std, validate_args=False)

    def act(self, obs_policy: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Sample actions (N, A) and return them with their log-probabilities (N,)."""
        dist = self.distribution(obs_policy)
        actions = dist.sample()
        return actions, dist.log_prob(actions).sum(dim=-1)

    def value(self, obs_critic: torch.Tensor) -> torch.Tensor:
        """Return the critic's state values (N,)."""
        return self.critic(self._normalize_critic_obs(obs_critic)).squeeze(-1)

    def act_inference(self, obs_policy: torch.Tensor) -> torch.Tensor:
        """Return the deterministic action, the mean of the policy (N, A)."""
        return self.actor(self._normalize_policy_obs(obs_policy))

    def update_normalizers(self, obs_policy: torch.Tensor, obs_critic: torch.Tensor) -> None:
        """Merge a batch of observations into both normalizers (no-op in eval mode or frozen)."""
        self.policy_normalizer.update(obs_policy)
        self.critic_normalizer.update(obs_critic)

    @property
    def action_std(self) -> torch.Tensor:
        """Current policy standard deviation per action dimension."""
        return torch.exp(self.log_std).detach()


def deployable_mlp(mlp: nn.Sequential) -> nn.Sequential:
    """An eval-mode deep copy of mlp whose ELUs are the standard operator (ONNX, TorchScript)."""
    out = copy.deepcopy(mlp)
    for i, layer in enumerate(out):
        if isinstance(layer, ExpELU):
            out[i] = nn.ELU()
    return out.eval()


class ExportablePolicy(nn.Module):
    """Deterministic deployment policy: forward(obs) = actor_mean(normalize(obs)).

    Holds eval-mode deep copies of the actor and its normalizer, so exporting (ONNX, TorchScript)
    neither shares nor changes the training modules and the normalizer sits inside the graph.
    """

    def __init__(self, actor_critic: ActorCritic) -> None:
        """Copy the actor and policy normalizer of actor_critic."""
        super().__init__()
        self.normalize_obs = actor_critic.cfg.normalize_obs
        self.normalizer = copy.deepcopy(actor_critic.policy_normalizer)
        self.actor = deployable_mlp(actor_critic.actor)
        self.normalizer.freeze()
        self.eval()

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        """Return the mean action for policy observations obs (N, obs_dim)."""
        if self.normalize_obs:
            obs = self.normalizer(obs)
        return self.actor(obs)
