"""Typed training configs: data only, so tasks declare their defaults without importing `rl`.

`rl` implements what these describe; `tasks` fill them in; `training` resolves them with the
command line's overrides (`sim2real.overrides`) and stores the result with the run.
"""

from __future__ import annotations

from dataclasses import dataclass, field

ALGORITHMS = ('ppo', 'sac')
"""Algorithms `sim2real train` runs."""
ACTIVATIONS = ('elu', 'relu', 'tanh')
"""Hidden activations the networks know (sim2real.rl.networks)."""


@dataclass
class PolicyCfg:
    """Architecture of the actor-critic networks."""

    actor_hidden_dims: tuple[int, ...] = (128, 128)
    """Hidden layer widths of the actor MLP."""
    critic_hidden_dims: tuple[int, ...] = (128, 128)
    """Hidden layer widths of the critic MLP."""
    activation: str = 'elu'
    """Hidden activation: 'elu', 'relu' or 'tanh'."""
    init_noise_std: float = 1.0
    """Initial standard deviation of the Gaussian policy, in action units."""
    actor_output_gain: float = 0.01
    """Orthogonal-init gain of the actor's last layer (small: initial mean actions near 0)."""
    normalize_obs: bool = True
    """Normalize policy and critic observations with running statistics."""
    obs_clip: float = 5.0
    """Normalized observations are clipped to [-obs_clip, obs_clip] (in standard deviations)."""
    normalizer_eps: float = 1e-4
    """Added to the running variance before the square root."""

    def __post_init__(self):
        """Known activation, non-empty positive widths, positive noise and clip."""
        if self.activation not in ACTIVATIONS:
            raise ValueError(f'activation "{self.activation}" is not one of {ACTIVATIONS}')
        for name in ('actor_hidden_dims', 'critic_hidden_dims'):
            dims = tuple(getattr(self, name))
            if not dims or min(dims) < 1:
                raise ValueError(f'{name} must be one or more widths >= 1, got {dims}')
        _positive(self, 'init_noise_std', 'obs_clip', 'normalizer_eps')


@dataclass
class PPOCfg:
    """Hyper-parameters of PPO (symbols as in the papers)."""

    num_steps_per_env: int = 24
    """Rollout length T per environment and iteration, in env steps."""
    num_learning_epochs: int = 5
    """Passes over the rollout per update (K in the PPO paper)."""
    num_mini_batches: int = 4
    """Minibatches per epoch; minibatch size is T * N / num_mini_batches."""
    clip_param: float = 0.2
    """Ratio clip epsilon of L^CLIP, also the value clip range."""
    gamma: float = 0.99
    """Discount factor per env step."""
    lam: float = 0.95
    """GAE lambda."""
    value_loss_coef: float = 1.0
    """Weight c1 of the value loss."""
    entropy_coef: float = 0.005
    """Weight c2 of the entropy bonus."""
    learning_rate: float = 1e-3
    """Initial Adam learning rate."""
    max_grad_norm: float = 1.0
    """Global gradient-norm clip."""
    use_clipped_value_loss: bool = True
    """Clip the value prediction around its rollout value, as in the PPO reference code."""
    schedule: str = 'adaptive'
    """'adaptive' (KL-driven learning rate) or 'fixed'."""
    desired_kl: float = 0.01
    """Target KL(pi_old || pi) per minibatch for the adaptive schedule."""
    min_learning_rate: float = 1e-5
    """Lower clamp of the adaptive learning rate."""
    max_learning_rate: float = 1e-2
    """Upper clamp of the adaptive learning rate."""
    normalize_advantage: bool = True
    """Standardize advantages over the whole rollout before the update."""
    critic_warmup_iterations: int = 0
    """Updates at the start of a run that train the critic alone: the actor, its std and
    the learning rate stay as they are. For a policy started from another run (`--init-from`)
    with a fresh critic, whose first advantages are noise."""
    policy: PolicyCfg = field(default_factory=PolicyCfg)
    """Actor-critic architecture."""

    @property
    def rollout_steps(self) -> int:
        """Env steps per env between updates (T)."""
        return self.num_steps_per_env

    def __post_init__(self):
        """Known schedule; positive sizes and rates; gamma and lambda in [0, 1]."""
        if self.schedule not in ('adaptive', 'fixed'):
            raise ValueError(f'schedule "{self.schedule}" is not adaptive or fixed')
        _positive(self, 'num_steps_per_env', 'num_learning_epochs', 'num_mini_batches',
                  'clip_param', 'learning_rate', 'max_grad_norm', 'desired_kl',
                  'min_learning_rate', 'max_learning_rate')
        _unit(self, 'gamma', 'lam')
        if self.critic_warmup_iterations < 0:
            raise ValueError('critic_warmup_iterations must be >= 0, got '
                             f'{self.critic_warmup_iterations}')


