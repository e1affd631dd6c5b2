"""Read a sim2real ONNX policy: its contract (metadata) and a CPU inference session.

Shared by the training side (export, eval) and the ROS-free deploy runtime, so it imports
only onnx, onnxruntime and the contract.
"""

from __future__ import annotations

from pathlib import Path

import onnx
import onnxruntime as ort

from sim2real.contract import CONTRACT_KEY, Contract, ContractError


def read_contract(path: str | Path) -> Contract:
    """The contract in an ONNX policy's metadata (the graph's weights are not loaded)."""
    try:
        model = onnx.load(str(path), load_external_data=False)
    except Exception as exc:  # onnx raises several types for bad files
        raise ContractError(f'{path}: not a readable ONNX file: {exc}') from exc
    meta = {p.key: p.value for p in model.metadata_props}
    if CONTRACT_KEY not in meta:
        raise ContractError(f'{path}: no "{CONTRACT_KEY}" metadata; not a sim2real policy')
    return Contract.from_json(meta[CONTRACT_KEY])


def cpu_session(path: str | Path) -> ort.InferenceSession:
    """An onnxruntime CPU session with one intra-op and one inter-op thread."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    try:
        return ort.InferenceSession(str(path), options, providers=['CPUExecutionProvider'])
    except Exception as exc:  # onnxruntime raises several types for bad files
        raise ContractError(f'{path}: not a loadable ONNX policy: {exc}') from exc
