"""The deployment contract: JSON round trip and errors that name the field at fault."""

import json

import pytest

from sim2real.contract import (
    ActionSpec, Contract, CONTRACT_VERSION, ContractError, file_sha256, ObservationTermSpec,
    TermBand)


@pytest.fixture
def contract():
    """A small contract with three observation terms of different history lengths."""
    return Contract(
        task='quadrotor-hover', robot='crazyflie21', urdf_sha256='ab' * 32,
        policy_rate_hz=100.0, physics_rate_hz=500.0, joint_names=[],
        default_joint_pos_rad=[],
        observations=[
            ObservationTermSpec('position_error_w', 3, clip=2.0, noise_std=0.01),
            ObservationTermSpec('rotation_matrix', 9, history_length=2),
            ObservationTermSpec('last_action', 4, scale=0.5, history_length=3)],
        action=ActionSpec('thrust_body_rates', 4, params={'max_body_rate_rad_s': 6.0}),
        robot_params={'mass_kg': 0.027})


def _raw(contract):
    """The contract as a mutable JSON dict."""
    return json.loads(contract.to_json())


def refusal(contract, path, value) -> str:
    """The ContractError message of the contract with raw[path...] = value."""
    raw = _raw(contract)
    parent = raw
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    with pytest.raises(ContractError) as info:
        Contract.from_json(json.dumps(raw))
    return str(info.value)


def test_json_round_trip_is_equal(contract):
    """from_json(to_json(c)) == c, and serializing again gives the same string."""
    text = contract.to_json()
    back = Contract.from_json(text)
    assert back == contract
    assert isinstance(back.observations[1], ObservationTermSpec)
    assert isinstance(back.action, ActionSpec)
    assert back.to_json() == text


def test_observation_size_sums_size_times_history(contract):
    """observation_size = 3*1 + 9*2 + 4*3 = 33."""
    assert contract.observation_size == 33


def test_unknown_observation_field_is_named(contract):
    """A misspelt field 'sclae' in observations[0] is reported with its place and name."""
    raw = _raw(contract)
    raw['observations'][0]['sclae'] = 2.0
    with pytest.raises(ContractError) as info:
        Contract.from_json(json.dumps(raw))
    assert str(info.value) == "observations[0]: unknown field(s) ['sclae']"


@pytest.mark.parametrize('where, message', [
    ('contract', "contract: unknown field(s) ['extra']"),
    ('action', "action: unknown field(s) ['extra']"),
])
def test_unknown_top_level_and_action_fields_are_named(contract, where, message):
    """Unknown fields at the top level and in the action spec name their place."""
    raw = _raw(contract)
    (raw if where == 'contract' else raw['action'])['extra'] = 1
    with pytest.raises(ContractError) as info:
        Contract.from_json(json.dumps(raw))
    assert str(info.value) == message


@pytest.mark.parametrize('version', [CONTRACT_VERSION + 1, None, '1', 0, True])
def test_wrong_version_is_rejected_naming_version(contract, version):
    """A version other than the integers 1 and CONTRACT_VERSION (2) is refused, naming
    'version'."""
    raw = _raw(contract)
    raw['version'] = version
    with pytest.raises(ContractError) as info:
        Contract.from_json(json.dumps(raw))
    assert f'contract field "version" is {version!r}' in str(info.value)


def test_missing_version_is_rejected(contract):
    """A contract without 'version' is refused (read as None)."""
    raw = _raw(contract)
    del raw['version']
    with pytest.raises(ContractError, match='"version" is None'):
        Contract.from_json(json.dumps(raw))


@pytest.mark.parametrize('path, message', [
    (('observations', 1, 'size'), 'observations[1].size: missing from the contract'),
    (('observations', 1, 'scale'), 'observations[1].scale: missing from the contract'),
    (('action', 'kind'), 'action.kind: missing from the contract'),
    (('action', 'clip'), 'action.clip: missing from the contract'),
    (('robot',), 'robot: missing from the contract'),
])
def test_missing_field_is_named_not_defaulted(contract, path, message):
    """Deleting any field (size, scale, kind, clip, robot) is refused naming its path: a
    field with a default in code is still required in a file, so it never silently becomes
    1.0 or None."""
    raw = _raw(contract)
    parent = raw
    for key in path[:-1]:
        parent = parent[key]
    del parent[path[-1]]
    with pytest.raises(ContractError) as info:
        Contract.from_json(json.dumps(raw))
    assert str(info.value) == f'{message} (every field is required)'


@pytest.mark.parametrize('path, value, message', [
    (('observations', 0, 'scale'), '2', 'observations[0].scale: must be a number, got a '
                                        'string "2"'),
    (('observations', 0, 'clip'), True, 'observations[0].clip: must be a number, got true '
                                        '(a boolean)'),
    (('joint_names',), 'hip', 'joint_names: must be a list, got a string "hip"'),
    (('action', 'size'), 4.0, 'action.size: must be an integer, got a number 4.0'),
    (('action',), [], 'action: must be an object, got a list []'),
    (('robot_params',), None, 'robot_params: must be an object, got null'),
])
def test_wrong_type_is_named_in_json_terms(contract, path, value, message):
    """A field of the wrong JSON type is refused with its path and the type in JSON words,
    not a Python exception from deep inside the runtime."""
    assert refusal(contract, path, value) == message


