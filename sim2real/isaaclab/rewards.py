"""legged_gym's only-positive reward clip in an Isaac Lab env (Isaac Lab venv only).

Our tasks may clip each step's reward total at zero before the terms marked ``after_clip``
(the fall penalty) are added (``EnvCfg.only_positive_rewards``); Isaac Lab's RewardManager
only sums. ``install_positive_clip(env)`` swaps the env's reward manager for
``PositiveRewardManager`` where the env config asks for it, by the attribute
``only_positive_rewards_after`` (the names of the after-clip terms; absent or None: no clip).
The per-term episode sums Isaac Lab logs stay unclipped, as ours.
"""

from __future__ import annotations

CFG_ATTR = 'only_positive_rewards_after'
"""Env config attribute: the reward terms added after the clip (None or absent: no clip)."""


def clipped_total(step_reward, after_clip, dt: float):
    """(N,) step reward: the weighted terms (N, T) not in after_clip (a (T,) bool mask)
    summed and clipped at zero, plus the after-clip terms, times dt."""
    before = step_reward[:, ~after_clip].sum(dim=1).clamp(min=0.0)
    return (before + step_reward[:, after_clip].sum(dim=1)) * dt


def _define() -> dict:
    """The class (Isaac Lab imported on first use: this module also imports without it)."""
    import torch
    from isaaclab.managers import RewardManager

    class PositiveRewardManager(RewardManager):
        """Isaac Lab's reward manager with the total clipped at zero before the after-clip
        terms."""

        def __init__(self, cfg, env, after_clip: tuple[str, ...]):
            """The manager of cfg's terms; after_clip names terms it must hold."""
            super().__init__(cfg, env)
            unknown = sorted(set(after_clip) - set(self._term_names))
            if unknown:
                raise ValueError(f'{CFG_ATTR}: no reward term {", ".join(unknown)} '
                                 f'(terms: {", ".join(self._term_names)})')
            self._after_clip = torch.tensor([name in after_clip for name in self._term_names],
                                            dtype=torch.bool, device=self.device)

        def compute(self, dt: float):
            """Isaac Lab's weighted terms and episode sums, the total clipped."""
            super().compute(dt)
            self._reward_buf[:] = clipped_total(self._step_reward, self._after_clip, dt)
            return self._reward_buf

    return {'PositiveRewardManager': PositiveRewardManager}


def install_positive_clip(env) -> bool:
    """Give env the clipped reward manager if its config asks for one; True if it did."""
    after = getattr(env.cfg, CFG_ATTR, None)
    if after is None:
        return False
    env.reward_manager = _define()['PositiveRewardManager'](env.cfg.rewards, env, tuple(after))
    return True


def __getattr__(name: str):
    """PositiveRewardManager, defined on first access."""
    if name == 'PositiveRewardManager':
        return _define()[name]
    raise AttributeError(name)
