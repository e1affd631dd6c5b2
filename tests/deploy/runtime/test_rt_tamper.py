"""Altered policy files are refused, naming what changed; physics catches re-bound lies.

Two layers. (1) The digest (sim2real/contract_digest.py): every leaf field of both shipped
contracts (quadrotor hover, quadruped flat) is mutated, every object key deleted, an unknown
key added, a weight of the graph changed, the digest removed: each file is refused, the
message starting with the changed field. (2) An exporter that wrote a wrong contract and
bound it (bind=True: the digest holds): the physics cross-checks refuse the cases the
hardening issue found accepted, by field. What a re-bound contract can still change without
physics noticing (observation scales, the action scale, the body-rate scale upwards, the
policy rate with a matching rate_hz) is refused by layer (1) only: no check can tell a
trained scale from another by the numbers alone.
"""

import json
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper
import pytest

from sim2real.assets import urdf_path
from sim2real.contract import CONTRACT_KEY, ContractError
from sim2real.contract_digest import DIGEST_KEY, metadata
from sim2real.deploy.runtime import PolicyRunner, Runtime

REPO = Path(__file__).resolve().parents[3]
SHIPPED = {'hover': 'policies/quadrotor_hover.onnx', 'quadruped': 'policies/quadruped_flat.onnx'}
CONFIG = {'hover': 'config/quadrotor.yaml', 'quadruped': 'config/quadruped.yaml'}


def walk(value, path=(), text=''):
    """(path tuple, path text, value) of every node below value, leaves and containers."""
    if isinstance(value, dict):
        for key, item in value.items():
            sub = f'{text}.{key}' if text else key
            yield (*path, key), sub, item
            yield from walk(item, (*path, key), sub)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield (*path, i), f'{text}[{i}]', item
            yield from walk(item, (*path, i), f'{text}[{i}]')


def mutated(value):
    """A different value of the same JSON kind."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value * 2 + 1 if value != -1.0 else 2.0
    if isinstance(value, str):
        return value + 'x'
    if value is None:
        return 1.0
    return [0.0] if isinstance(value, list) else {'x': 1.0}


def edited(raw, path, op):
    """A copy of raw with the node at path replaced ('set'), deleted ('del') or given an
    extra key ('add')."""
    raw = json.loads(json.dumps(raw))
    parent = raw
    for key in path[:-1]:
        parent = parent[key]
    if op == 'set':
        parent[path[-1]] = mutated(parent[path[-1]])
    elif op == 'del':
        del parent[path[-1]]
    else:
        parent[path[-1]]['unexpected'] = 1.0
    return raw


def cases(name):
    """(id, path, op, expected field prefix) of every mutation of a shipped contract."""
    model = onnx.load(str(REPO / SHIPPED[name]))
    raw = json.loads(metadata(model)[CONTRACT_KEY])
    out = []
    for path, text, value in walk(raw):
        if not isinstance(value, (dict, list)) or not value:
            out.append((f'{name}:set:{text}', path, 'set', text))
        if isinstance(path[-1], str):
            out.append((f'{name}:del:{text}', path, 'del', text))
        if isinstance(value, dict):
            out.append((f'{name}:add:{text}', path, 'add', f'{text}.unexpected'))
    return out


CASES = cases('hover') + cases('quadruped')


@pytest.fixture(scope='module')
def shipped(repo_root):
    """name -> (ONNX model, contract as JSON dict) of the shipped policies."""
    out = {}
    for name, rel in SHIPPED.items():
        model = onnx.load(str(repo_root / rel))
        out[name] = model, json.loads(metadata(model)[CONTRACT_KEY])
    return out


def test_every_field_of_both_shipped_contracts_is_covered():
    """The sweep mutates hundreds of fields: every leaf and every key of both contracts."""
    assert len(cases('hover')) > 100 and len(cases('quadruped')) > 300


@pytest.mark.parametrize('case_id, path, op, field', CASES, ids=[c[0] for c in CASES])
def test_any_edit_after_export_is_refused_naming_the_field(case_id, path, op, field,
                                                           shipped, tmp_path):
    """Changing, deleting or adding any contract field without the exporter: refused, the
    message starting with that field's path and saying the file was altered."""
    model, raw = shipped[case_id.split(':')[0]]
    variant = onnx.ModelProto()
    variant.CopyFrom(model)
    for prop in variant.metadata_props:
        if prop.key == CONTRACT_KEY:
            prop.value = json.dumps(edited(raw, path, op))
    onnx.save(variant, str(tmp_path / 'p.onnx'))
    with pytest.raises(ContractError) as info:
        PolicyRunner(tmp_path / 'p.onnx')
    assert str(info.value).startswith(field)
    assert 'was altered after export' in str(info.value)


