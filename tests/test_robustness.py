"""The robustness sweep pins what it says it pins, in the simulated model, and judges."""

import torch

from sim2real.mdp.env import RLEnv
from sim2real.robustness import _pin
from sim2real.robustness_design import Point
from sim2real.tasks import make_env_cfg


def test_pinned_points_change_the_simulated_model():
    """Three points x 4 envs: mass x1.2 and tau x1.5 pinned, delay 3 pinned, nothing pinned:
    the model's mass, the motor time constant and the action delay follow per env."""
    cfg = make_env_cfg('quadrotor-hover')
    points = [Point('corner', {'mass_scale': 1.2, 'motor_tau_scale': 1.5}),
              Point('edge', {'action_delay_ticks': 3.0}), Point('edge', {})]
    _pin(cfg, points, episodes=4)
    cfg.num_envs, cfg.num_threads = 12, 1
    env = RLEnv(cfg)
    env.reset()
    scene = env.scene
    mass = scene.backend.expand('body_mass')[:, 1] / scene.nominal_mass_kg
    tau = env.scene.actuator.time_constant_s[:, 0] / scene.rotors.time_constant_s
    torch.testing.assert_close(mass[:4], torch.full((4,), 1.2, dtype=mass.dtype))
    torch.testing.assert_close(tau[:4], torch.full((4,), 1.5, dtype=tau.dtype))
    assert env.action_term.delay[4:8].tolist() == [3, 3, 3, 3]
    free = mass[4:]
    assert bool(((free >= 0.8) & (free <= 1.2)).all()) and float(free.std()) > 0.01
    assert bool((env.action_term.delay[8:] <= 3).all())