@pytest.mark.parametrize('literal', ['NaN', 'Infinity', '-Infinity', '1e400'])
def test_a_non_finite_number_is_refused_naming_its_field(contract, literal):
    """NaN, +-Infinity (JSON extensions) and 1e400 (beyond float range) in a nested action
    parameter: refused naming action.params.max_body_rate_rad_s."""
    text = contract.to_json().replace('6.0', literal)
    with pytest.raises(ContractError) as info:
        Contract.from_json(text)
    assert str(info.value) == 'action.params.max_body_rate_rad_s: must be a finite number'


@pytest.mark.parametrize('path, value, message', [
    (('action', 'clip'), 0.0, 'action.clip: must be positive, got 0.0'),
    (('action', 'clip'), -1.0, 'action.clip: must be positive, got -1.0'),
    (('action', 'size'), 0, 'action.size: must be positive, got 0'),
    (('observations', 1, 'clip'), -1.0, 'observations[1].clip: must be positive, got -1.0'),
    (('observations', 2, 'noise_std'), -5.0,
     'observations[2].noise_std: must be non-negative, got -5.0'),
    (('observations', 0, 'history_length'), 0,
     'observations[0].history_length: must be positive, got 0'),
    (('policy_rate_hz',), 0.0, 'policy_rate_hz: must be positive, got 0.0'),
])
def test_a_value_out_of_range_is_refused(contract, path, value, message):
    """A clip of 0 or -1 (np.clip would pin every output to -1: zero thrust), a negative
    noise, an empty term or a zero rate: refused naming the field."""
    assert refusal(contract, path, value) == message


def test_invalid_json_is_contract_error():
    """Text that is not JSON raises ContractError, not a JSONDecodeError."""
    with pytest.raises(ContractError, match='not valid JSON'):
        Contract.from_json('{"task": ')


def test_file_sha256_of_known_bytes(tmp_path):
    """file_sha256 of b'abc' is the FIPS 180-2 test vector ba7816bf...f20015ad."""
    path = tmp_path / 'abc.bin'
    path.write_bytes(b'abc')
    assert file_sha256(path) == (
        'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')


def _banded(contract):
    """The fixture with a training band on its first term (3 elements)."""
    contract.observations[0].band = TermBand(low=[-1.0, -2.0, -3.0], high=[1.0, 2.0, 3.0],
                                             mean=[0.0, 0.1, 0.2], std=[0.3, 0.4, 0.5],
                                             samples=65536)
    return contract


def test_a_band_survives_the_round_trip(contract):
    """A term's band comes back as a TermBand with its numbers; the other terms' stay None."""
    back = Contract.from_json(_banded(contract).to_json())
    assert back.observations[0].band == TermBand([-1.0, -2.0, -3.0], [1.0, 2.0, 3.0],
                                                 [0.0, 0.1, 0.2], [0.3, 0.4, 0.5], 65536)
    assert back.observations[1].band is None
    assert back.version == 2


def test_a_version_1_contract_reads_as_version_2_without_bands(contract):
    """A contract written before bands existed (version 1, no "band" fields) reads with
    every band None; one with a "band" field anyway keeps it."""
    raw = _raw(contract)
    raw['version'] = 1
    for term in raw['observations']:
        del term['band']
    back = Contract.from_json(json.dumps(raw))
    assert back.version == CONTRACT_VERSION == 2
    assert [t.band for t in back.observations] == [None, None, None]
    assert back.observations == contract.observations


def test_a_version_2_contract_needs_the_band_field(contract):
    """Version 2 names a term without its "band" field (null when not measured)."""
    raw = _raw(contract)
    del raw['observations'][2]['band']
    with pytest.raises(ContractError, match=r'observations\[2\]\.band: missing'):
        Contract.from_json(json.dumps(raw))


@pytest.mark.parametrize('path, value, message', [
    (('low',), [-1.0, -2.0], 'observations[0].band.low: must hold the 3 elements of the term, '
                             'got 2'),
    (('high', 1), -2.5, 'observations[0].band.low[1]: -2.0 is above high[1] -2.5'),
    (('std', 2), -0.1, 'observations[0].band.std[2]: must be non-negative, got -0.1'),
    (('samples',), 0, 'observations[0].band.samples: must be positive, got 0'),
    (('mean', 0), 'x', 'observations[0].band.mean[0]: must be a number'),
])
def test_a_malformed_band_is_refused_naming_the_field(contract, path, value, message):
    """Band figures that cannot describe the term are refused with their place."""
    assert refusal(_banded(contract), ('observations', 0, 'band', *path), value).startswith(
        message)
