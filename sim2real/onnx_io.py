"""Read a sim2real ONNX policy: its verified contract (metadata) and a CPU inference session.

Shared by the training side (export, eval) and the ROS-free deploy runtime, so it imports
only onnx, onnxruntime and the contract. Every reader verifies the digest that binds the
contract to the graph (``sim2real.contract_digest``): an edited file is refused.
"""

from __future__ import annotations

from pathlib import Path

import onnx
import onnxruntime as ort

from sim2real.contract import Contract, ContractError
from sim2real.contract_digest import verified_contract


def load_model(path: str | Path) -> onnx.ModelProto:
    """The ONNX model of a file; ContractError naming the file when it is not ONNX."""
    try:
        return onnx.load(str(path))
    except Exception as exc:  # onnx raises several types for bad files
        raise ContractError(f'{path}: not a readable ONNX file: {exc}') from exc


def read_contract(path: str | Path) -> Contract:
    """The contract of an ONNX policy, after its digest verified against the graph."""
    return verified_contract(load_model(path), str(path))


def cpu_session(source: str | Path | bytes, where: str = '') -> ort.InferenceSession:
    """An onnxruntime CPU session (one intra-op, one inter-op thread) of a path or bytes."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    where = where or ('policy bytes' if isinstance(source, bytes) else str(source))
    try:
        return ort.InferenceSession(source if isinstance(source, bytes) else str(source),
                                    options, providers=['CPUExecutionProvider'])
    except Exception as exc:  # onnxruntime raises several types for bad files
        raise ContractError(f'{where}: not a loadable ONNX policy: {exc}') from exc


def load_policy(path: str | Path) -> tuple[Contract, ort.InferenceSession]:
    """(verified contract, CPU session) of a policy file, both from the same bytes read once."""
    model = load_model(path)
    contract = verified_contract(model, str(path))
    return contract, cpu_session(model.SerializeToString(), str(path))
