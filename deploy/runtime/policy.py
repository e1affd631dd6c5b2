"""PolicyRunner: the ONNX policy on onnxruntime (one intra-op, one inter-op thread).

The contract is read from the model's metadata with ``sim2real.onnx_io``, which refuses a file
whose contract or graph changed after export, so the runtime needs neither torch nor
sim2real.export.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from sim2real.contract import Contract, ContractError
from sim2real.onnx_io import load_policy, read_contract

read_policy_contract = read_contract
"""The contract of an ONNX policy file (``sim2real.onnx_io.read_contract``)."""


def _width(shape, what: str, path: Path) -> int:
    """The static feature width of a (batch, width) tensor shape."""
    if len(shape) != 2 or not isinstance(shape[1], int):
        raise ContractError(f'{path}: policy {what} has shape {shape}, expected (batch, N)')
    return shape[1]


class PolicyRunner:
    """Runs the policy on one observation; reports the action and the inference wall time."""

    def __init__(self, path: str | Path):
        """Load the session and the contract in its metadata (its digest verified)."""
        self.path = Path(path)
        self.contract, self.session = load_policy(self.path)
        (inp,), (out,) = self.session.get_inputs(), self.session.get_outputs()
        self.input_name, self.output_name = inp.name, out.name
        self.input_size = _width(inp.shape, 'input', self.path)
        """Observation width of the graph."""
        self.output_size = _width(out.shape, 'output', self.path)
        """Action width of the graph."""

    def check_sizes(self, contract: Contract) -> None:
        """ContractError naming observation_size / action.size when the graph disagrees."""
        if self.input_size != contract.observation_size:
            raise ContractError(
                f'observation_size: the contract terms sum to {contract.observation_size}, '
                f'the ONNX input is {self.input_size} wide')
        if self.output_size != contract.action.size:
            raise ContractError(
                f'action.size: the contract says {contract.action.size}, '
                f'the ONNX output is {self.output_size} wide')

    def run(self, obs: np.ndarray) -> tuple[np.ndarray, float]:
        """(action float64 (A,), wall time [s]) for one observation (1, N) float32."""
        start = time.perf_counter()
        out = self.session.run([self.output_name], {self.input_name: obs})[0]
        wall_s = time.perf_counter() - start
        return np.asarray(out, dtype=np.float64).reshape(-1), wall_s
