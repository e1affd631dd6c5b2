"""The digest that binds a policy's contract to its graph, so an edited file is refused.

``export`` writes, beside the contract (``CONTRACT_KEY``), a JSON record under ``DIGEST_KEY``:
the SHA-256 of the graph (the ONNX model without its metadata: operators, weights, inputs
and outputs), the SHA-256 of the contract's canonical JSON, and a short hash of every leaf
field of the contract ('observations[2].scale', 'joint_names[0]', ...). A reader recomputes
them: a file whose contract or graph changed after export is refused, and the leaf hashes
name the fields that changed.

This detects edits, corruption and mix-ups (a contract pasted onto another graph); it is not a
signature: whoever knows this module can recompute a digest, so files from an untrusted
source need a signature on top (out of scope here).
"""

from __future__ import annotations

import hashlib
import json

import onnx

from sim2real.contract import Contract, CONTRACT_KEY, ContractError, parse_json

DIGEST_KEY = 'sim2real.digest'
DIGEST_VERSION = 1
FIELD_HASH_CHARS = 16
"""Hex characters kept of each leaf's SHA-256 (64 bits: a changed field is always named)."""
LISTED = 8
"""Changed fields named in a refusal before '... and N more'."""


def reexport_hint(where: str) -> str:
    """How to re-export a refused file, in the user's terms."""
    return ('re-export it from its run directory (`sim2real export RUN_DIR`); without the '
            f'run, `sim2real export {where} --trust-graph` binds the contract its task gives '
            'to this graph unverified (compare the graph_sha256 it prints with the one you '
            'expect)')


def canonical_json(value) -> str:
    """The one JSON text of value that every digest is computed over (sorted, compact)."""
    return json.dumps(value, sort_keys=True, separators=(',', ':'), ensure_ascii=False,
                      allow_nan=False)


def sha256_text(text: str) -> str:
    """Hex SHA-256 of UTF-8 text."""
    return hashlib.sha256(text.encode('utf-8')).hexdigest()


def leaf_fields(value, path: str = '') -> dict:
    """Every leaf of parsed JSON by path ('action.params.kp_nm_per_rad[3]'); empty
    containers are leaves too, so removing the last element of a list is seen."""
    if isinstance(value, dict) and value:
        items = ((f'{path}.{key}' if path else key, item) for key, item in value.items())
    elif isinstance(value, list) and value:
        items = ((f'{path}[{i}]', item) for i, item in enumerate(value))
    else:
        return {path: value}
    out = {}
    for sub_path, item in items:
        out.update(leaf_fields(item, sub_path))
    return out


def field_hashes(raw: dict) -> dict[str, str]:
    """Short hash of every leaf field of a parsed contract, by path."""
    return {path: sha256_text(canonical_json(value))[:FIELD_HASH_CHARS]
            for path, value in leaf_fields(raw).items()}


def graph_sha256(model: onnx.ModelProto) -> str:
    """SHA-256 of the model without its metadata (deterministic protobuf serialization)."""
    bare = onnx.ModelProto()
    bare.CopyFrom(model)
    del bare.metadata_props[:]
    return hashlib.sha256(bare.SerializeToString(deterministic=True)).hexdigest()


def metadata(model: onnx.ModelProto) -> dict[str, str]:
    """The model's metadata_props as a dict."""
    return {prop.key: prop.value for prop in model.metadata_props}


def digest_record(model: onnx.ModelProto, contract_json: str) -> dict:
    """The digest record of a graph and a contract's JSON text."""
    raw = parse_json(contract_json)
    return {'version': DIGEST_VERSION, 'algorithm': 'sha256',
            'graph_sha256': graph_sha256(model),
            'contract_sha256': sha256_text(canonical_json(raw)),
            'fields': field_hashes(raw)}


def bind_contract(model: onnx.ModelProto, contract: Contract) -> onnx.ModelProto:
    """Write contract and its digest over model's graph into model's metadata (in place)."""
    return bind_contract_json(model, contract.to_json())


