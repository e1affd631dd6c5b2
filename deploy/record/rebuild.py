"""Rebuild the node a flight log was recorded by: its parameters, policy and URDF come from
the log's attachments (checked against the SHA-256 its metadata holds), or the policy from
another file (what that policy would have done on the same data)."""

from __future__ import annotations

from dataclasses import dataclass
import hashlib
from pathlib import Path

import yaml

from sim2real.deploy.record.node_recorder import METADATA
from sim2real.deploy.record.reader import LogContents, read_log


@dataclass
class Rebuilt:
    """A runtime rebuilt from a log, and whether it runs the logged policy."""

    runtime: object
    same_policy: bool
    policy_sha256: str
    logged_policy_sha256: str


def _sha256(data: bytes) -> str:
    """Hex SHA-256."""
    return hashlib.sha256(data).hexdigest()


def read_logs(path: str | Path) -> LogContents:
    """One log file, or every .mcap file of a folder (a recording rotated into several) in
    name order, as one; the first damage found ends the reading."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f'no flight log {path}')
    files = sorted(path.glob('*.mcap')) if path.is_dir() else [path]
    if not files:
        raise FileNotFoundError(f'{path}: no .mcap file in the folder')
    merged = read_log(files[0])
    for extra in files[1:]:
        if merged.damage:
            break
        more = read_log(extra)
        merged.messages += more.messages
        merged.schemas.update(more.schemas)
        merged.damage = more.damage
    return merged


def rebuild_runtime(contents: LogContents, workdir: Path, policy: str | Path | None = None
                    ) -> Rebuilt:
    """A fresh Runtime of the logged node (ValueError naming what is missing or differs)."""
    from sim2real.deploy.runtime import Runtime
    meta = contents.metadata.get(METADATA)
    files = contents.attachments
    if meta is None or 'params.yaml' not in files or 'policy.onnx' not in files:
        raise ValueError(f'{contents.path}: not a sim2real flight log (no "{METADATA}" '
                         'metadata with params.yaml and policy.onnx attached)')
    logged = meta['policy_sha256']
    attached = _sha256(files['policy.onnx'])
    if attached != logged:
        raise ValueError(f'{contents.path}: the attached policy hashes to {attached}, the '
                         f'log says the node ran {logged}: the log was altered')
    sections = yaml.safe_load(files['params.yaml'])
    values = dict(next(iter(sections.values()))['ros__parameters'])
    workdir.mkdir(parents=True, exist_ok=True)
    if policy is None:
        policy_path = workdir / 'policy.onnx'
        policy_path.write_bytes(files['policy.onnx'])
    else:
        policy_path = Path(policy)
        if not policy_path.is_file():
            raise FileNotFoundError(f'--policy {policy_path} does not exist')
    if 'robot.urdf' in files:
        urdf = workdir / 'robot.urdf'
        urdf.write_bytes(files['robot.urdf'])
        values['urdf_file'] = str(urdf)
    values.update(policy_file=str(policy_path), record=False)
    runtime = Runtime.from_values(values)
    sha = _sha256(policy_path.read_bytes())
    return Rebuilt(runtime, sha == logged, sha, logged)
