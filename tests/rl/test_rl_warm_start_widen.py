"""Warm start across added observation terms: a quadrotor-track policy (hover's 49 inputs
plus the 3 of reference_velocity_w) starts from a quadrotor-hover run or policy file."""

import copy
import dataclasses

import numpy as np
import pytest
import torch

from sim2real.onnx_io import cpu_session
from sim2real.rl.checkpoint import latest_checkpoint, load_checkpoint, save_checkpoint
from sim2real.rl.networks import ExportablePolicy
from sim2real.rl.warm_start import warm_start
from sim2real.rl.widen_inputs import widen_policy_inputs
from sim2real.training import train, TrainArgs
from warm_start_setup import ENVS, learner, one_iteration_run

HOVER_INPUTS, TRACK_INPUTS = 49, 52


@pytest.fixture(scope='module')
def hover_run(tmp_path_factory):
    """One PPO iteration of quadrotor-hover on 16 envs: trained normalizer statistics."""
    return one_iteration_run('quadrotor-hover', tmp_path_factory)


@pytest.fixture(scope='module')
def hover_onnx(hover_run, tmp_path_factory):
    """The hover run exported to a policy file."""
    from sim2real.policy_io import export_run
    return export_run(hover_run, tmp_path_factory.mktemp('onnx') / 'policy.onnx')[0]


def _track():
    """A fresh quadrotor-track learner, its run config and its env's contract."""
    return learner('quadrotor-track')


def _probe(actor_critic, rows=256, seed=0):
    """Observations around the normalizer's statistics, (rows, inputs)."""
    norm = actor_critic.policy_normalizer
    gen = torch.Generator().manual_seed(seed)
    noise = torch.randn(rows, norm.num_features, generator=gen)
    return norm.mean + 2.0 * noise * norm.var.sqrt()


def _act(actor_critic, obs):
    """The deterministic policy's outputs for obs."""
    with torch.no_grad():
        return ExportablePolicy(actor_critic).cpu()(obs)


def test_a_track_policy_starts_from_a_hover_run(hover_run, caplog):
    """The shared 49 inputs keep the hover weights and statistics bit for bit, the 3 added
    ones get zero weights, mean 0 and variance 1: the started policy's outputs do not move
    when the reference velocity does (a fresh actor's move by more than 1e-3)."""
    source = load_checkpoint(latest_checkpoint(hover_run))['model']
    actor_critic, config, _ = _track()
    fresh_critic = actor_critic.state_dict()['critic.0.weight'].clone()
    obs = _probe(actor_critic)
    moved = obs.clone()
    moved[:, HOVER_INPUTS:] += 1.0
    assert (_act(actor_critic, obs) - _act(actor_critic, moved)).abs().max() > 1e-3
    with caplog.at_level('INFO', logger='sim2real.rl.warm_start'):
        warm_start(actor_critic, hover_run, config)
    state = actor_critic.state_dict()
    weight = state['actor.0.weight']
    assert source['actor.0.weight'].shape[1] == HOVER_INPUTS
    assert weight.shape[1] == TRACK_INPUTS
    torch.testing.assert_close(weight[:, :HOVER_INPUTS], source['actor.0.weight'],
                               rtol=0, atol=0)
    assert torch.count_nonzero(weight[:, HOVER_INPUTS:]) == 0
    for key in ('actor.2.weight', 'actor.4.weight', 'actor.4.bias', 'log_std'):
        torch.testing.assert_close(state[key], source[key], rtol=0, atol=0)
    mean, var = state['policy_normalizer.mean'], state['policy_normalizer.var']
    torch.testing.assert_close(mean[:HOVER_INPUTS], source['policy_normalizer.mean'],
                               rtol=0, atol=0)
    torch.testing.assert_close(var[:HOVER_INPUTS], source['policy_normalizer.var'],
                               rtol=0, atol=0)
    assert mean[HOVER_INPUTS:].tolist() == [0.0] * 3 and var[HOVER_INPUTS:].tolist() == [1.0] * 3
    obs = _probe(actor_critic)
    moved = obs.clone()
    moved[:, HOVER_INPUTS:] += 1.0
    torch.testing.assert_close(_act(actor_critic, obs), _act(actor_critic, moved),
                               rtol=0, atol=0)
    # the critic sees other inputs (the reference velocity too): it stays fresh
    torch.testing.assert_close(state['critic.0.weight'], fresh_critic, rtol=0, atol=0)
    assert 'added after the source ones: reference_velocity_w (zero weights)' in caplog.text