@dataclass
class SACCfg:
    """Hyper-parameters of Soft Actor-Critic for thousands of parallel envs.

    Haarnoja et al. 2018, Soft Actor-Critic Algorithms and Applications (arXiv:1812.05905):
    twin critics with clipped double-Q targets, a tanh-squashed Gaussian actor, automatic
    entropy temperature. From the massively parallel off-policy work: large batches and
    several updates per env step (FastTD3, Seo et al. 2025, arXiv:2505.22642), LayerNorm in
    the critics, n-step returns and time-outs bootstrapped from the true last observation
    (RSL-RL-SAC, Sabatini et al. 2026, arXiv:2605.24975).
    """

    steps_per_env: int = 1
    """Env steps per env between updates (T): one iteration adds T x N transitions."""
    updates_per_iteration: int = 2
    """Gradient steps per iteration (U)."""
    batch_size: int = 4096
    """Transitions per gradient step."""
    buffer_size: int = 1_000_000
    """Replay capacity [transitions], on the learner's device."""
    learning_starts: int = 20_000
    """Transitions collected before the first gradient step."""
    gamma: float = 0.99
    """Discount factor per env step."""
    n_step: int = 1
    """Rewards summed per target before bootstrapping (1: the one-step SAC target)."""
    tau: float = 0.005
    """Polyak rate of the target critics per gradient step."""
    actor_learning_rate: float = 3e-4
    """Adam learning rate of the actor."""
    critic_learning_rate: float = 3e-4
    """Adam learning rate of the twin critics."""
    alpha_learning_rate: float = 3e-4
    """Adam learning rate of log(alpha), the entropy temperature."""
    init_alpha: float = 0.1
    """Initial entropy temperature."""
    target_entropy_per_action: float = -1.0
    """Target policy entropy per action dimension [nats] (the SAC paper: -1, i.e. -dim A)."""
    actor_update_interval: int = 1
    """Update the actor and temperature every this many critic steps (TD3's delay: 2)."""
    max_grad_norm: float = 10.0
    """Global gradient-norm clip of each network."""
    critic_layer_norm: bool = True
    """LayerNorm after each hidden layer of the critics."""
    critic_atoms: int = 0
    """0: scalar critics; K > 1: distributional critics, a categorical distribution over K
    atoms evenly spaced on [q_min, q_max] trained with the projected cross-entropy of C51
    (Bellemare et al. 2017, arXiv:1707.06887), as FastTD3 does; the clipped double-Q
    target takes the distribution of the critic whose mean is lower."""
    q_min: float = -10.0
    """Lowest atom of the distributional critics [return units]."""
    q_max: float = 10.0
    """Highest atom of the distributional critics [return units]."""
    action_bound: float = 1.0
    """Actions are action_bound * tanh(u), u the Gaussian sample (in action units)."""
    log_std_range: tuple[float, float] = (-5.0, 2.0)
    """Clamp of the actor's log standard deviation."""
    policy: PolicyCfg = field(default_factory=lambda: PolicyCfg(
        actor_hidden_dims=(256, 256), critic_hidden_dims=(256, 256), init_noise_std=0.5))
    """Network widths, activation, initial std (before tanh) and observation normalization."""
    num_envs: int | None = None
    """Parallel envs of a SAC run (None: the task's TrainCfg.num_envs)."""
    max_iterations: int | None = None
    """Iterations of a SAC run (None: the task's TrainCfg.max_iterations)."""
    save_interval: int | None = None
    """Checkpoint every this many iterations (None: the task's TrainCfg.save_interval)."""
    log_interval: int = 10
    """Log and write TensorBoard scalars every this many iterations."""
    max_policy_lag: int = 1
    """With rollout workers (--workers), chunks are gathered asynchronously: the workers
    sample while the learner updates, and a chunk sampled with weights more than this many
    iterations older than the learner's is dropped (0 accepts only chunks of the current
    weights)."""

    @property
    def rollout_steps(self) -> int:
        """Env steps per env between updates (T)."""
        return self.steps_per_env

    def __post_init__(self):
        """Positive sizes and rates; gamma and tau in [0, 1]; an ordered log-std range."""
        _positive(self, 'steps_per_env', 'updates_per_iteration', 'batch_size', 'buffer_size',
                  'n_step', 'tau', 'actor_learning_rate', 'critic_learning_rate',
                  'alpha_learning_rate', 'init_alpha', 'actor_update_interval',
                  'max_grad_norm', 'action_bound', 'log_interval')
        _unit(self, 'gamma', 'tau')
        if self.max_policy_lag < 0:
            raise ValueError(f'max_policy_lag must be >= 0, got {self.max_policy_lag}')
        if self.critic_atoms == 1 or self.critic_atoms < 0 or not self.q_min < self.q_max:
            raise ValueError(f'critic_atoms must be 0 or > 1 and q_min < q_max, got '
                             f'{self.critic_atoms} atoms on [{self.q_min}, {self.q_max}]')
        low, high = self.log_std_range
        if not low < high:
            raise ValueError(f'log_std_range must be (low, high) with low < high, got '
                             f'{self.log_std_range}')
        for name in ('num_envs', 'max_iterations', 'save_interval'):
            if getattr(self, name) is not None:
                _positive(self, name)