def test_a_changed_weight_is_refused_naming_the_graph(shipped, tmp_path):
    """One weight of the first layer 1e-3 larger, contract untouched: refused as 'graph'."""
    model, _ = shipped['quadruped']
    variant = onnx.ModelProto()
    variant.CopyFrom(model)
    init = max(variant.graph.initializer, key=lambda t: np.prod(t.dims))
    weights = numpy_helper.to_array(init).copy()
    weights.flat[0] += 1e-3
    init.CopyFrom(numpy_helper.from_array(weights, init.name))
    onnx.save(variant, str(tmp_path / 'p.onnx'))
    with pytest.raises(ContractError, match=r'^graph \(the model outside its metadata: '
                                            r'operators, weights, fields\): .* altered'):
        PolicyRunner(tmp_path / 'p.onnx')


def strip_digest(model, path):
    """Save model without its digest record, as files exported before the digest were."""
    variant = onnx.ModelProto()
    variant.CopyFrom(model)
    kept = [(p.key, p.value) for p in variant.metadata_props if p.key != DIGEST_KEY]
    del variant.metadata_props[:]
    for key, value in kept:
        entry = variant.metadata_props.add()
        entry.key, entry.value = key, value
    onnx.save(variant, str(path))
    return path


def test_a_file_without_digest_is_refused_saying_how_to_re_export(shipped, tmp_path):
    """No digest (an export of an older sim2real): refused, naming both re-export commands."""
    path = strip_digest(shipped['hover'][0], tmp_path / 'old.onnx')
    with pytest.raises(ContractError) as info:
        PolicyRunner(path)
    assert str(info.value).startswith(f'{DIGEST_KEY}: ')
    assert '`sim2real export RUN_DIR`' in str(info.value)
    assert f'`sim2real export {path} --trust-graph`' in str(info.value)


def test_re_deriving_an_old_file_binds_the_same_graph(shipped, tmp_path):
    """`sim2real export old.onnx --trust-graph`: the task re-derives the contract, the graph
    is kept byte for byte (same graph SHA-256), and the written file loads and computes the
    same actions as the original on 1000 observations."""
    from sim2real.contract_digest import graph_sha256
    from sim2real.onnx_io import cpu_session
    from sim2real.policy_io import rebind_onnx
    model = shipped['hover'][0]
    path = strip_digest(model, tmp_path / 'old.onnx')
    out, graph, vouched = rebind_onnx(path, tmp_path / 'new.onnx', trust_graph=True)
    assert graph == graph_sha256(model) and vouched == 'unverified (--trust-graph)'
    contract = PolicyRunner(out).contract
    assert contract.task == 'quadrotor-hover'
    obs = np.random.default_rng(0).standard_normal((1000, contract.observation_size))
    obs = obs.astype(np.float32)
    a, b = (cpu_session(p).run(None, {'obs': obs})[0] for p in (path, out))
    np.testing.assert_array_equal(a, b)


def test_an_old_file_is_not_bound_without_trust(shipped, tmp_path):
    """An old file whose weights were edited (digest removed): re-binding is refused unless
    --trust-graph, and then the printed graph SHA-256 differs from the shipped one."""
    from sim2real.contract_digest import graph_sha256
    from sim2real.policy_io import rebind_onnx
    model = onnx.ModelProto()
    model.CopyFrom(shipped['hover'][0])
    init = max(model.graph.initializer, key=lambda t: np.prod(t.dims))
    weights = numpy_helper.to_array(init) * -3.0
    init.CopyFrom(numpy_helper.from_array(weights, init.name))
    path = strip_digest(model, tmp_path / 'edited.onnx')
    with pytest.raises(ContractError, match=r'^graph: .* has no digest.* --trust-graph'):
        rebind_onnx(path, tmp_path / 'new.onnx')
    _, graph, _ = rebind_onnx(path, tmp_path / 'new.onnx', trust_graph=True)
    assert graph != graph_sha256(shipped['hover'][0])


