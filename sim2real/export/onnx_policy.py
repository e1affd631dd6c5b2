"""ONNX export of a trained policy: normalizer inside the graph, contract in the metadata."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import onnx
import torch
from torch import nn

from sim2real.atomic import atomic_path
from sim2real.contract import Contract
from sim2real.contract_digest import bind_contract
from sim2real.onnx_io import cpu_session as onnx_session
from sim2real.onnx_io import read_contract

__all__ = ['export_onnx', 'ExportError', 'INPUT_NAME', 'onnx_callable', 'onnx_session',
           'OUTPUT_NAME', 'read_contract', 'verify_onnx']

log = logging.getLogger(__name__)

INPUT_NAME = 'obs'
OUTPUT_NAME = 'actions'
OPSET = 17


class ExportError(RuntimeError):
    """The exported graph does not reproduce the torch policy."""


def export_onnx(policy: nn.Module, contract: Contract, path: str | Path) -> Path:
    """Write policy to path as ONNX with the contract and its digest over the graph inside."""
    path = Path(path)
    policy = policy.eval()
    dummy = torch.zeros(1, contract.observation_size)
    with atomic_path(path) as tmp:
        torch.onnx.export(
            policy, (dummy,), str(tmp), input_names=[INPUT_NAME], output_names=[OUTPUT_NAME],
            dynamic_axes={INPUT_NAME: {0: 'batch'}, OUTPUT_NAME: {0: 'batch'}},
            opset_version=OPSET, dynamo=False)
        model = onnx.load(str(tmp))
        model.producer_name = 'sim2real'
        onnx.checker.check_model(model)
        onnx.save(bind_contract(model, contract), str(tmp))
    return path


def onnx_callable(source, where: str = ''):
    """A torch-in, torch-out callable running an ONNX policy (path, bytes or model) on
    onnxruntime's CPU provider."""
    if isinstance(source, onnx.ModelProto):
        source = source.SerializeToString()
    session = onnx_session(source, where)

    def act(obs: torch.Tensor) -> torch.Tensor:
        out = session.run([OUTPUT_NAME],
                          {INPUT_NAME: obs.cpu().numpy().astype(np.float32)})[0]
        return torch.from_numpy(out).to(obs.device)
    return act


def verify_onnx(policy: nn.Module, path: str | Path, num_samples: int = 1000,
                tolerance: float = 1e-5, seed: int = 0) -> float:
    """Max |onnx - torch| over random observations; raises ExportError above tolerance."""
    session = onnx_session(path)
    size = session.get_inputs()[0].shape[1]
    gen = torch.Generator().manual_seed(seed)
    obs = 3.0 * torch.randn(num_samples, size, generator=gen)
    with torch.no_grad():
        expected = policy.eval()(obs).numpy()
    got = session.run([OUTPUT_NAME], {INPUT_NAME: obs.numpy()})[0]
    max_abs = float(np.max(np.abs(got - expected)))
    if not max_abs <= tolerance:
        raise ExportError(f'{path}: onnxruntime differs from torch by {max_abs:.3g} '
                          f'(> {tolerance:g}) on {num_samples} observations')
    return max_abs
