"""PPO update throughput: our learner against rsl_rl's PPO on the same network and batch.

Only `update()` is timed: the PPO epochs over one stored rollout (minibatch shuffling and
gathering, forward passes, losses, the KL-adaptive learning rate, backward, gradient clipping,
Adam). Both learners get the quadruped-flat task's sizes and train defaults
(`get_task('quadruped-flat').train.ppo`: 45 policy / 48 critic observations, 12 actions,
actor 128-128 and critic 256-128 ELU MLPs, 5 epochs x 12 minibatches, clip 0.2, clipped
value loss, adaptive schedule, observation normalization on), a rollout of num_envs x 24
transitions (default 4096 x 24, the legged_gym standard) and one torch thread for both by
default (--torch-threads; the task trains its update on learn_threads = 2, but on this 2-core
machine any other load makes two OpenMP threads stall each other: a 512-sample update took 9 s
on 2 threads against 0.16 s on 1 with a training run in the background).

rsl_rl (`rsl_rl.algorithms.PPO`, `rsl_rl.models.MLPModel` actor with a log-parameterized
GaussianDistribution, MLPModel critic, `rsl_rl.storage.RolloutStorage`) starts from our
initial weights and log-std (same layer layout), with RND, symmetry, mixed precision,
per-minibatch advantage normalization and torch.compile off. Both storages are filled with the
same seeded synthetic rollout: observations, rewards and dones are shared; actions, values and
log-probabilities come from each learner's own act() on those observations, with the global
RNG reseeded before each act() so both draw the same Gaussian noise. Returns and advantages
(whole-batch normalized in both) are computed before timing. One update of each is a warm-up;
then `repeats` updates alternate ours / rsl_rl on the same stored rollout (both overwrite, not
clear, their buffers) so background load hits both alike, and the medians are reported.
samples/s is the rollout's transitions (num_envs x num_steps_per_env) per second of update().

Differences that remain (each learner's own design, part of what is compared):
- rsl_rl updates its observation normalizers inside update(), over the whole rollout; ours does
  it in act(), once per step. rsl_rl's normalizers are put in eval mode for the timed updates
  (its forward still normalizes; only the statistics update is skipped), its statistics are
  merged per step during the fill like ours, and the cost of the skipped statistics update is
  measured on its own and reported as rsl_rl_normalizer_update_s.
- Normalizer arithmetic: ours (x - mean) / sqrt(var + 1e-4) clipped to +-5; rsl_rl
  (x - mean) / (std + 1e-2), unclipped.
- Ours draws a new minibatch permutation each epoch, rsl_rl one for all epochs.
- Ours clips the gradient norm over all parameters at once, rsl_rl actor and critic separately.
- Ours computes the analytic KL and the clip fraction for every minibatch (diagnostics it
  returns); rsl_rl computes the KL (torch.distributions) only for the adaptive schedule.
- rsl_rl gathers minibatch observations through a TensorDict; ours indexes plain tensors.
- Ours computes ELU through exp with a backward pass from the saved output
  (sim2real/rl/activations.py); rsl_rl uses torch's nn.ELU (expm1 forward, exp backward).

Prints one line and writes bench/out/ppo_update.json. Run: `.venv/bin/python -m bench.ppo_update`.
"""

from __future__ import annotations

import argparse
import copy
import statistics

import torch
from torch import nn

from bench.common import OUT_DIR, report, timed, write_results
from sim2real.device import device_scope, generator
from sim2real.rl.ppo import PPO, PPOCfg
from sim2real.tasks import get_task
from sim2real.training import build_env

TASK = 'quadruped-flat'
DONE_PROBABILITY = 0.02
"""Chance per env step that an episode ends (50-step episodes on average)."""


def task_workload() -> tuple[PPOCfg, dict[str, int], int, int]:
    """PPOCfg, obs dims, action count and update threads of the task (no physics stepped)."""
    spec = get_task(TASK)
    cfg = copy.deepcopy(spec.train.ppo)
    env = build_env(TASK, seed=0, num_envs=8, num_threads=1)
    return cfg, dict(env.obs_dims), env.num_actions, spec.train.learn_threads or 1


def _num_params(module: nn.Module) -> int:
    """Number of trainable scalars of module."""
    return sum(p.numel() for p in module.parameters() if p.requires_grad)


