"""rsl_rl VecEnv adapter over an RLEnv, so rsl_rl's own OnPolicyRunner trains our tasks.

The only module that imports rsl_rl (and tensordict): ``pip install -e '.[train,rsl_rl]'``.

    from rsl_rl.runners import OnPolicyRunner
    from sim2real.export.rsl_rl_policy import export_rsl_rl_policy
    from sim2real.mdp.rsl_rl_env import RslRlVecEnv
    from sim2real.training import build_env

    env = RslRlVecEnv(build_env('quadrotor-hover', seed=0, num_envs=4096))
    runner = OnPolicyRunner(env, train_cfg, log_dir='runs/rsl', device='cpu')
    runner.learn(1500, init_at_random_ep_len=True)
    export_rsl_rl_policy(runner.get_inference_policy(), env, 'policy.onnx')

Observations are a TensorDict of the env's groups, 'policy' (the deployable actor input) and
'critic' (privileged): set ``train_cfg['obs_groups'] = {'actor': ['policy'], 'critic':
['critic']}``. step() returns (obs, rewards, dones, extras): dones 1 where an episode ended
(the env has already reset it), extras['time_outs'] the episodes cut by the time limit (rsl_rl
bootstraps their value), extras['log'] the means over the episodes that ended this step
('episode/return', 'reward/<term>', 'termination/<term>', 'episode/success', ...), which
rsl_rl's logger averages per iteration. Actions are clipped by the env's action term.
"""

from __future__ import annotations

import torch
from rsl_rl.env import VecEnv
from tensordict import TensorDict

from sim2real.mdp.env import RLEnv


class RslRlVecEnv(VecEnv):
    """rsl_rl.env.VecEnv view of a batched RLEnv (see the module docstring)."""

    def __init__(self, env: RLEnv):
        """Wrap env and reset all its envs (rsl_rl's runner never calls reset)."""
        self.env = env
        self.num_envs = env.num_envs
        self.num_actions = env.num_actions
        self.max_episode_length = env.max_episode_length
        self.device = env.device
        self.cfg = env.cfg
        self._obs = self.reset()

    @property
    def unwrapped(self) -> RLEnv:
        """The wrapped RLEnv."""
        return self.env

    @property
    def episode_length_buf(self) -> torch.Tensor:
        """Policy steps since each env's reset, (N,) long: the env's own counter."""
        return self.env.episode_length

    @episode_length_buf.setter
    def episode_length_buf(self, value: torch.Tensor) -> None:
        """Overwrite the lengths in place (rsl_rl draws random ones at the start)."""
        value = torch.as_tensor(value, device=self.device)
        if value.shape != (self.num_envs,):
            raise ValueError(f'episode_length_buf must have shape ({self.num_envs},), '
                             f'got {tuple(value.shape)}')
        self.env.episode_length.copy_(value)

    def get_observations(self) -> TensorDict:
        """The observations of the last reset or step."""
        return self._obs

    def reset(self, seed: int | None = None) -> TensorDict:
        """Reset every env (reseeding first when seed is given, as RLEnv.reset)."""
        with torch.inference_mode(False):
            self._obs = self._tensordict(self.env.reset(seed=seed))
        return self._obs

    def step(self, actions: torch.Tensor) -> tuple[TensorDict, torch.Tensor, torch.Tensor, dict]:
        """Apply actions (N, A): (obs, rewards (N,), dones (N,) long, extras).

        The runner steps under torch.inference_mode; the env runs outside it, so its state
        never becomes inference tensors that refuse in-place updates after training.
        """
        with torch.inference_mode(False):
            obs, rewards, terminated, truncated, extras = self.env.step(actions.clone())
        self._obs = self._tensordict(obs)
        dones = (terminated | truncated).long()
        return self._obs, rewards, dones, {'time_outs': truncated, 'log': extras['log']}

    def _tensordict(self, obs: dict[str, torch.Tensor]) -> TensorDict:
        """The observation groups as one TensorDict of batch size N."""
        return TensorDict(dict(obs), batch_size=[self.num_envs], device=self.device)
