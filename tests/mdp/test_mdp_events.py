"""sim2real.mdp.events.randomize_body_field on the per-simulation MuJoCo model fields."""

import pytest
import torch

from sim2real.mdp.events import apply_operation, randomize_body_field

MASS = 0.027
INERTIA = torch.tensor([1.657171e-5, 1.6655602e-5, 2.9261652e-5], dtype=torch.float64)
IDS = torch.tensor([1, 4, 6])
OTHERS = torch.tensor([0, 2, 3, 5, 7])


def _no_events(cfg):
    """Drop the task's events so every model field starts at the URDF value."""
    cfg.events = {}


def test_mass_scale_within_range_and_only_ids(make_env):
    """Mass scaled by U(0.5, 2) lies in [0.0135, 0.054] for ids 1, 4, 6; others stay 0.027."""
    env = make_env(num_envs=8, edit=_no_events)
    randomize_body_field(env, IDS, 'body_mass', 1, (0.5, 2.0))
    mass = env.scene.backend.expand('body_mass')[:, 1]
    assert ((mass[IDS] >= 0.0135) & (mass[IDS] <= 0.054)).all()
    assert (mass[IDS] != MASS).all()
    assert (mass[OTHERS] == MASS).all()
    assert (env.scene.backend.expand('body_mass')[:, 0] == 0.0).all()   # world body untouched
    # the simulation sees the same per-env model values
    assert env.scene.backend.batch.get_model(4).body_mass[1] == pytest.approx(mass[4].item())
    assert env.scene.backend.batch.get_model(0).body_mass[1] == MASS


def test_repeated_randomization_does_not_drift(make_env):
    """Twenty scalings by 1.1 give 0.027 * 1.1 = 0.0297, not 0.027 * 1.1^20 = 0.1816."""
    env = make_env(num_envs=8, edit=_no_events)
    for _ in range(20):
        randomize_body_field(env, IDS, 'body_mass', 1, (1.1, 1.1))
    mass = env.scene.backend.expand('body_mass')[:, 1]
    torch.testing.assert_close(mass[IDS], torch.full((3,), 0.0297, dtype=torch.float64))


def test_task_mass_event_keeps_nominal_reference(make_env):
    """Over 10 resets of the hover task, mass stays in [0.8, 1.2] x 0.027 = [0.0216, 0.0324]."""
    env = make_env(num_envs=16)
    assert env.cfg.events['mass'].params['value_range'] == (0.8, 1.2)
    seen = []
    for seed in range(10):
        env.reset(seed=seed)
        seen.append(env.scene.backend.expand('body_mass')[:, 1].clone())
    seen = torch.stack(seen)
    assert seen.min() >= 0.0216 and seen.max() <= 0.0324
    assert seen.max() - seen.min() > 0.005          # it does randomize
    assert env.scene._field_defaults['body_mass'][:, 1].eq(MASS).all()


@pytest.mark.parametrize('per_axis', [True, False])
def test_inertia_scale_per_axis(make_env, per_axis):
    """Inertia scaled in [0.8, 1.2] per axis; one common factor per env when not per axis."""
    env = make_env(num_envs=8, edit=_no_events)
    randomize_body_field(env, IDS, 'body_inertia', 1, (0.8, 1.2), per_axis=per_axis)
    inertia = env.scene.backend.expand('body_inertia')[:, 1]
    ratio = inertia / INERTIA
    assert ((ratio[IDS] >= 0.8 - 1e-12) & (ratio[IDS] <= 1.2 + 1e-12)).all()
    torch.testing.assert_close(ratio[OTHERS], torch.ones(5, 3, dtype=torch.float64))
    spread = ratio[IDS].max(dim=1).values - ratio[IDS].min(dim=1).values
    if per_axis:
        assert (spread > 1e-6).all()
    else:
        assert (spread < 1e-12).all()


@pytest.mark.parametrize('operation, value_range, expected', [
    ('add', (0.01, 0.01), 0.037),     # 0.027 + 0.01
    ('abs', (0.05, 0.05), 0.05),      # replaced
    ('scale', (2.0, 2.0), 0.054),     # 0.027 * 2
])
def test_operations_by_hand(make_env, operation, value_range, expected):
    """add 0.01 -> 0.037 kg, abs 0.05 -> 0.05 kg, scale 2 -> 0.054 kg."""
    env = make_env(num_envs=8, edit=_no_events)
    randomize_body_field(env, IDS, 'body_mass', 1, value_range, operation=operation)
    mass = env.scene.backend.expand('body_mass')[:, 1]
    torch.testing.assert_close(mass[IDS], torch.full((3,), expected, dtype=torch.float64))


def test_unknown_operation_is_rejected():
    """An operation other than scale/add/abs raises ValueError naming it."""
    with pytest.raises(ValueError, match='unknown operation "mul"'):
        apply_operation(torch.ones(2), torch.ones(2), 'mul')
