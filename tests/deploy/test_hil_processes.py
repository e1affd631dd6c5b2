"""HIL process helpers: private domains, environment, and the real-time priority of nodes."""

import os
from pathlib import Path
import signal
import subprocess
import sys

import pytest

from sim2real.hil.processes import NodeProcess, private_domain_id, raise_priority, ros_environment


def test_private_domain_ids_stay_in_the_fast_dds_port_range():
    """Domain ids for any seed lie in 20..99 (valid for Fast DDS ports, never the default 0)."""
    ids = {private_domain_id(seed) for seed in range(1000)}
    assert min(ids) == 20 and max(ids) == 99


def test_ros_environment_confines_discovery_to_this_host_and_domain():
    """The environment names the domain and LOCALHOST discovery, drops ROS_LOCALHOST_ONLY."""
    env = ros_environment(42, base={'ROS_LOCALHOST_ONLY': '1', 'HOME': '/root'})
    assert env['ROS_DOMAIN_ID'] == '42'
    assert env['ROS_AUTOMATIC_DISCOVERY_RANGE'] == 'LOCALHOST'
    assert 'ROS_LOCALHOST_ONLY' not in env and env['HOME'] == '/root'


def test_node_processes_run_with_real_time_priority_when_allowed(tmp_path):
    """A child started by NodeProcess runs SCHED_FIFO (or niced) exactly when this user may."""
    code = 'import os; print(os.sched_getscheduler(0) == os.SCHED_FIFO, os.nice(0))'
    proc = NodeProcess('probe', [sys.executable, '-c', code], dict(os.environ),
                       tmp_path / 'probe.log')
    proc.proc.wait(timeout=30)
    proc.stop()
    fifo, nice = Path(tmp_path / 'probe.log').read_text().split()
    allowed = os.geteuid() == 0
    assert (fifo == 'True' or int(nice) < 0) == allowed
    assert raise_priority.__doc__


def _ignoring_sigint(code: str) -> subprocess.Popen:
    """python -c code started as a background shell job is: with SIGINT ignored."""
    return subprocess.Popen([sys.executable, '-c', code], stdout=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))


def test_nodes_stop_on_sigint_even_when_started_with_it_ignored():
    """`nohup make demo &` starts the nodes with SIGINT ignored; they must still stop on it.

    Control: a plain Python child keeps running through SIGINT; one that calls
    interrupt_on_sigint() (as policy_node and sim_bridge do first) raises KeyboardInterrupt.
    """
    wait = ('import time\ntry:\n    print("ready", flush=True)\n    time.sleep(30)\n'
            'except KeyboardInterrupt:\n    print("interrupted")\n')
    plain = _ignoring_sigint(wait)
    fixed = _ignoring_sigint('from sim2real.deploy.ros_msgs import interrupt_on_sigint\n'
                             'interrupt_on_sigint()\n' + wait)
    for proc in (plain, fixed):
        assert proc.stdout.readline().strip() == 'ready'
        proc.send_signal(signal.SIGINT)
    assert fixed.wait(timeout=10) == 0
    assert fixed.stdout.read().strip() == 'interrupted'
    with pytest.raises(subprocess.TimeoutExpired):
        plain.wait(timeout=1.0)
    plain.kill()
    plain.wait()