def test_re_deriving_refuses_a_contract_the_task_does_not_give(shipped, tmp_path):
    """An old file whose action scale was edited is not laundered: refused naming it."""
    from sim2real.policy_io import rebind_onnx
    model, raw = shipped['quadruped']
    variant = onnx.ModelProto()
    variant.CopyFrom(model)
    for prop in variant.metadata_props:
        if prop.key == CONTRACT_KEY:
            prop.value = json.dumps(edited(raw, ('action', 'params', 'scale'), 'set'))
    path = strip_digest(variant, tmp_path / 'old.onnx')
    with pytest.raises(ContractError, match=r'^action\.params\.scale: the contract in'):
        rebind_onnx(path, tmp_path / 'new.onnx', trust_graph=True)


# -- layer 2: contracts bound by an exporter that got them wrong --------------------------
def rebound(repo_root, tmp_path, name, edit):
    """A copy of a shipped policy whose contract went through edit(raw), bound again."""
    from sim2real.contract_digest import bind_contract_json
    model = onnx.load(str(repo_root / SHIPPED[name]))
    raw = json.loads(metadata(model)[CONTRACT_KEY])
    edit(raw)
    path = tmp_path / f'{name}.onnx'
    onnx.save(bind_contract_json(model, json.dumps(raw)), str(path))
    return path


def swap_joints(raw):
    """Swap FL_hip_joint and FL_thigh_joint in the joint order."""
    raw['joint_names'][0], raw['joint_names'][1] = raw['joint_names'][1], raw['joint_names'][0]


PHYSICS = [
    ('hover', 'robot_params.hover_thrust_n',
     lambda r: r['robot_params'].update(hover_thrust_n=0.5), 'vehicle hovers at m g'),
    ('hover', 'action.params.hover_thrust_n',
     lambda r: r['action']['params'].update(hover_thrust_n=0.3), 'robot_params.hover_thrust_n'),
    ('hover', 'action.params.max_collective_thrust_n',
     lambda r: r['action']['params'].update(max_collective_thrust_n=1.2), 'the rotor model'),
    ('hover', 'robot_params.rotors.thrust_coefficient',
     lambda r: r['robot_params']['rotors'].update(thrust_coefficient=3e-8), 'the URDF'),
    ('hover', 'max_body_rate_rad_s',
     lambda r: r['action']['params'].update(max_body_rate_rad_s=3.0), 'only tighten'),
    ('hover', 'robot_params.mass_kg', lambda r: r['robot_params'].update(mass_kg='0.027'),
     'must be numbers'),
    ('hover', 'action.params.max_body_rate_rad_s',
     lambda r: r['action']['params'].pop('max_body_rate_rad_s'), 'required'),
    ('quadruped', 'robot_params.joint_pos_limits_rad[0]', swap_joints,
     'the URDF says [-1.5708, 3.4907] for "FL_thigh_joint"'),
    ('quadruped', 'action.params.kp_nm_per_rad',
     lambda r: r['action']['params'].pop('kp_nm_per_rad'), 'required'),
    ('quadruped', 'action.params.kd_nm_s_per_rad',
     lambda r: r['action']['params'].pop('kd_nm_s_per_rad'), 'required'),
    ('quadruped', 'action.params.scale', lambda r: r['action']['params'].pop('scale'),
     'required'),
    ('quadruped', 'robot_params.foot_names', lambda r: r['robot_params'].pop('foot_names'),
     'leg-odometry latch'),
    ('quadruped', 'robot_params.joint_pos_limits_rad[2]',
     lambda r: r['robot_params']['joint_pos_limits_rad'][2].__setitem__(0, -3.0),
     'the URDF says [-2.7227, -0.83776] for "FL_calf_joint"'),
    ('quadruped', 'default_joint_pos_rad[2]',
     lambda r: (r['default_joint_pos_rad'].__setitem__(2, -0.5),
                r['action']['params']['default_joint_pos_rad'].__setitem__(2, -0.5)),
     'outside the URDF limits'),
    ('quadruped', 'action.params.default_joint_pos_rad',
     lambda r: r['action']['params']['default_joint_pos_rad'].__setitem__(0, 0.2),
     'default_joint_pos_rad'),
    ('quadruped', 'robot_params.mass_kg', lambda r: r['robot_params'].pop('mass_kg'),
     'required'),
]


