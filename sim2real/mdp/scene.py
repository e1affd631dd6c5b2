"""What a task's scene offers the env and the exporter: the robot it simulates.

A scene owns the simulation backend, the robot's actuators and the state the terms read;
`RLEnv` drives it and `contract_from_env` reads its robot description.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import torch


@runtime_checkable
class Scene(Protocol):
    """A task's simulated robot."""

    robot_name: str
    """The robot's name (the URDF's robot element)."""
    urdf_sha256: str
    """SHA-256 of the URDF the model was built from."""

    def robot_description(self) -> dict:
        """For the contract: joint_names (policy order), default_joint_pos_rad (same order,
        [rad]) and robot_params (nominal physical values, with units in their names)."""

    def reset(self, env_ids: torch.Tensor) -> None:
        """Reset the simulations of env_ids."""

    def simulate(self, num_substeps: int, before_substep) -> None:
        """Advance every simulation num_substeps physics steps, calling before_substep(dt)."""

    def refresh(self, env_ids: torch.Tensor | None = None) -> None:
        """Derive the state the terms read from the simulation (all envs, or env_ids)."""