@dataclass
class TrainCfg:
    """A task's training defaults: the algorithm, its config and the run's schedule."""

    algo: str = 'ppo'
    """Algorithm name (ALGORITHMS)."""
    ppo: PPOCfg = field(default_factory=PPOCfg)
    """PPO's config (used when algo is 'ppo')."""
    sac: SACCfg = field(default_factory=SACCfg)
    """SAC's config (used when algo is 'sac')."""
    num_envs: int = 4096
    """Parallel environments."""
    max_iterations: int = 1000
    """Learner iterations of a run."""
    max_seconds: float | None = None
    """Wall-clock budget [s] of a run (None: no limit)."""
    save_interval: int = 25
    """Checkpoint every this many iterations."""
    edge_prob: float = 0.0
    """Probability that training draws a box parameter at a bound of its range
    (`sim2real.mdp.ranges.bias_edges`; evaluation draws the box uniformly)."""
    edge_per_env: bool = False
    """Draw all of an env's values of a multi-valued parameter (per joint, per axis) at the
    same bound together."""
    corner_prob: float = 0.0
    """Probability that an env draws every box parameter at a bound at once (a corner of
    the box; independent edge draws almost never reach one): per episode for what resets
    draw, once for the run for what the startup events draw (a quadruped's payload)."""
    focus_report: str | None = None
    """A `sim2real robustness` JSON report of this task: training holds focus_share of the
    envs at its failed points, then its worst passing ones (`sim2real.focus`)."""
    focus_share: float = 0.0
    """Share of the envs held at the focus points for the whole run (0: none)."""
    focus_points: int = 4
    """How many of the report's points to hold envs at: all failed ones, then the worst
    passing ones (most terminations, then least success) up to this many."""
    learn_threads: int | None = None
    """torch threads during the update (None: leave as set)."""
    act_threads: int | None = None
    """torch threads for the policy's forward passes during collection (None: as set)."""

    def __post_init__(self):
        """Only known algorithms; positive sizes; probabilities in [0, 1]."""
        if self.algo not in ALGORITHMS:
            raise ValueError(f'unknown algorithm "{self.algo}"; expected one of {ALGORITHMS}')
        _positive(self, 'num_envs', 'max_iterations', 'save_interval', 'focus_points')
        _unit(self, 'edge_prob', 'corner_prob', 'focus_share')

    @property
    def algo_cfg(self) -> PPOCfg | SACCfg:
        """The config of the chosen algorithm."""
        return getattr(self, self.algo)

    def schedule(self, name: str):
        """A run-shape value (num_envs, max_iterations, save_interval): the chosen
        algorithm's own where it sets one, else this config's."""
        own = getattr(self.algo_cfg, name, None)
        return getattr(self, name) if own is None else own


def _positive(cfg, *names: str) -> None:
    """ValueError naming the first field that is not > 0."""
    for name in names:
        if not getattr(cfg, name) > 0:
            raise ValueError(f'{name} must be > 0, got {getattr(cfg, name)}')


def _unit(cfg, *names: str) -> None:
    """ValueError naming the first field outside [0, 1]."""
    for name in names:
        if not 0.0 <= getattr(cfg, name) <= 1.0:
            raise ValueError(f'{name} must be in [0, 1], got {getattr(cfg, name)}')