@pytest.mark.parametrize('name, field, edit, words', PHYSICS, ids=[c[1] for c in PHYSICS])
def test_a_bound_contract_that_lies_about_physics_is_refused(
        name, field, edit, words, repo_root, tmp_path):
    """Bound (the digest holds) but contradicting the URDF, itself or the parameter file:
    refused at node start-up, the message starting with the field."""
    path = rebound(repo_root, tmp_path, name, edit)
    with pytest.raises(ContractError) as info:
        Runtime.from_files(path, repo_root / CONFIG[name])
    assert str(info.value).startswith(field)
    assert words in str(info.value)


def test_bound_shipped_contracts_start(repo_root, tmp_path):
    """Control: both shipped contracts, bound again unchanged, start against their configs."""
    for name in SHIPPED:
        path = rebound(repo_root, tmp_path, name, lambda raw: None)
        assert Runtime.from_files(path, repo_root / CONFIG[name]).contract.robot


@pytest.mark.parametrize('overrides, field', [
    ({'torque_limit_nm': [100.0] * 12}, 'torque_limit_nm[0]: parameter 100.0 N m'),
    ({'max_rate_rad_s': [40.0] * 12}, 'max_rate_rad_s[0]: parameter 40.0 rad/s'),
])
def test_parameter_limits_may_only_tighten(overrides, field, repo_root):
    """torque_limit_nm 100 against URDF efforts of 23.7 / 45.43 N m, rates above the URDF's
    30.1 / 15.7 rad/s: refused, naming the parameter and the URDF limit."""
    with pytest.raises(ContractError, match=field.replace('[', r'\[').replace(']', r'\]')):
        Runtime.from_files(repo_root / SHIPPED['quadruped'], repo_root / CONFIG['quadruped'],
                           overrides=overrides)


def test_the_urdf_is_the_reference_for_the_rotor_model(repo_root, tmp_path):
    """A URDF without the rotor model the contract states: refused naming robot_params.rotors."""
    src = urdf_path('quadrotor').read_text()
    start, end = src.index('\n  <sim2real>'), src.index('</sim2real>') + len('</sim2real>')
    path = tmp_path / 'bare.urdf'
    path.write_text(src[:start] + src[end:])
    from sim2real.deploy.runtime.physics_check import check_rotor_physics
    contract = PolicyRunner(repo_root / SHIPPED['hover']).contract
    with pytest.raises(ContractError, match=r'^robot_params\.rotors: .*no <sim2real>'):
        check_rotor_physics(contract, path)


def test_re_deriving_keeps_the_graph_and_adds_the_training_bands(tmp_path):
    """A fresh export, its digest stripped, then re-derived: the same graph, a contract
    that differs from the export's only in the bands it now carries, and a second
    re-derivation writes the same bytes (the bands' rollouts are seeded)."""
    from sim2real.contract_digest import contract_differences, graph_sha256
    from sim2real.export.onnx_policy import export_onnx
    from sim2real.mdp.contract import contract_from_env
    from sim2real.onnx_io import read_contract
    from sim2real.policy_io import rebind_onnx
    from sim2real.training import build_env
    from tests.deploy.conftest import tiny_policy
    contract = contract_from_env(build_env('quadrotor-hover', seed=0, num_envs=1,
                                           num_threads=1))
    fresh = export_onnx(tiny_policy(contract.observation_size, 4), contract,
                        tmp_path / 'fresh.onnx')
    old = strip_digest(onnx.load(str(fresh)), tmp_path / 'old.onnx')
    again, _, _ = rebind_onnx(old, tmp_path / 'again.onnx', trust_graph=True)
    assert graph_sha256(onnx.load(str(again))) == graph_sha256(onnx.load(str(fresh)))
    bound = read_contract(again)
    assert contract_differences(bound, read_contract(fresh)) == []
    assert all(term.band is not None for term in bound.observations)
    twice, _, _ = rebind_onnx(again, tmp_path / 'twice.onnx')
    assert twice.read_bytes() == again.read_bytes()