def _rsl_rl_ppo(cfg: PPOCfg, obs_dims: dict[str, int], num_actions: int, num_envs: int,
                device: str = 'cpu'):
    """rsl_rl's PPO with MLPModel actor and critic shaped and configured like ours."""
    from rsl_rl.algorithms import PPO as RslPPO
    from rsl_rl.models import MLPModel
    from rsl_rl.modules import GaussianDistribution
    from rsl_rl.storage import RolloutStorage
    from tensordict import TensorDict

    pol = cfg.policy
    obs = TensorDict({name: torch.zeros(num_envs, dim, device=device)
                      for name, dim in obs_dims.items()}, batch_size=[num_envs], device=device)
    groups = {'actor': ['policy'], 'critic': ['critic']}
    actor = MLPModel(obs, groups, 'actor', num_actions, hidden_dims=list(pol.actor_hidden_dims),
                     activation=pol.activation, obs_normalization=pol.normalize_obs,
                     distribution_cfg={'class_name': GaussianDistribution,
                                       'init_std': pol.init_noise_std, 'std_type': 'log'})
    critic = MLPModel(obs, groups, 'critic', 1, hidden_dims=list(pol.critic_hidden_dims),
                      activation=pol.activation, obs_normalization=pol.normalize_obs)
    storage = RolloutStorage('rl', num_envs, cfg.num_steps_per_env, obs, [num_actions], device)
    return RslPPO(actor, critic, storage, num_learning_epochs=cfg.num_learning_epochs,
                  num_mini_batches=cfg.num_mini_batches, clip_param=cfg.clip_param,
                  gamma=cfg.gamma, lam=cfg.lam, value_loss_coef=cfg.value_loss_coef,
                  entropy_coef=cfg.entropy_coef, learning_rate=cfg.learning_rate,
                  max_grad_norm=cfg.max_grad_norm,
                  use_clipped_value_loss=cfg.use_clipped_value_loss, schedule=cfg.schedule,
                  desired_kl=cfg.desired_kl, normalize_advantage_per_mini_batch=False,
                  use_mixed_precision=False, device=device)


def _fill(ours: PPO, theirs, obs_dims: dict[str, int], num_envs: int, num_steps: int,
          seed: int, device: str = 'cpu') -> None:
    """Store the same synthetic rollout in both learners and compute their returns."""
    from tensordict import TensorDict

    gen = torch.Generator().manual_seed(seed)
    # per-feature offsets and scales, so the normalizers have something to do
    shift = {k: torch.randn(d, generator=gen) for k, d in obs_dims.items()}
    scale = {k: torch.rand(d, generator=gen) * 2.0 + 0.1 for k, d in obs_dims.items()}

    def observe() -> TensorDict:
        return TensorDict({k: (shift[k] + scale[k] * torch.randn(num_envs, d, generator=gen)
                               ).to(device) for k, d in obs_dims.items()},
                          batch_size=[num_envs], device=device)

    no_timeouts = torch.zeros(num_envs, device=device)
    for t in range(num_steps):
        obs = observe()
        rewards = (torch.randn(num_envs, generator=gen) * 0.1 + 0.5).to(device)
        dones = (torch.rand(num_envs, generator=gen) < DONE_PROBABILITY).to(device)
        torch.manual_seed(seed + 1 + t)   # the same Gaussian noise in both act() calls
        ours.act_on(obs['policy'], obs['critic'])
        ours.store_step(rewards, dones, no_timeouts)
        # rsl_rl merges normalizer statistics in update(); merge them here, as ours does in act()
        theirs.actor.update_normalization(obs)
        theirs.critic.update_normalization(obs)
        torch.manual_seed(seed + 1 + t)
        theirs.act(obs)
        theirs.process_env_step(obs, rewards, dones.long(), {})
    last = observe()
    ours.compute_returns(last['critic'])
    theirs.compute_returns(last)


