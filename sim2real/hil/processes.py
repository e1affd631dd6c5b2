"""Start ROS 2 nodes as separate processes on a private DDS domain, and stop them cleanly."""

from __future__ import annotations

import logging
import os
from pathlib import Path
import signal
import subprocess
import sys

log = logging.getLogger(__name__)

# ROS_DOMAIN_ID values that Fast DDS maps to valid UDP ports on Linux are 0-101; 0 is the
# default everybody uses, so private runs draw from 20-99
_DOMAIN_LO, _DOMAIN_HI = 20, 99


def private_domain_id(seed: int | None = None) -> int:
    """A ROS_DOMAIN_ID unlikely to be shared with another run on this machine."""
    seed = os.getpid() if seed is None else seed
    return _DOMAIN_LO + seed % (_DOMAIN_HI - _DOMAIN_LO + 1)


def ros_environment(domain_id: int, base: dict | None = None) -> dict:
    """Environment variables that keep DDS traffic on this host and this domain."""
    env = dict(os.environ if base is None else base)
    env['ROS_DOMAIN_ID'] = str(domain_id)
    env['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    env['PYTHONUNBUFFERED'] = '1'
    env.pop('ROS_LOCALHOST_ONLY', None)  # deprecated in Jazzy; the range above replaces it
    return env


def raise_priority(fifo_priority: int = 40, nice: int = -10) -> str:
    """Give the calling process a real-time scheduling class where allowed, as a robot would.

    On a robot the control loop runs under SCHED_FIFO (``chrt -f``, or a launch prefix);
    here the simulated robot and the node share two cores with the test runner, and without
    priority a busy neighbour delays the 500 Hz physics loop by tens of milliseconds. Tries
    SCHED_FIFO, then a negative nice value, else leaves the process as it is; returns which.
    """
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(fifo_priority))
        return 'fifo'
    except (PermissionError, AttributeError, OSError):
        pass
    try:
        os.nice(nice)
        return 'nice'
    except (PermissionError, OSError):
        return 'normal'


def node_command(module: str, params_file: Path, overrides: dict) -> list[str]:
    """`python -m module --ros-args --params-file F -p k:=v ...`, as `ros2 run` would start it."""
    cmd = [sys.executable, '-m', module, '--ros-args', '--params-file', str(params_file)]
    for key, value in overrides.items():
        cmd += ['-p', f'{key}:={value}']
    return cmd


class NodeProcess:
    """One node in its own process, output to a log file; stop() interrupts, then kills."""

    def __init__(self, name: str, cmd: list[str], env: dict, log_path: Path):
        """Start cmd now; its stdout and stderr go to log_path."""
        self.name = name
        self.log_path = log_path
        self._log = open(log_path, 'w', encoding='utf-8')
        log.debug('starting %s: %s', name, ' '.join(cmd))
        self.proc = subprocess.Popen(cmd, env=env, stdout=self._log, stderr=subprocess.STDOUT,
                                     start_new_session=True, preexec_fn=raise_priority)

    def alive(self) -> bool:
        """True while the process runs."""
        return self.proc.poll() is None

    def tail(self, lines: int = 20) -> str:
        """The last lines of the process output (for error messages)."""
        self._log.flush()
        text = Path(self.log_path).read_text(encoding='utf-8', errors='replace')
        return '\n'.join(text.splitlines()[-lines:])

    def stop(self, timeout_s: float = 5.0) -> int | None:
        """SIGINT (the node shuts down rclpy), then SIGKILL after timeout_s; the exit code."""
        if self.alive():
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                log.warning('%s did not stop on SIGINT; killing it', self.name)
                self.proc.kill()
                self.proc.wait()
        self._log.close()
        return self.proc.returncode
