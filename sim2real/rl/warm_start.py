"""Start a run's policy from another run's: actor, action noise and policy normalizer.

The usual curriculum for blind legged locomotion: learn to walk on flat ground, then carry
that gait onto rough terrain (Rudin et al. 2022, arXiv:2109.11978, train rough from scratch on
a GPU; on a CPU the flat stage is the cheap part). The policy's inputs and outputs must mean
the same in both runs: the same policy observation terms (function, size, scale, clip,
history; the noise may differ), or the source's followed by added terms whose inputs start at
zero weight (rl/widen_inputs.py: hover -> track), the same action term and actor layout.
The critic is copied only from a checkpoint whose critic sees the same inputs through the
same layers and predicts the same returns (rewards, discount; a fine-tune of the same task,
say with other randomization draws): a fresh critic's first advantages are noise, and PPO's
first updates on them undo part of what the actor knew. Between tasks the
privileged inputs differ (terrain heights on rough ground), so the critic starts fresh. The
optimizer always does.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from torch import nn

from sim2real.rl.checkpoint import (
    CheckpointError, latest_checkpoint, load_checkpoint, plain_config)
from sim2real.rl.widen_inputs import appended, widen_policy_inputs

log = logging.getLogger(__name__)

_POLICY_PREFIXES = ('actor.', 'log_std', 'policy_normalizer.')
_VALUE_PREFIXES = ('critic', 'targets.')   # PPO's critic, SAC's critics and their targets
_TERM_FIELDS = ('func', 'params', 'scale', 'clip', 'history_length')
_TERM_DEFAULTS = {'history_length': 1}
"""Values of term fields that configs stored before the field existed lack."""
_REWARD_DEFAULTS = {'after_clip': False}
"""The same for reward terms."""
_MOVED_FUNCS = {'sim2real.tasks.quadrotor.mdp:is_terminated':
                'sim2real.mdp.episode_terms:is_terminated'}
"""Term functions stored under the module they were in before a move: the same function."""


def source_checkpoint(source: str | os.PathLike) -> Path:
    """The checkpoint a run directory's newest, or the file itself."""
    path = Path(source)
    if path.is_dir():
        found = latest_checkpoint(path)
        if found is None:
            raise FileNotFoundError(f'{path} holds no checkpoints/model_*.pt to start from')
        return found
    if not path.is_file():
        raise FileNotFoundError(f'{path}: no such run directory or checkpoint')
    return path


