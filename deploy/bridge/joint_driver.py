"""A joint-level servo driver in front of a simulated robot, as a ros2_control forward
position controller and its motor drivers behave.

It tracks position targets with the training PD (a numpy ``JointActuator``), takes per-joint
gains where the hardware has kp / kd command interfaces, refuses non-finite or mis-sized
commands (counted), and runs the command watchdog ``forward_command_controller`` lacks: once
targets have arrived, ``command_timeout_s`` without one switches to damping (kp 0, kd
``damping_kd``; event 'watchdog') until the next target. Any joint robot's twin uses it.
"""

from __future__ import annotations

import mujoco
import numpy as np

from sim2real.deploy.bridge.faults import BridgeEvent
from sim2real.sim.joint_actuator import JointActuator


class JointDriver:
    """Targets, gains and the command watchdog of one simulated robot's joints."""

    def __init__(self, actuator: JointActuator, damping_kd: float, command_timeout_s: float):
        """actuator: one robot's PD (1 env), its gains the driver's nominal ones."""
        self.actuator = actuator
        self.size = actuator.num_joints
        self.nominal_kp = actuator.kp_nm_per_rad.copy()
        self.nominal_kd = actuator.kd_nm_s_per_rad.copy()
        self.damping_kd = damping_kd
        self.command_timeout_s = command_timeout_s
        self.rejected_commands = 0
        """Non-finite or wrongly sized commands refused since construction."""
        self.events: list[BridgeEvent] = []
        self.reset(np.zeros(self.size))

    def reset(self, pose_rad: np.ndarray, now_s: float | None = None) -> None:
        """Hold pose_rad with the nominal gains; no command yet (event 'reset' at now_s)."""
        self.actuator.reset(slice(None), np.asarray(pose_rad, dtype=np.float64))
        self.commanded_kp, self.commanded_kd = self.nominal_kp.copy(), self.nominal_kd.copy()
        self._set_gains(self.commanded_kp, self.commanded_kd)
        self.failsafe = False
        self.last_command_s: float | None = None
        if now_s is not None:
            self.events.append(BridgeEvent('reset', '', now_s))

    def _set_gains(self, kp, kd) -> None:
        """The gains the PD uses now."""
        self.actuator.kp_nm_per_rad[:] = kp
        self.actuator.kd_nm_s_per_rad[:] = kd

    def _valid(self, values) -> np.ndarray | None:
        """values as a (joints,) float64 array, or None (counted) when non-finite or
        mis-sized."""
        array = np.asarray(values, dtype=np.float64).reshape(-1)
        if array.shape != (self.size,) or not np.all(np.isfinite(array)):
            self.rejected_commands += 1
            return None
        return array

    def set_targets(self, values, now_s: float) -> bool:
        """Position targets [rad], the controller's joint order; False (refused, counted)
        if non-finite or mis-sized. A target ends a watchdog failsafe."""
        target = self._valid(values)
        if target is None:
            return False
        self.actuator.target_rad[0] = target
        self.last_command_s = now_s
        if self.failsafe:
            self.failsafe = False
            self._set_gains(self.commanded_kp, self.commanded_kd)
        return True

    def set_gains(self, kind: str, values) -> bool:
        """kp [N m/rad] or kd [N m s/rad] per joint; False if invalid or < 0."""
        gains = self._valid(values)
        if gains is None or np.any(gains < 0.0):
            return False
        if kind == 'kp':
            self.commanded_kp[0] = gains
        else:
            self.commanded_kd[0] = gains
        if not self.failsafe:
            self._set_gains(self.commanded_kp, self.commanded_kd)
        return True

    def watchdog(self, now_s: float) -> None:
        """Damp once targets have stopped for longer than command_timeout_s."""
        if (not self.failsafe and self.last_command_s is not None
                and now_s - self.last_command_s > self.command_timeout_s):
            self.failsafe = True
            self._set_gains(0.0, self.damping_kd)
            self.events.append(BridgeEvent('watchdog', '', now_s))

    def torque(self, q_rad: np.ndarray, qd_rad_s: np.ndarray) -> np.ndarray:
        """The PD's joint torques [N m] at joint positions and velocities (joints,)."""
        return self.actuator.torque(q_rad[None], qd_rad_s[None])[0]

    def pop_events(self) -> list[BridgeEvent]:
        """'watchdog' / 'reset' events since the last call, oldest first."""
        events, self.events = self.events, []
        return events


class DrivenJoints:
    """What a simulated robot's twin exposes of its JointDriver (``self.driver``) to the
    bridge node and its I/O: targets, gains, events, the failsafe and refusal count; and its
    physics step (``model``, ``data`` and a joint chain ``info``: qpos_adr, qvel_adr,
    actuator_ids)."""

    driver: JointDriver

    def step(self, now_s: float) -> None:
        """One physics step at wall time now_s (watchdog, PD, MuJoCo)."""
        self.driver.watchdog(now_s)
        self._physics()

    def _physics(self) -> None:
        """PD torques into ctrl, one mj_step."""
        info = self.info
        q, qd = self.data.qpos[info.qpos_adr], self.data.qvel[info.qvel_adr]
        self.data.ctrl[info.actuator_ids] = self.driver.torque(q, qd)
        mujoco.mj_step(self.model, self.data)

    @property
    def failsafe(self) -> bool:
        """Whether the command watchdog has the joints in damping."""
        return self.driver.failsafe

    @property
    def rejected_commands(self) -> int:
        """Non-finite or wrongly sized commands refused since construction."""
        return self.driver.rejected_commands

    def set_targets(self, values, now_s: float) -> bool:
        """Position targets [rad] (JointDriver.set_targets)."""
        return self.driver.set_targets(values, now_s)

    def set_gains(self, kind: str, values) -> bool:
        """kp or kd per joint (JointDriver.set_gains)."""
        return self.driver.set_gains(kind, values)

    def pop_events(self) -> list[BridgeEvent]:
        """The driver's events since the last call, oldest first."""
        return self.driver.pop_events()