def bind_contract_json(model: onnx.ModelProto, text: str) -> onnx.ModelProto:
    """bind_contract for contract JSON text as it is (tests bind malformed contracts)."""
    record = canonical_json(digest_record(model, text))
    kept = [(p.key, p.value) for p in model.metadata_props
            if p.key not in (CONTRACT_KEY, DIGEST_KEY)]
    del model.metadata_props[:]
    for key, value in [*kept, (CONTRACT_KEY, text), (DIGEST_KEY, record)]:
        entry = model.metadata_props.add()
        entry.key, entry.value = key, value
    return model


def verified_contract(model: onnx.ModelProto, where: str) -> Contract:
    """The contract of model after its digest verified; ContractError naming what differs."""
    meta = metadata(model)
    if CONTRACT_KEY not in meta:
        raise ContractError(f'{where}: no "{CONTRACT_KEY}" metadata; not a sim2real policy')
    text = meta[CONTRACT_KEY]
    raw = parse_json(text)
    if DIGEST_KEY not in meta:
        raise ContractError(
            f'{DIGEST_KEY}: {where} carries no digest binding its contract to its graph '
            f'(exported before sim2real wrote one); {reexport_hint(where)}')
    stored = _read_record(meta[DIGEST_KEY], where)
    problems = _differences(stored, digest_record(model, text))
    if problems:
        raise ContractError(f'{problems[0]}: {where} was altered after export (changed: '
                            f'{_join(problems)}); re-export it from its run directory '
                            f'(`sim2real export RUN_DIR`)')
    return Contract.from_raw(raw)


def stored_graph_sha256(model: onnx.ModelProto, where: str) -> str | None:
    """The graph SHA-256 the digest record holds (None for a file without a record)."""
    text = metadata(model).get(DIGEST_KEY)
    return None if text is None else _read_record(text, where)['graph_sha256']


def _read_record(text: str, where: str) -> dict:
    """The stored digest record, checked for form."""
    try:
        record = json.loads(text)
    except json.JSONDecodeError:
        record = None
    keys = ('version', 'algorithm', 'graph_sha256', 'contract_sha256', 'fields')
    if not isinstance(record, dict) or any(k not in record for k in keys) or not isinstance(
            record['fields'], dict):
        raise ContractError(f'{DIGEST_KEY}: the digest record of {where} is malformed')
    if record['version'] != DIGEST_VERSION or record['algorithm'] != 'sha256':
        raise ContractError(f'{DIGEST_KEY}: version {record["version"]!r} / algorithm '
                            f'{record["algorithm"]!r} is not what this sim2real reads '
                            f'({DIGEST_VERSION} / sha256)')
    return record


def _differences(stored: dict, current: dict) -> list[str]:
    """What differs between two digest records: field paths, 'graph', or the record itself."""
    problems = []
    if stored['contract_sha256'] != current['contract_sha256']:
        old, new = stored['fields'], current['fields']
        problems += [path for path in sorted(set(old) | set(new)) if old.get(path) != new.get(
            path)] or [f'{DIGEST_KEY}.contract_sha256']
    if stored['graph_sha256'] != current['graph_sha256']:
        problems.append('graph (the model outside its metadata: operators, weights, fields)')
    return problems


def _join(items: list[str]) -> str:
    """The first LISTED items joined with ', ' and '... and N more'."""
    head = ', '.join(items[:LISTED])
    return head if len(items) <= LISTED else f'{head} and {len(items) - LISTED} more'


def contract_differences(ours: Contract, theirs: Contract) -> list[str]:
    """Leaf fields of two contracts that differ, term docstrings and training bands aside
    (they explain and describe; they do not change what the policy reads)."""
    a = leaf_fields(json.loads(ours.to_json()))
    b = leaf_fields(json.loads(theirs.to_json()))
    return [path for path in sorted(set(a) | set(b)) if not _descriptive(path)
            and a.get(path, KeyError) != b.get(path, KeyError)]


def _descriptive(path: str) -> bool:
    """Whether a leaf path is a term's docstring or part of its training band."""
    return path.endswith('.doc') or path.endswith('.band') or '.band.' in path
