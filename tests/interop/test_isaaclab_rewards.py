"""The only-positive reward clip of our Isaac Lab env (sim2real.isaaclab.rewards) without
Isaac Lab: the arithmetic of the clipped total; the manager itself runs in the Isaac Lab
stage (tests/isaaclab)."""

import pytest
import torch

from sim2real.isaaclab.rewards import clipped_total, install_positive_clip


def test_the_total_is_clipped_at_zero_before_the_after_clip_terms():
    """Three envs x three weighted terms (tracking, a penalty, the fall penalty after the
    clip), dt 0.02: a positive total passes, a negative one becomes 0, the fall penalty is
    added in either case."""
    step = torch.tensor([[1.5, -0.5, 0.0],     # 1.0 -> 1.0
                         [0.2, -0.7, 0.0],     # -0.5 -> 0
                         [0.2, -0.7, -200.0]])  # -0.5 -> 0, then the fall
    after = torch.tensor([False, False, True])
    total = clipped_total(step, after, 0.02)
    assert total.tolist() == pytest.approx([0.02, 0.0, -4.0])


def test_an_env_config_without_the_attribute_keeps_its_manager():
    """No `only_positive_rewards_after` on the config: the env is left as it is."""
    class Env:
        cfg = object()
        reward_manager = 'isaac lab'
    env = Env()
    assert install_positive_clip(env) is False and env.reward_manager == 'isaac lab'
