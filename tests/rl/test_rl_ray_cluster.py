"""Rollout workers on a multi-node Ray cluster on this machine (ray.cluster_utils.Cluster):
the node under a worker is removed mid-chunk and the worker moves to a node added later."""

from __future__ import annotations

import concurrent.futures
import os
import time

import pytest

ray = pytest.importorskip('ray')

from ray.cluster_utils import Cluster  # noqa: E402
from ray_setup import ENVS_PER_WORKER, sampler_and_ppo  # noqa: E402

pytestmark = pytest.mark.slow
STORE_BYTES = 128 * 2 ** 20
# node failures are noticed within about 0.6 s instead of Ray's default of some 15 s
HEALTH_CHECKS = {'health_check_period_ms': 200, 'health_check_failure_threshold': 3,
                 'health_check_timeout_ms': 500}


@pytest.fixture
def cluster():
    """A head without CPUs (it schedules no worker) and two 1-CPU worker nodes."""
    os.environ.setdefault('RAY_AUTH_MODE', 'disabled')
    cluster = Cluster(initialize_head=True, head_node_args={
        'num_cpus': 0, 'include_dashboard': False, 'object_store_memory': STORE_BYTES,
        '_system_config': HEALTH_CHECKS})
    for _ in range(2):
        cluster.add_node(num_cpus=1, object_store_memory=STORE_BYTES)
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, log_to_driver=False)
    yield cluster
    ray.shutdown()
    cluster.shutdown()


def test_a_lost_node_moves_its_worker_and_every_step_counts_once(cluster):
    """Remove the node of worker 0 0.5 s into a 3000-step chunk (the cluster then has one
    CPU for two workers) and add a node 2 s later: the worker restarts there, its call is
    retried, and the iteration still holds exactly 2 x 16 x 3000 steps; the next iteration
    runs on the new node."""
    sampler, ppo = sampler_and_ppo(steps=3000)
    try:
        nodes = {node.node_id: node for node in cluster.worker_nodes}
        lost = ray.get(sampler.workers[0].node.remote())
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            start = time.monotonic()
            collecting = pool.submit(sampler.collect, ppo)
            time.sleep(0.5)
            cluster.remove_node(nodes[lost], allow_graceful=False)
            time.sleep(2.0)
            assert not collecting.done(), 'the chunk ended before its node was lost'
            added = cluster.add_node(num_cpus=1, object_store_memory=STORE_BYTES)  # main thread
            steps, _ = collecting.result(timeout=240)
        assert steps == 2 * ENVS_PER_WORKER * 3000
        assert sampler.restarts_seen == 1 and sampler.hangs == 0
        assert ray.get(sampler.workers[0].node.remote()) == added.node_id
        assert time.monotonic() - start < 120.0
        ppo.update()
        steps, _ = sampler.collect(ppo)
        assert steps == 2 * ENVS_PER_WORKER * 3000 and sampler.version == 2
    finally:
        sampler.close()
