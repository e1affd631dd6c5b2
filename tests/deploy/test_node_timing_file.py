"""policy_node's timing_file: at shutdown the node writes every kept tick's timing, so the
computer's real-time behaviour can be read tick by tick (the deploy-loop bench pools them)."""

from __future__ import annotations

import os
from pathlib import Path
import time

import numpy as np

from sim2real.hil.processes import node_command, NodeProcess, private_domain_id, ros_environment

ROOT = Path(__file__).resolve().parents[2]


def test_the_node_writes_its_ticks_timing_when_stopped(tmp_path):
    """The quadrotor node (shipped hover policy, 100 Hz), disarmed, ticks for about 2 s and
    stops on SIGINT: the file holds one period per tick after the first, each within
    half a period of 10 ms at the median, and the wake-up and tick durations beside them."""
    timing = tmp_path / 'timing.npz'
    env = ros_environment(private_domain_id(os.getpid() + 29))
    node = NodeProcess('policy_node', node_command(
        'sim2real.deploy.policy_node', ROOT / 'config' / 'quadrotor.yaml', {
            'policy_file': str(ROOT / 'policies' / 'quadrotor_hover.onnx'), 'record': 'false',
            'timing_file': str(timing)}), env, tmp_path / 'node.log')
    try:
        deadline = time.monotonic() + 30.0
        while 'enable to arm' not in node.tail() and time.monotonic() < deadline:
            assert node.alive(), node.tail()
            time.sleep(0.1)
        time.sleep(2.0)
    finally:
        assert node.stop() == 0, node.tail()
    with np.load(timing) as ticks:
        periods_s = ticks['periods_s']
        assert float(ticks['target_period_s']) == 0.01
        assert int(ticks['ticks']) == periods_s.size + 1 >= 150
        assert abs(np.median(periods_s) - 0.01) < 0.005
        assert ticks['wake_late_s'].size == ticks['tick_s'].size == int(ticks['ticks'])
