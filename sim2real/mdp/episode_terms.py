"""Reward terms about the episode rather than the robot, for any task."""

from __future__ import annotations

import torch


def is_terminated(env) -> torch.Tensor:
    """1 for envs that terminated this step (not time-outs), (N,)."""
    terminated = torch.zeros(env.num_envs)
    for name, term in env.cfg.terminations.items():
        if not term.time_out and name in env.terminations.last:
            terminated = torch.maximum(terminated, env.terminations.last[name].float())
    return terminated
