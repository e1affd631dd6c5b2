"""The runtime refuses to start on any contract mismatch, naming the field at fault."""

import onnx
import pytest
import torch

from sim2real.contract import ContractError
from sim2real.contract_digest import bind_contract
from sim2real.deploy.runtime import ParamError, Runtime


def _set(*path_and_value):
    """Edit function setting raw[path...] = value (a None value deletes the key)."""
    *path, value = path_and_value

    def edit(raw):
        node = raw
        for key in path[:-1]:
            node = node[key]
        if value is None:
            del node[path[-1]]
        else:
            node[path[-1]] = value
    return edit


QUAD_CASES = [
    ('urdf_sha256', _set('urdf_sha256', '0' * 64)),
    ('robot', _set('robot', 'quadrotor')),
    ('robot_params.mass_kg', _set('robot_params', 'mass_kg', 0.03)),
    ('policy_rate_hz', _set('policy_rate_hz', 50.0)),
    ('observations[1].name', _set('observations', 1, 'name', 'rotmat')),
    ('observations[2].size', _set('observations', 2, 'size', 4)),
    ('observations[4].size', _set('observations', 4, 'size', 10)),
    ('observations[0].history_length', _set('observations', 0, 'history_length', 0)),
    ('observation_size', _set('observations', 0, 'history_length', 2)),
    ('action.kind', _set('action', 'kind', 'rotor_speeds')),
    ('thrust_max_n', _set('action', 'params', 'max_collective_thrust_n', 0.4)),
    ('action.params.hover_thrust_n', _set('action', 'params', 'hover_thrust_n', None)),
    ('default_joint_pos_rad', _set('default_joint_pos_rad', [0.0])),
    ('normalizer', _set('normalizer', 'external')),
    ('version', _set('version', 3)),
]


@pytest.mark.parametrize('field, edit', QUAD_CASES, ids=[c[0] for c in QUAD_CASES])
def test_quadrotor_contract_field_mismatch_is_named(field, edit, quad_policy, quad_contract,
                                                    quad_params_file, contract_variant):
    """One mutated contract field in the ONNX metadata -> ContractError naming that field."""
    path = contract_variant(quad_policy, quad_contract, edit)
    with pytest.raises(ContractError, match=field.replace('[', r'\[').replace(']', r'\]')):
        Runtime.from_files(path, quad_params_file)


def test_unmutated_contract_starts(quad_policy, quad_contract, quad_params_file,
                                   contract_variant):
    """The rewritten-but-unchanged contract loads: rate 100 Hz, period 0.01 s."""
    runtime = Runtime.from_files(contract_variant(quad_policy, quad_contract, lambda raw: None),
                                 quad_params_file)
    assert (runtime.rate_hz, runtime.period_s) == (100.0, 0.01)
    assert runtime.command_kind == 'thrust_body_rates'


JOINT_CASES = [
    ('joint_names[1]', _set('joint_names', 1, 'knee2')),
    ('robot_params.mass_kg', _set('robot_params', 'mass_kg', 2.5)),
    ('action.kind', _set('action', 'kind', 'thrust_body_rates')),
    ('action.params.alpha', _set('action', 'kind', 'joint_position_ema')),
    ('observations[3].size', _set('observations', 3, 'size', 4)),
    ('observations[5].size', _set('observations', 5, 'size', 7)),
]


@pytest.mark.parametrize('field, edit', JOINT_CASES, ids=[c[0] for c in JOINT_CASES])
def test_joint_contract_field_mismatch_is_named(field, edit, joint_policy, joint_contract,
                                                joint_params_file, contract_variant):
    """Joint robots: names are matched against the URDF, kinds against the interface."""
    path = contract_variant(joint_policy, joint_contract, edit)
    with pytest.raises(ContractError, match=field.replace('[', r'\[').replace(']', r'\]')):
        Runtime.from_files(path, joint_params_file)


PARAM_CASES = [
    (ContractError, 'policy_rate_hz', {'rate_hz': 50.0}),
    (ContractError, 'action.kind', {'command_interface': 'rotor_speeds'}),
    (ContractError, 'thrust_max_n', {'thrust_max_n': 0.6}),
    (ParamError, 'max_body_rate_rad_s', {'max_body_rate_rad_s': -1.0}),
    (ParamError, 'thrust_min_n', {'thrust_min_n': 0.6, 'thrust_max_n': 0.5}),
    (ParamError, 'geofence_min_m', {'geofence_min_m': [3.0, -2.0, 0.0]}),
    (ParamError, 'command_interface', {'command_interface': 'twist'}),
]


@pytest.mark.parametrize('error, field, overrides', PARAM_CASES, ids=[c[1] for c in PARAM_CASES])
def test_quadrotor_param_mismatch_is_named(error, field, overrides, quad_params_file):
    """A parameter outside the contract (or inconsistent) is refused by name."""
    with pytest.raises(error, match=field):
        Runtime.from_files(None, quad_params_file, overrides=overrides)


JOINT_PARAM_CASES = [
    (ContractError, 'joint_names\\[2\\]', {'joint_names': ['hip', 'knee', 'wrist']}),
    (ContractError, 'pos_min_rad\\[1\\]', {'pos_min_rad': [-0.8, -2.5, -2.0]}),
    (ParamError, 'kd', {'kd': [1.0, 1.0]}),
    (ParamError, 'fallback', {'fallback': 'freeze'}),
]


@pytest.mark.parametrize('error, field, overrides', JOINT_PARAM_CASES,
                         ids=[c[1] for c in JOINT_PARAM_CASES])
def test_joint_param_mismatch_is_named(error, field, overrides, joint_params_file):
    """Joint parameters: every contract joint needs an entry; limits inside the URDF's."""
    with pytest.raises(error, match=field):
        Runtime.from_files(None, joint_params_file, overrides=overrides)


@pytest.mark.parametrize('extra_obs, action_size, field', [
    (1, 4, 'observation_size'), (0, 3, 'action.size')])
def test_onnx_io_width_mismatch_is_named(extra_obs, action_size, field, deploy_dir,
                                         quad_contract, quad_params_file):
    """A graph one input wider (or 3 out) than its contract's (4 out) is refused by name."""
    obs_size = quad_contract.observation_size + extra_obs
    path = deploy_dir / f'io_{obs_size}_{action_size}.onnx'
    torch.onnx.export(torch.nn.Linear(obs_size, action_size).eval(),
                      (torch.zeros(1, obs_size),), str(path), input_names=['obs'],
                      output_names=['actions'], dynamo=False)
    onnx.save(bind_contract(onnx.load(str(path)), quad_contract), str(path))
    with pytest.raises(ContractError, match=field):
        Runtime.from_files(path, quad_params_file)