def test_a_track_policy_starts_from_a_hover_policy_file(hover_onnx):
    """From the hover file: the track actor's outputs equal onnxruntime's on the file with
    the first 49 inputs (to 1e-5), whatever the last 3 read."""
    actor_critic, config, contract = _track()
    warm_start(actor_critic, hover_onnx, config, contract)
    obs = _probe(actor_critic, seed=1)
    obs[:, HOVER_INPUTS:] = torch.randn(len(obs), 3) * 5.0
    session = cpu_session(hover_onnx)
    name = session.get_inputs()[0].name
    theirs = session.run(None, {name: obs[:, :HOVER_INPUTS].numpy()})[0]
    np.testing.assert_allclose(_act(actor_critic, obs).numpy(), theirs, rtol=0, atol=1e-5)
    var = actor_critic.state_dict()['policy_normalizer.var']
    torch.testing.assert_close(var[HOVER_INPUTS:], torch.ones(3), rtol=0, atol=1e-6)


def test_train_track_from_a_hover_file(hover_onnx, tmp_path):
    """`train quadrotor-track --init-from hover.onnx` trains and records its source."""
    args = TrainArgs('quadrotor-track', num_envs=ENVS, max_iterations=1, num_threads=1,
                     init_from=str(hover_onnx))
    assert train(args, tmp_path / 'track', progress_bar=False)['iterations'] == 1
    stored = load_checkpoint(latest_checkpoint(tmp_path / 'track'))['config']['args']
    assert stored['init_from'] == str(hover_onnx)


def test_a_term_added_before_the_source_ones_is_refused(hover_run, hover_onnx):
    """Added terms must come last: with reference_velocity_w first, the run's first inputs
    would mean something else, so both sources are refused and nothing is loaded."""
    actor_critic, config, contract = _track()
    before = copy.deepcopy(actor_critic.state_dict())
    terms = config['env']['observations']['policy']['terms']
    config['env']['observations']['policy']['terms'] = {
        'reference_velocity_w': terms.pop('reference_velocity_w'), **terms}
    with pytest.raises(ValueError, match='policy observation terms'):
        warm_start(actor_critic, hover_run, config)
    observations = [contract.observations[-1], *contract.observations[:-1]]
    with pytest.raises(ValueError, match=r'\n  observations\[0\]'):
        warm_start(actor_critic, hover_onnx, config,
                   dataclasses.replace(contract, observations=observations))
    for key, value in before.items():
        torch.testing.assert_close(actor_critic.state_dict()[key], value, rtol=0, atol=0)


def test_a_changed_history_length_is_refused_by_name(hover_run, tmp_path):
    """A source that saw 2 ticks of body velocity where this run sees 3 is refused, naming
    the term and the field (the size alone would not say which)."""
    state = load_checkpoint(latest_checkpoint(hover_run))
    terms = state['config']['env']['observations']['policy']['terms']
    terms['lin_vel_b']['history_length'] = 2
    edited = save_checkpoint(tmp_path / 'edited.pt', state)
    actor_critic, config, _ = _track()
    with pytest.raises(ValueError, match='observation "lin_vel_b" history_length: 2 vs 3'):
        warm_start(actor_critic, edited, config)


def test_widening_needs_more_inputs():
    """widen_policy_inputs pads; asked for as many inputs or fewer it raises."""
    state = {'actor.0.weight': torch.ones(2, 3), 'mean': torch.ones(3),
             'std': torch.full((3,), 2.0)}
    out = widen_policy_inputs(state, 5, std_eps=0.44)
    assert out['actor.0.weight'].tolist() == [[1, 1, 1, 0, 0]] * 2
    assert out['mean'].tolist() == [1, 1, 1, 0, 0]
    torch.testing.assert_close(out['std'], torch.tensor([2, 2, 2, 1.2, 1.2]))
    with pytest.raises(ValueError, match='already reads 3 inputs'):
        widen_policy_inputs(state, 3)


def test_an_edited_term_docstring_does_not_stop_a_widened_start(hover_onnx):
    """The contract carries each term function's docstring; an edited docstring changes no
    value, so the hover file still starts the track run (and its actor matches the file)."""
    actor_critic, config, contract = _track()
    edited = dataclasses.replace(contract, observations=[
        dataclasses.replace(t, doc=t.doc + ' (edited)') for t in contract.observations])
    warm_start(actor_critic, hover_onnx, config, edited)
    weight = actor_critic.state_dict()['actor.0.weight']
    assert weight.shape[1] == TRACK_INPUTS and torch.count_nonzero(weight[:, HOVER_INPUTS:]) == 0