def ppo_update(num_envs: int = 4096, repeats: int = 5, num_steps_per_env: int | None = None,
               num_threads: int = 1, seed: int = 0, device: str = 'cpu') -> dict:
    """Samples/s of our PPO update() and rsl_rl's on the same network, batch, threads and
    device ('cpu' or 'cuda')."""
    device = str(torch.device('cuda:0' if device == 'cuda' else device))
    cfg, obs_dims, num_actions, learn_threads = task_workload()
    if num_steps_per_env is not None:
        cfg.num_steps_per_env = num_steps_per_env
    previous_threads = torch.get_num_threads()
    torch.set_num_threads(num_threads)
    try:
        torch.manual_seed(seed)
        with device_scope(device):
            ours = PPO(obs_dims['policy'], obs_dims['critic'], num_actions, num_envs, cfg,
                       generator=generator(device, seed))
        theirs = _rsl_rl_ppo(cfg, obs_dims, num_actions, num_envs, device)
        ac = ours.actor_critic
        with torch.no_grad():   # same starting weights and log-std on both sides
            theirs.actor.mlp.load_state_dict(ac.actor.state_dict())
            theirs.critic.mlp.load_state_dict(ac.critic.state_dict())
            theirs.actor.distribution.log_std_param.copy_(ac.log_std)
        with device_scope(device):
            _fill(ours, theirs, obs_dims, num_envs, cfg.num_steps_per_env, seed, device)
        normalizers = [m.obs_normalizer for m in (theirs.actor, theirs.critic)]
        for norm in normalizers:
            norm.eval()   # forward still normalizes; update() skips the statistics merge

        def synced(update):
            """update, returning once the device has finished it."""
            def run():
                out = update()
                if device.startswith('cuda'):
                    torch.cuda.synchronize(device)
                return out
            return run
        with device_scope(device):
            warm_ours, warm_theirs = synced(ours.update)(), synced(theirs.update)()
            ours_s, theirs_s = [], []
            for _ in range(repeats):
                ours_s.append(timed(synced(ours.update), 1, warmup=False))
                theirs_s.append(timed(synced(theirs.update), 1, warmup=False))
        for norm in normalizers:
            norm.train()
        flat_obs = theirs.storage.observations.flatten(0, 1)
        rsl_norm_s = timed(lambda: (theirs.actor.update_normalization(flat_obs),
                                    theirs.critic.update_normalization(flat_obs)), repeats)
    finally:
        torch.set_num_threads(previous_threads)
    samples = num_envs * cfg.num_steps_per_env
    ours_med, theirs_med = statistics.median(ours_s), statistics.median(theirs_s)
    pol = cfg.policy
    out = {
        'task': TASK,
        'config': {'num_envs': num_envs, 'num_steps_per_env': cfg.num_steps_per_env,
                   'samples_per_update': samples,
                   'num_learning_epochs': cfg.num_learning_epochs,
                   'num_mini_batches': cfg.num_mini_batches,
                   'mini_batch_size': samples // cfg.num_mini_batches,
                   'clip_param': cfg.clip_param,
                   'use_clipped_value_loss': cfg.use_clipped_value_loss,
                   'schedule': cfg.schedule, 'normalize_obs': pol.normalize_obs,
                   'actor_hidden_dims': list(pol.actor_hidden_dims),
                   'critic_hidden_dims': list(pol.critic_hidden_dims),
                   'activation': pol.activation, 'obs_dims': obs_dims,
                   'num_actions': num_actions, 'torch_threads': num_threads,
                   'device': device,
                   'task_learn_threads': learn_threads,
                   'repeats': repeats, 'seed': seed},
        'params': {'ours': {'actor': _num_params(ac.actor) + ac.log_std.numel(),
                            'critic': _num_params(ac.critic)},
                   'rsl_rl': {'actor': _num_params(theirs.actor),
                              'critic': _num_params(theirs.critic)}},
        'ours': {'samples_per_s': samples / ours_med, 'update_s': ours_med,
                 'update_s_all': ours_s,
                 'warmup_losses': {'surrogate': warm_ours['surrogate_loss'],
                                   'value': warm_ours['value_loss'],
                                   'entropy': warm_ours['entropy']}},
        'rsl_rl': {'samples_per_s': samples / theirs_med, 'update_s': theirs_med,
                   'update_s_all': theirs_s, 'normalizer_update_s': rsl_norm_s,
                   'warmup_losses': dict(warm_theirs)},
        'rsl_rl_normalizer_update_s': rsl_norm_s,
        'ratio': theirs_med / ours_med,
    }
    c = out['config']
    report('ppo_update', f"{num_envs} x {c['num_steps_per_env']} samples, "
           f"{c['num_learning_epochs']} epochs x {c['num_mini_batches']} minibatches, "
           f'{num_threads} thr, {device}: ours {samples / ours_med:,.0f} samples/s '
           f'({ours_med:.2f} s/update), rsl_rl {samples / theirs_med:,.0f} '
           f'({theirs_med:.2f} s; + {rsl_norm_s * 1e3:.0f} ms normalizer update not timed), '
           f"ratio {out['ratio']:.2f} (goal >= 1)")
    return out


def main() -> None:
    """Measure, print one line, write ppo_update.json."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--num-envs', type=int, default=4096)
    parser.add_argument('--repeats', type=int, default=5, help='timed updates of each')
    parser.add_argument('--torch-threads', type=int, default=1,
                        help='torch threads of both updates (default 1)')
    parser.add_argument('--device', default='cpu', help="'cpu' or 'cuda'")
    args = parser.parse_args()
    out = ppo_update(args.num_envs, args.repeats, num_threads=args.torch_threads,
                     device=args.device)
    write_results({'ppo_update': out}, {'ppo_update_vs_rsl_rl': out['ratio']},
                  OUT_DIR / 'ppo_update.json')


if __name__ == '__main__':
    main()
