"""Deploy control loop: policy inference latency, and the period error of the 500 Hz loop of
our policy node against a plain rclpy node under 1000 msg/s of sensor load.

Run alone: ``.venv/bin/python -m bench.deploy_loop [--policy P.onnx] [--window-s 10]``.
One run measures, in this order: (1) 10,000 single-observation calls of the policy on
onnxruntime (1 intra-op / 1 inter-op thread) through the runtime's PolicyRunner; (2) our node,
``python -m sim2real.deploy.policy_node`` (config/quadrotor.yaml, rate_hz 500) armed through
``/policy_node/enable``: the last /diagnostics status of the window (statistics restart at
enable); (3) the anchor, bench/plain_node.py, its statistics restarted through
``/plain_policy_node/enable``. Both nodes run the same graph, a timing-only copy of the
policy whose contract says policy_rate_hz 500 (the runtime refuses a rate mismatch by
design), for window_s each, each with a fresh load source (``python -m bench.plain_node
load``: odom and imu at 500 Hz each, sensor-data QoS, a vehicle hovering still, so the node
stays active), all on a private ROS_DOMAIN_ID with ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST.
Work files (timing policy, node logs) go to bench/out/deploy_loop/, the figures to
bench/out/deploy_loop.json.
"""

from __future__ import annotations

import argparse
from contextlib import contextmanager
import json
import logging
import os
from pathlib import Path
import sys
import time

import numpy as np
import onnx

from bench.common import OUT_DIR, report, write_results
from sim2real.contract import CONTRACT_KEY
from sim2real.hil.processes import NodeProcess, node_command, ros_environment

log = logging.getLogger('bench.deploy_loop')
REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / 'config' / 'quadrotor.yaml'
SHIPPED_POLICY = REPO / 'policies' / 'quadrotor_hover.onnx'
WORK_DIR = OUT_DIR / 'deploy_loop'
FIGURES = ('achieved_rate_hz', 'period_error_p50_ms', 'period_error_p99_ms',
           'inference_p50_us', 'inference_p99_us', 'ticks')


class NodeFailed(RuntimeError):
    """A node under test exited or never offered its enable service."""


def export_untrained(path: Path) -> Path:
    """A randomly initialised quadrotor-hover policy (default network) with its contract."""
    from sim2real.export.onnx_policy import export_onnx
    from sim2real.mdp.contract import contract_from_env
    from sim2real.rl.networks import ActorCritic, ExportablePolicy, PolicyCfg
    from sim2real.training import build_env
    env = build_env('quadrotor-hover', seed=0, num_envs=2, num_threads=1)
    model = ActorCritic(env.obs_dims['policy'], env.obs_dims['critic'], env.num_actions,
                        PolicyCfg())
    return export_onnx(ExportablePolicy(model), contract_from_env(env), path)


def resolve_policy(policy: str | None) -> tuple[Path, str]:
    """(path, where it came from): --policy, the shipped policy, or an untrained export."""
    if policy:
        return Path(policy).resolve(), 'given'
    if SHIPPED_POLICY.exists():
        return SHIPPED_POLICY, 'shipped'
    return export_untrained(WORK_DIR / 'untrained.onnx'), 'untrained export (random weights)'


def timing_variant(src: Path, dst: Path, rate_hz: float) -> Path:
    """A copy of src whose contract says policy_rate_hz = rate_hz (same graph, same weights)."""
    model = onnx.load(str(src))
    entry = next(p for p in model.metadata_props if p.key == CONTRACT_KEY)
    contract = json.loads(entry.value)
    contract['policy_rate_hz'] = rate_hz
    entry.value = json.dumps(contract)
    onnx.save(model, str(dst))
    return dst


def _policy_call(path: Path):
    """(fn(obs) -> (action, wall_s), input width, what runs it)."""
    try:
        from sim2real.deploy.runtime.policy import PolicyRunner
    except ImportError:
        from sim2real.export.onnx_policy import onnx_session
        session = onnx_session(path)
        name = session.get_inputs()[0].name

        def run(obs):
            start = time.perf_counter()
            out = session.run(None, {name: obs})[0]
            return out, time.perf_counter() - start
        return run, session.get_inputs()[0].shape[1], 'onnxruntime session (1/1 threads)'
    runner = PolicyRunner(path)
    return runner.run, runner.input_size, 'PolicyRunner (1/1 threads)'