def _bounds_only(value):
    """A stored config value with every edge-biased range (training's EdgeRange) as its
    plain [low, high]: how often training drew a bound is no part of a policy's interface."""
    if isinstance(value, dict):
        if set(value) >= {'low', 'high', 'edge_prob'}:
            return [value['low'], value['high']]
        return {k: _bounds_only(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_bounds_only(v) for v in value]
    return value


def _observation_terms(env: dict, group: str) -> list[dict]:
    """Name, function, params, scale, clip and history of each term of an observation
    group."""
    return [{'name': name, **{k: term.get(k, _TERM_DEFAULTS.get(k)) for k in _TERM_FIELDS},
             'func': _current_func(term)}
            for name, term in env['observations'][group]['terms'].items()]


def _current_func(term: dict) -> str | None:
    """A stored term's function under the module it lives in now."""
    return _MOVED_FUNCS.get(term.get('func'), term.get('func'))


def _reward_terms(env: dict) -> dict | None:
    """Each reward term's stored fields, with the defaults of fields added since and the
    current module of functions moved since."""
    rewards = env.get('rewards')
    if rewards is None:
        return None
    return {name: {**_REWARD_DEFAULTS, **term, 'func': _current_func(term)}
            for name, term in rewards.items()}


ACTION_CONDITIONS = ('delay_ticks', 'lag_substeps', 'noise_std')
"""Action term parameters that set how training disturbs the actions (delays, actuation
noise), not what the actor's outputs mean: a run may start from one trained under others."""


def _action_interface(action: dict) -> dict:
    """A stored action term without its training conditions."""
    params = {k: v for k, v in (action.get('params') or {}).items()
              if k not in ACTION_CONDITIONS}
    return {**action, 'params': params}


def action_condition_changes(source: dict, target: dict) -> list[str]:
    """'name: source value -> target value' per action training condition that differs
    between two runs' stored configs (a condition one run lacks reads as None)."""
    old = _bounds_only(source['env']['action'].get('params') or {})
    new = _bounds_only(target['env']['action'].get('params') or {})
    return [f'{k}: {old.get(k)!r} -> {new.get(k)!r}' for k in ACTION_CONDITIONS
            if old.get(k) != new.get(k)]


def policy_interface(config: dict) -> dict:
    """What the actor's inputs and outputs mean in a run's stored config."""
    env = config['env']
    policy = config.get('algo_cfg', config.get('ppo'))['policy']   # before the seam: PPO's
    return {
        'policy observations': _observation_terms(env, 'policy'),
        'policy observation size': config['obs_dims']['policy'],
        'action': _action_interface(_bounds_only(env['action'])),
        'actions': config['num_actions'],
        'algorithm': config.get('algo', 'ppo'),
        'actor hidden dims': list(policy['actor_hidden_dims']),
        'activation': policy['activation'],
        'normalize_obs': policy['normalize_obs'],
    }


_VALUE_FIELDS = ('gamma', 'n_step', 'critic_atoms', 'q_min', 'q_max', 'critic_layer_norm',
                 'action_bound')
"""Algorithm settings that change what a critic predicts or how it is built (those a run's
algorithm lacks read as None)."""


def critic_interface(config: dict) -> dict:
    """What the critic's inputs, layers and targets are in a run's stored config: its
    observations, its layers and the rewards and discounting it predicts."""
    env = config['env']
    algo = config.get('algo_cfg', config.get('ppo'))
    policy = algo['policy']
    return {
        'critic observations': _observation_terms(env, 'critic'),
        'critic observation size': config['obs_dims']['critic'],
        'algorithm': config.get('algo', 'ppo'),
        'critic hidden dims': list(policy.get('critic_hidden_dims', ())),
        'activation': policy['activation'],
        'rewards': _reward_terms(env),
        'only positive rewards': env.get('only_positive_rewards'),
        **{name: algo.get(name, policy.get(name)) for name in _VALUE_FIELDS},
    }


def interface_mismatches(source: dict, target: dict) -> list[str]:
    """One line per field of policy_interface() or critic_interface() that differs between
    two runs."""
    lines = []
    for key in target:
        if source.get(key) == target[key]:
            continue
        if key in ('policy observations', 'critic observations'):
            group = key.split()[0]
            names = [t['name'] for t in source[key]], [t['name'] for t in target[key]]
            if names[0] != names[1]:
                lines.append(f'{group} observation terms {names[0]} vs {names[1]}')
            for old, new in zip(source[key], target[key]):
                for field in _TERM_FIELDS:
                    if old['name'] == new['name'] and old[field] != new[field]:
                        where = '' if group == 'policy' else 'critic '
                        lines.append(f'{where}observation "{new["name"]}" {field}: '
                                     f'{old[field]!r} vs {new[field]!r}')
        elif key == 'rewards':
            old, new = source.get(key) or {}, target[key] or {}
            changed = sorted(n for n in set(old) | set(new) if old.get(n) != new.get(n))
            lines.append(f'reward terms {changed}')
        else:
            lines.append(f'{key}: {source.get(key)!r} vs {target[key]!r}')
    return lines


def _misfits(source: dict, own: dict, prefixes: tuple) -> list[str]:
    """Keys under prefixes that one state dict lacks or holds with another shape."""
    keys = {k for k in (*source, *own) if k.startswith(prefixes)}
    return sorted(k for k in keys if k not in source or k not in own
                  or source[k].shape != own[k].shape)


def warm_start(network: nn.Module, source: str | os.PathLike, config: dict,
               env_contract=None) -> Path:
    """Load actor, log-std and policy normalizer from source into an algorithm's network
    (PPO's actor-critic, SAC's model; the same algorithm as the source's), and the critic
    when critic_interface() is the same in both runs and its weights fit.

    config is the target run's stored config (training.train writes it); raises ValueError
    naming every field in which the two policies' interfaces differ. Returns the checkpoint.
    A policy file (.onnx) starts a PPO run from its actor and normalizer; env_contract, the
    run's own contract, is what its contract is checked against (rl/warm_start_onnx.py).
    """
    if str(source).endswith('.onnx'):
        from sim2real.onnx_io import read_contract
        from sim2real.rl.warm_start_onnx import warm_start_from_onnx
        if env_contract is None:
            raise ValueError(f'{source}: a policy file needs the contract of the run to check')
        warm_start_from_onnx(network, source, read_contract(source), env_contract)
        return Path(source)
    path = source_checkpoint(source)
    config = plain_config(config)
    state = load_checkpoint(path)
    if 'model' not in state or 'config' not in state:
        raise CheckpointError(f'{path} is not a training checkpoint (no model or config)')
    source_if, own_if = policy_interface(state['config']), policy_interface(config)
    added = appended(source_if['policy observations'], own_if['policy observations'])
    if added is not None:   # compare what the two share; the added inputs start at zero weight
        own_if = {**own_if, 'policy observations': source_if['policy observations'],
                  'policy observation size': source_if['policy observation size']}
    mismatches = interface_mismatches(source_if, own_if)
    if mismatches:
        raise ValueError(f'cannot start this policy from {path}: its interface differs:\n  '
                         + '\n  '.join(mismatches))
    own = network.state_dict()
    model = state['model']
    if added is not None:
        model = widen_policy_inputs(model, config['obs_dims']['policy'])
    policy_misfit = _misfits(model, own, _POLICY_PREFIXES)
    if policy_misfit:
        raise CheckpointError(f'{path}: policy weights {policy_misfit} do not fit this run')
    prefixes = _POLICY_PREFIXES
    critic_differs = interface_mismatches(critic_interface(state['config']),
                                          critic_interface(config))
    if not critic_differs:
        critic_misfit = _misfits(model, own, _VALUE_PREFIXES)
        if critic_misfit:
            critic_differs = [f'its critic weights {critic_misfit} do not fit']
        else:
            prefixes += _VALUE_PREFIXES
    network.load_state_dict(
        {k: v for k, v in model.items() if k.startswith(prefixes)}, strict=False)
    if added is not None:
        log.info('policy observation terms added after the source ones: %s (zero weights)',
                 ', '.join(t['name'] for t in added))
    changes = action_condition_changes(state['config'], config)
    if changes:
        log.warning('starting from %s, trained under other action conditions: %s', path,
                    '; '.join(changes))
    log.info('policy (actor, action std, observation normalizer) from %s, iteration %s; %s',
             path, state.get('iteration'),
             'critic from it too, optimizer fresh' if not critic_differs else
             'critic and optimizer fresh (its critic differs: %s)' % '; '.join(critic_differs))
    return path