def inference_latency(path: Path, calls: int = 10_000, warmup: int = 500) -> dict:
    """p50/p99 wall time [us] of single-observation calls (a level hover observation)."""
    run, width, how = _policy_call(path)
    obs = np.zeros((1, width), dtype=np.float32)
    obs[0, 3:12] = np.eye(3).reshape(-1)  # rotation_matrix term: level attitude
    for _ in range(warmup):
        run(obs)
    wall_s = np.array([run(obs)[1] for _ in range(calls)])
    return {'runner': how, 'calls': calls, 'p50_us': float(np.percentile(wall_s, 50) * 1e6),
            'p99_us': float(np.percentile(wall_s, 99) * 1e6),
            'mean_us': float(wall_s.mean() * 1e6)}


@contextmanager
def ros_domain(domain_id: int):
    """This process's environment on the private domain, restored afterwards."""
    keys = ('ROS_DOMAIN_ID', 'ROS_AUTOMATIC_DISCOVERY_RANGE', 'ROS_LOCALHOST_ONLY')
    saved = {k: os.environ.get(k) for k in keys}
    os.environ.update({k: v for k, v in ros_environment(domain_id).items() if k in keys})
    os.environ.pop('ROS_LOCALHOST_ONLY', None)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


class BenchClient:
    """The bench's own rclpy node: calls the enable services, keeps the last diagnostics."""

    def __init__(self):
        """A private rclpy context with one node subscribed to /diagnostics."""
        import rclpy
        from diagnostic_msgs.msg import DiagnosticArray
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.signals import SignalHandlerOptions
        self.context = rclpy.Context()
        rclpy.init(context=self.context, signal_handler_options=SignalHandlerOptions.NO)
        self.node = rclpy.create_node('deploy_loop_bench', context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.diagnostics: dict[str, str] = {}
        self.node.create_subscription(DiagnosticArray, '/diagnostics', self._on_diag, 10)

    def _on_diag(self, msg) -> None:
        """Keep the key/values of the latest policy_node status."""
        for status in msg.status:
            if status.name.startswith('policy_node'):
                self.diagnostics = {kv.key: kv.value for kv in status.values}

    def spin_for(self, seconds: float) -> None:
        """Process callbacks for the given wall time."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.executor.spin_once(timeout_sec=min(0.1, max(0.0, deadline - time.monotonic())))

    def enable(self, service: str, proc: NodeProcess, timeout_s: float = 60.0) -> str:
        """Call service (std_srvs/SetBool true) until it succeeds; NodeFailed otherwise."""
        from std_srvs.srv import SetBool
        client = self.node.create_client(SetBool, service)
        deadline = time.monotonic() + timeout_s
        answer = 'service never answered'
        while time.monotonic() < deadline:
            if not proc.alive():
                raise NodeFailed(f'{proc.name} exited with code {proc.proc.returncode}')
            if not client.wait_for_service(timeout_sec=0.5):
                continue
            future = client.call_async(SetBool.Request(data=True))
            self.executor.spin_until_future_complete(future, timeout_sec=5.0)
            if future.done() and future.result().success:
                return future.result().message
            answer = future.result().message if future.done() else 'no response in 5 s'
            self.spin_for(0.2)
        raise NodeFailed(f'{service}: not armed within {timeout_s:g} s: {answer}')

    def close(self) -> None:
        """Destroy the node and shut the context down."""
        self.executor.shutdown()
        self.node.destroy_node()
        self.context.try_shutdown()


def _anchor_env(domain_id: int) -> dict:
    """The private ROS environment, with the repository on the path for `-m bench...`."""
    env = ros_environment(domain_id)
    env['PYTHONPATH'] = os.pathsep.join(filter(None, [str(REPO), env.get('PYTHONPATH')]))
    return env


def measure(kind: str, client: BenchClient, policy: Path, rate_hz: float, window_s: float,
            env: dict) -> dict:
    """One window of one node ('policy_node' or 'plain_rclpy') under a fresh sensor load."""
    py = [sys.executable, '-m', 'bench.plain_node']
    load_json, anchor_json = WORK_DIR / f'load_{kind}.json', WORK_DIR / 'plain_rclpy.json'
    if kind == 'policy_node':
        cmd = node_command('sim2real.deploy.policy_node', CONFIG,
                           {'policy_file': policy, 'rate_hz': rate_hz})
        service = '/policy_node/enable'
    else:
        cmd = py + ['node', '--policy', str(policy), '--rate-hz', str(rate_hz),
                    '--out', str(anchor_json)]
        service = '/plain_policy_node/enable'
    out = {'loadavg_1m_before': os.getloadavg()[0], 'command': ' '.join(map(str, cmd))}
    for stale in (load_json, anchor_json):
        stale.unlink(missing_ok=True)
    load = node = None
    try:
        load = NodeProcess(f'load[{kind}]', py + ['load', '--rate-hz', str(rate_hz),
                                                  '--out', str(load_json)],
                           env, WORK_DIR / f'load_{kind}.log')
        node = NodeProcess(kind, cmd, env, WORK_DIR / f'{kind}.log')
        out['enable'] = client.enable(service, node)
        client.diagnostics = {}
        client.spin_for(window_s)
        diagnostics = dict(client.diagnostics)
        out['loadavg_1m_after'] = os.getloadavg()[0]
    except NodeFailed as exc:
        out.update(error=str(exc), log_tail=node.tail() if node else '')
        return out
    finally:
        for proc in (node, load):  # SIGINT, then kill
            if proc is not None:
                proc.stop()
    out['exit_code'] = node.proc.returncode
    out['load'] = json.loads(load_json.read_text()) if load_json.exists() else None
    if kind == 'policy_node':
        out.update({k: float(diagnostics[k]) for k in FIGURES if k in diagnostics})
        out['safety_state'] = diagnostics.get('safety_state', 'no diagnostics received')
    else:
        out.update(json.loads(anchor_json.read_text()))
    if out.get('achieved_rate_hz'):
        out['window_s'] = out['ticks'] / out['achieved_rate_hz']
    return out


def _loop_line(name: str, fig: dict) -> None:
    """The comparable line of one node's loop figures."""
    if 'error' in fig:
        report(name, f"FAILED: {fig['error']}")
        return
    f = {k: fig.get(k, 0.0) for k in FIGURES}
    load = fig.get('load') or {}
    report(name, f"achieved {f['achieved_rate_hz']:.1f} Hz, period error p50 "
           f"{f['period_error_p50_ms']:.3f} ms p99 {f['period_error_p99_ms']:.3f} ms, "
           f"inference p50 {f['inference_p50_us']:.0f} us p99 {f['inference_p99_us']:.0f} us, "
           f"load {load.get('messages_per_s', 0):.0f} msg/s, "
           f"loadavg {fig['loadavg_1m_before']:.2f}")


def deploy_loop(policy: str | None = None, rate_hz: float = 500.0, window_s: float = 10.0,
                calls: int = 10_000) -> dict:
    """Measure inference latency and both loops; print, write deploy_loop.json, return all."""
    WORK_DIR.mkdir(parents=True, exist_ok=True)
    path, source = resolve_policy(policy)
    timing = timing_variant(path, WORK_DIR / f'policy_{rate_hz:g}hz.onnx', rate_hz)
    out = {'policy': str(path), 'policy_source': source, 'timing_policy': str(timing),
           'rate_hz': rate_hz, 'window_s': window_s, 'cpus': os.cpu_count(),
           'load_source': 'python -m bench.plain_node load (odom + imu at rate_hz each)'}
    out['inference'] = inf = inference_latency(timing, calls)
    report('deploy_inference', f"p50 {inf['p50_us']:.1f} us, p99 {inf['p99_us']:.1f} us "
           f"({calls:,} calls, {inf['runner']})")
    domain_id = 50 + os.getpid() % 40
    out['ros_domain_id'] = domain_id
    env = _anchor_env(domain_id)
    with ros_domain(domain_id):
        client = BenchClient()
        try:
            for kind in ('policy_node', 'plain_rclpy'):
                out[kind] = measure(kind, client, timing, rate_hz, window_s, env)
                _loop_line(f'deploy_loop[{kind}]', out[kind])
        finally:
            client.close()
    ours, plain = out['policy_node'], out['plain_rclpy']
    out['ratio'] = None
    if ours.get('period_error_p99_ms') and plain.get('period_error_p99_ms'):
        out['ratio'] = plain['period_error_p99_ms'] / ours['period_error_p99_ms']
        report('deploy_loop_ratio', f"period error p99 plain / policy_node {out['ratio']:.2f}"
               ' (> 1: policy_node steadier)')
    ratios = {} if out['ratio'] is None else {'loop_period_error_p99_plain_vs_node': out['ratio']}
    write_results({'deploy_loop': out}, ratios, OUT_DIR / 'deploy_loop.json')
    return out


def main() -> None:
    """Run the deploy-loop bench alone."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--policy', help='ONNX policy (default: shipped, else untrained)')
    parser.add_argument('--rate-hz', type=float, default=500.0, help='control loop rate [Hz]')
    parser.add_argument('--window-s', type=float, default=10.0, help='window per node [s]')
    parser.add_argument('--calls', type=int, default=10_000, help='inference calls')
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    deploy_loop(args.policy, args.rate_hz, args.window_s, args.calls)
    report('results', str(OUT_DIR / 'deploy_loop.json'))


if __name__ == '__main__':
    main()
