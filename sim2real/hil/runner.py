"""`sim2real hil`: bridge and policy node as separate processes, scenarios, one JSON result."""

from __future__ import annotations

from contextlib import contextmanager
from functools import partial
import json
import logging
import math
import os
from pathlib import Path
import tempfile
import time
from typing import Sequence

import yaml

from sim2real.assets import asset_dirs
from sim2real.deploy.bridge.params import bridge_of, declared_parameters, validate
from sim2real.deploy.bridge.variant import apply as variant_apply
from sim2real.hil import host, metrics
from sim2real.hil.monitor import HilError, HilMonitor
from sim2real.hil.processes import (
    node_command, NodeProcess, private_domain_id, ros_environment)
from sim2real.hil.robot import hil_of, RobotHil
from sim2real.hil.scenarios import FaultCase
from sim2real.onnx_io import read_contract
from sim2real.overrides import did_you_mean
from sim2real.hil.verdicts import fault_verdict, hil_verdict, merge_floors, nominal_verdict
from sim2real.verdict import as_dicts, Floor

log = logging.getLogger(__name__)


def params_path(robot: str) -> Path:
    """config/<robot>.yaml, found the way URDFs are (checkout or install prefix)."""
    for directory in asset_dirs('config'):
        path = directory / f'{robot}.yaml'
        if path.is_file():
            return path
    raise FileNotFoundError(f'no parameter file config/{robot}.yaml for robot {robot!r}')


def load_sections(path: Path) -> tuple[dict, dict]:
    """The policy_node and sim_bridge parameter sections of a ROS 2 parameter file."""
    raw = yaml.safe_load(Path(path).read_text(encoding='utf-8'))
    try:
        return (raw['policy_node']['ros__parameters'], raw['sim_bridge']['ros__parameters'])
    except (KeyError, TypeError) as exc:
        raise HilError(f'{path}: needs policy_node and sim_bridge ros__parameters') from exc


def select_faults(robot: str, spec: str, node: dict, bridge: dict, contract=None) -> list:
    """Fault cases from 'none', 'all' or a comma list (those of every policy, and those of
    the streams contract's policy reads); ValueError naming unknown ones."""
    hil = hil_of(robot)
    cases = dict(hil.faults(node, bridge))
    if contract is not None:
        cases.update({case.name: case for case in hil.policy_faults(contract)})
    if spec in ('', 'none'):
        return []
    if spec == 'all':
        return list(cases.values())
    names = [n.strip() for n in spec.split(',') if n.strip()]
    unknown = [n for n in names if n not in cases]
    if unknown:
        raise ValueError(f'unknown fault(s) {unknown}; {robot} knows {sorted(cases)}')
    return [cases[n] for n in names]


def run_hil(robot: str, policy: str | Path, duration_s: float = 10.0, faults: str = 'all',
            params_file: str | Path | None = None, log_dir: str | Path | None = None,
            scenario: dict | None = None, expect: Sequence[Floor] = (),
            record: str | Path | None = None, bridge: Sequence[str] = (),
            variant: dict[str, float] | None = None, identify: bool = False) -> dict:
    """Run the HIL scenarios for robot with an exported policy; the result as a dict.

    bridge: 'name=value' settings of the simulated robot's parameters over the parameter
    file's (e.g. 'base_mass_scale=1.5': a vehicle heavier than the one trained for).

    variant: physical parameters of the simulated robot by their randomization box names
    (e.g. {'thrust_scale': 0.7, 'action_delay_ticks': 3}), inside or past the box.

    record: a folder for the node's flight recorder (RECORD/policy_node) and the bridge's
    ground truth and events (RECORD/sim_bridge); None: neither records.

    identify: one identification run (sim2real.hil.identify) instead of the nominal and
    fault scenarios (faults is then ignored).

    scenario: overrides of the robot's Scenario timing (e.g. fault_settle_s).
    expect: floors on the nominal run's figures, added to the robot's (or replacing the
    robot's floor on the same metric).
    """
    hil = hil_of(robot)
    policy = Path(policy).resolve()
    if not policy.is_file():
        raise FileNotFoundError(f'policy file {policy} does not exist')
    params = Path(params_file) if params_file else params_path(robot)
    node_cfg, bridge_cfg = load_sections(params)
    contract = read_contract(policy)
    bridge_sets = {**bridge_overrides(robot, bridge, bridge_cfg),
                   **variant_overrides(robot, variant or {}, contract, bridge_cfg)}
    cases = [] if identify else select_faults(robot, faults, node_cfg, bridge_cfg, contract)
    if identify and hil.identify is None:
        raise ValueError(f'the {robot} has no identification run (its hil.py declares none)')
    log_dir = Path(log_dir or tempfile.mkdtemp(prefix='sim2real-hil-'))
    log_dir.mkdir(parents=True, exist_ok=True)
    domain = private_domain_id()
    os.environ.update(ros_environment(domain, base={}))   # this process joins the same domain
    env = ros_environment(domain)
    procs = [
        NodeProcess('sim_bridge', node_command('sim2real.deploy.sim_bridge', params,
                                               {**truth_overrides(record), **bridge_sets}),
                    env, log_dir / 'sim_bridge.log'),
        NodeProcess('policy_node', node_command('sim2real.deploy.policy_node', params,
                                                {'policy_file': str(policy),
                                                 **record_overrides(record)}),
                    env, log_dir / 'policy_node.log'),
    ]
    log.info('hil %s: starting sim_bridge and policy_node (logs in %s), then %s', robot,
             log_dir, 'an identification run' if identify else
             f'{1 + len(cases)} scenarios: nominal and '
             f'{", ".join(c.name for c in cases) or "no faults"}')
    try:
        result = (_run_identify(robot, procs, policy, node_cfg, bridge_cfg, scenario or {})
                  if identify else
                  _run_scenarios(hil, procs, policy, node_cfg, bridge_cfg, cases, duration_s,
                                 scenario or {}, tuple(expect)))
    finally:
        for proc in procs:
            proc.stop()
    result.update(robot=robot, policy=str(policy), domain_id=domain, logs=str(log_dir))
    if record is not None:
        result['records'] = sorted(str(p) for p in (Path(record) / 'policy_node').glob(
            '*.mcap'))
        result['truth_records'] = sorted(str(p) for p in (Path(record) / 'sim_bridge').glob(
            '*.mcap'))
    return result


def truth_overrides(record: str | Path | None) -> dict[str, str]:
    """The bridge parameter that makes it record its ground truth to RECORD/sim_bridge."""
    if record is None:
        return {}
    return {'record_dir': str(Path(record).resolve() / 'sim_bridge')}


def bridge_overrides(robot: str, sets: Sequence[str], bridge_cfg: dict) -> dict[str, str]:
    """'name=value' settings as the bridge's -p overrides (YAML values, a float parameter's
    integer written as a float) over the parameter file's bridge section bridge_cfg;
    ValueError naming an unknown parameter or a value the bridge would refuse."""
    declared = declared_parameters(robot)
    out, values = {}, {**declared, **bridge_cfg}
    for text in sets:
        name, sep, value = text.partition('=')
        name = name.strip()
        if not sep or not name:
            raise ValueError(f'--bridge {text!r}: expected NAME=VALUE')
        if name not in declared or name == 'robot':
            raise ValueError(f'--bridge {name}: not a sim_bridge parameter of the {robot}'
                             f'{did_you_mean(name, [k for k in declared if k != "robot"])}')
        try:
            parsed = yaml.safe_load(value)
        except yaml.YAMLError as exc:
            raise ValueError(f'--bridge {name}={value}: not a value ({exc})') from None
        default = declared[name]
        if isinstance(default, float) and isinstance(parsed, int) and not isinstance(
                parsed, bool):
            parsed = float(parsed)
        if type(parsed) is not type(default):
            raise ValueError(f'--bridge {name}={value}: must be {type(default).__name__} '
                             f'like its default {default!r}')
        out[name] = value if isinstance(parsed, str) else json.dumps(parsed)
        values[name] = parsed
    if sets:
        validate(values)   # the bridge would refuse it after starting: say so before
    return out


def variant_overrides(robot: str, values: dict[str, float], contract,
                      bridge_cfg: dict) -> dict[str, str]:
    """The bridge's -p overrides that make the simulated robot the variant values (box name
    -> value; {}: none), with the policy's period and training physics step for delays
    counted in them; ValueError naming what the bridge would refuse."""
    if not values:
        return {}
    text = json.dumps(values)
    tick_s, substep_s = 1.0 / contract.policy_rate_hz, 1.0 / contract.physics_rate_hz
    p = {**declared_parameters(robot), **bridge_cfg, 'variant': text,
         'policy_tick_s': tick_s, 'policy_substep_s': substep_s}
    validate(p)
    twin = bridge_of(robot)   # what only the model can refuse (a payload leaving no trunk)
    variant_apply(twin.make_sim(p), p, twin.variant())
    # single-quoted: -p values are YAML, and the mapping must reach the node as a string
    return {'variant': f"'{text}'", 'policy_tick_s': repr(tick_s),
            'policy_substep_s': repr(substep_s)}


def record_overrides(record: str | Path | None) -> dict[str, str]:
    """The node parameters that make it record to RECORD/policy_node, or not at all."""
    if record is None:
        return {'record': 'false'}
    return {'record': 'true', 'record_dir': str(Path(record).resolve() / 'policy_node')}


STALL_ATTEMPTS = 5
"""Attempts at a scenario while each failed in a run the simulated robot stalled in."""
QUIET_S = 2.0
"""Time the simulated robot must run without a stall of the limit before a rerun [s]."""
QUIET_WAIT_S = 10.0
"""Longest wait for such a quiet spell; the rerun starts then anyway [s]."""
QUIET_BUDGET_S = 60.0
"""Most time one `sim2real hil` waits for quiet spells in all [s]; reruns then start at
once (a host busy for minutes would otherwise stretch a run by QUIET_WAIT_S a rerun)."""


def stall_limit_ms(node_cfg: dict) -> float:
    """Half the node's shortest sensor timeout [ms] (its positive `*_timeout_s`): a stall of
    the simulated robot that long can make a stream stale by itself."""
    timeouts = [float(v) for k, v in node_cfg.items()
                if k.endswith('_timeout_s') and float(v) > 0.0]
    return 500.0 * min(timeouts) if timeouts else math.inf


def fault_delay_ms(case: FaultCase, bridge_cfg: dict) -> float:
    """The most sensor delay a fault adds by itself [ms] (the bridge's 'delay': fixed part
    plus jitter; 0 for the others): with a stall of the simulated robot it ages the data
    the node sees, so it comes off the stall limit of that fault's runs."""
    if case.name != 'delay':
        return 0.0
    return 1e3 * (float(bridge_cfg.get('fault_delay_s', 0.0))
                  + float(bridge_cfg.get('fault_delay_jitter_s', 0.0)))


def await_quiet(stalls_since, limit_ms: float, quiet_s: float = QUIET_S,
                wait_s: float = QUIET_WAIT_S) -> float:
    """Wait until the simulated robot has run quiet_s without a stall of limit_ms or more (a
    busy host has passed), at most wait_s; the time waited [s]. stalls_since as in
    unstalled."""
    t0 = time.monotonic()
    while True:
        now = time.monotonic()
        if metrics.worst_stall_ms(stalls_since(now - quiet_s)) < limit_ms or now - t0 >= wait_s:
            return now - t0
        time.sleep(0.1)


class QuietWaits:
    """The quiet-spell waits of one HIL run, QUIET_WAIT_S each and QUIET_BUDGET_S in all."""

    def __init__(self, budget_s: float = QUIET_BUDGET_S, each_s: float = QUIET_WAIT_S):
        """budget_s: all waits together [s]; each_s: one wait at most [s]."""
        self.left_s, self.each_s = budget_s, each_s

    def longest_s(self) -> float:
        """How long the next wait may last [s]."""
        return max(0.0, min(self.each_s, self.left_s))

    def wait(self, stalls_since, limit_ms: float) -> float:
        """await_quiet within what is left; the time waited [s]."""
        waited = await_quiet(stalls_since, limit_ms, wait_s=self.longest_s())
        self.left_s -= waited
        return waited


def unstalled(run, stalls_since, limit_ms: float, passes,
              waits: QuietWaits | None = None) -> dict:
    """run() until an attempt can be judged: one in which the simulated robot did not stall
    limit_ms or more and the host did not withhold DISTURBED_SHARE of the CPU time
    (host.disturbed), or one that passes (passes(result) -> bool, the scenario's verdict)
    although it did; at most STALL_ATTEMPTS, each rerun after a quiet spell (waits; None:
    at once).

    stalls_since(t0) -> the (start, end) steady times [s] of each stall since t0. The last
    run's result gets the worst stall of each attempt [ms] ('simulator_stalls_ms') and the
    share of CPU time the host withheld in each ('host_steal_shares', None where unknown:
    sim2real.hil.host); the worst stall overlapping its 'judged_window_s', if it has one
    ('judged_window_stall_ms', what fault_verdict doubts a latch or watchdog pass by); and
    the time stalled inside its 'rate_window_s' ('simulator_stalled_ms', 0 without one).
    """
    stalls, steal = [], []
    for attempt in range(STALL_ATTEMPTS):
        if attempt:
            longest_s = waits.longest_s() if waits is not None else 0.0
            log.warning('a failed run in which the simulated robot stalled up to %.1f ms '
                        '(limit %.1f ms)%s: scenario rerun%s', stalls[-1], limit_ms,
                        host.steal_words(steal[-1]),
                        f' once it runs {QUIET_S:g} s without a stall of the limit (at most '
                        f'{longest_s:.0f} s)' if longest_s > 0 else '')
            if waits is not None:
                waits.wait(stalls_since, limit_ms)
        t0, ticks = time.monotonic(), host.cpu_ticks()
        out = run()
        share = host.steal_share(ticks, host.cpu_ticks())
        steal.append(None if share is None else round(share, 3))
        spans = stalls_since(t0)
        stalls.append(round(metrics.worst_stall_ms(spans), 1))
        out['simulator_stalls_ms'] = list(stalls)
        out['host_steal_shares'] = list(steal)
        out['stall_limit_ms'] = limit_ms
        if 'judged_window_s' in out:
            out['judged_window_stall_ms'] = round(
                metrics.worst_stall_ms(spans, *out['judged_window_s']), 1)
        window = out.get('rate_window_s')
        out['simulator_stalled_ms'] = round(
            1e3 * metrics.stalled_s(spans, *window), 1) if window else 0.0
        if (stalls[-1] < limit_ms and not host.disturbed(steal[-1])) or passes(out):
            break
    return out


def nominal_view(hil: RobotHil, run: dict) -> dict:
    """The keys nominal_verdict reads (and the JSON result reports) of one nominal run."""
    return {**hil.result(run, run['diagnostics']), 'nominal_states': run['states_seen'],
            'nominal_limit_violations': run['limit_violations'],
            'nominal_simulator_stalls_ms': run.get('simulator_stalls_ms', []),
            'nominal_simulator_stalled_ms': run.get('simulator_stalled_ms', 0.0),
            'nominal_host_steal_shares': run.get('host_steal_shares', []),
            'stall_limit_ms': run.get('stall_limit_ms', math.inf)}


def stall_spans(mon: HilMonitor, t0_s: float) -> list[tuple[float, float]]:
    """(start, end) steady times [s] of each stall the bridge reported since t0."""
    return [(e['monotonic_s'] - 1e-3 * e['lag_ms'], e['monotonic_s'])
            for e in mon.events_since(t0_s, 'stall')]


def run_unstalled(mon: HilMonitor, node_cfg: dict, hil: RobotHil, sc, duration_s: float,
                  cases, floors: Sequence[Floor] = ()) -> tuple[dict, dict]:
    """The nominal run and each fault case's run, each rerun while it failed and the
    simulated robot stalled (unstalled); (nominal result, {case: fault result})."""
    limit = stall_limit_ms(node_cfg)
    bound = hil.bound(sc)
    waits = QuietWaits()

    stalls_since = partial(stall_spans, mon)

    def nominal() -> dict:
        """The robot's nominal run, and the span its node's loop statistics cover: from the
        enable to the diagnostics the run read."""
        return {**hil.nominal(mon, sc, duration_s),
                'rate_window_s': (mon.enabled_s, mon.diagnostics_s)}

    total = 1 + len(cases)
    tic = time.monotonic()
    first = unstalled(nominal, stalls_since, limit,
                      lambda run: nominal_verdict(nominal_view(hil, run), bound, floors)[0],
                      waits)
    _progress(1, total, nominal_verdict(nominal_view(hil, first), bound, floors)[1], tic)
    faults = {}
    for number, case in enumerate(cases, start=2):
        tic = time.monotonic()
        faults[case.name] = unstalled(
            lambda c=case: hil.fault_run(mon, sc, c), stalls_since,
            max(0.0, limit - fault_delay_ms(case, sc.bridge)),
            lambda r, c=case: fault_verdict(c.name, r, sc)[0], waits)
        _progress(number, total, fault_verdict(case.name, faults[case.name], sc)[1], tic)
    return first, faults


def _progress(number: int, total: int, line: str, since_s: float) -> None:
    """Log one scenario's verdict line as it ends: 'scenario 3/11 (4.2 s): pass stale_imu
    (latch): ...'."""
    log.info('scenario %d/%d (%.1f s): %s', number, total, time.monotonic() - since_s, line)


def _run_scenarios(hil: RobotHil, procs, policy: Path, node_cfg: dict, bridge_cfg: dict,
                   cases, duration_s: float, overrides: dict, expect: tuple) -> dict:
    """Connect the monitor, wait for both nodes, run the nominal scenario and each fault."""
    from sim2real.deploy.runtime import read_policy_contract
    contract = read_policy_contract(policy)
    sc = hil.scenario(node_cfg, bridge_cfg, **overrides)
    sc.joint_names = tuple(contract.joint_names)
    floors = merge_floors(hil.floors(sc), expect)
    with _monitor(hil, procs, node_cfg, contract) as mon:
        t0 = time.monotonic()
        run, fault_results = run_unstalled(mon, node_cfg, hil, sc, duration_s, cases, floors)
        result = {
            **loop_figures(node_cfg, run['diagnostics'], run.get('simulator_stalled_ms', 0.0)),
            **nominal_view(hil, run),
            'received_state_rate_hz': run['received_state_rate_hz'],
            'node_ood_share': ood_figures(run['diagnostics']),
            'duration_s': duration_s,
            'limit_violations': run['limit_violations'] + sum(
                f['limit_violations'] for f in fault_results.values()),
            'faults': fault_results,
            'wall_time_s': round(time.monotonic() - t0, 1),
            'nominal_floors': as_dicts(floors),
        }
        result['verdict'] = hil_verdict(result, sc, hil.bound(sc), floors)
        return result


@contextmanager
def _monitor(hil: RobotHil, procs, node_cfg: dict, contract):
    """The HIL monitor, connected, the robot's start done and both nodes up; closed (the
    robot's stop first) when the block ends."""
    import rclpy
    rclpy.init()
    mon = HilMonitor('/' + node_cfg['command_topic'], **hil.monitor_args(node_cfg, contract))
    try:
        hil.start(mon)
        _wait_ready(mon, procs)
        yield mon
    finally:
        hil.stop(mon)
        mon.close()
        rclpy.try_shutdown()


def _run_identify(robot: str, procs, policy: Path, node_cfg: dict, bridge_cfg: dict,
                  overrides: dict) -> dict:
    """Connect the monitor, wait for both nodes, run the robot's identification run."""
    from sim2real.deploy.robots import robot_module
    from sim2real.deploy.runtime import read_policy_contract
    from sim2real.hil import identify
    contract = read_policy_contract(policy)
    hil = hil_of(robot)
    sc = hil.scenario(node_cfg, bridge_cfg, **overrides)
    sc.joint_names = tuple(contract.joint_names)
    excitation = robot_module(robot, 'excitation').excitation(node_cfg)
    log.info('identification run (%.0f s): %s', excitation.duration_s, excitation.what)
    with _monitor(hil, procs, node_cfg, contract) as mon:
        t0 = time.monotonic()
        limit = stall_limit_ms(node_cfg)
        run = unstalled(lambda: hil.identify(mon, sc, excitation), partial(stall_spans, mon),
                        limit, lambda out: identify.verdict(out)['passed'], QuietWaits())
        disturbed = (run['simulator_stalls_ms'][-1] >= limit
                     or host.disturbed(run['host_steal_shares'][-1]))
        t_start, t_end = run['window_s']
        return {'scenario': 'identify', 'excitation': excitation.what,
                'excitation_s': round(t_end - t_start, 2), 'states_seen': run['states_seen'],
                'fell': run['fell'], 'limit_violations': int(run['limit_violations']),
                'simulator_stalls_ms': run['simulator_stalls_ms'],
                'host_steal_shares': run['host_steal_shares'],
                'wall_time_s': round(time.monotonic() - t0, 1),
                'verdict': identify.verdict(run, disturbed)}


def ood_figures(diag: dict) -> dict[str, float]:
    """Term -> the share of the node's last ood_window_s of ticks it spent outside its
    training band, as its /diagnostics reported it at the end of the nominal flight."""
    prefix = 'ood_share.'
    return {key[len(prefix):]: value for key, value in diag.items() if key.startswith(prefix)}


def loop_figures(node_cfg: dict, diag: dict, stalled_ms: float = 0.0) -> dict:
    """The node's loop timing as its /diagnostics reported it at the end of the flight, and
    its rate outside the time the simulated robot stalled from the enable to those
    diagnostics (stalled_ms: a VM that stops every process stops the node's ticks too; a
    stall of the bridge alone would credit the node time it had)."""
    nan = float('nan')
    achieved = diag.get('achieved_rate_hz', 0.0)
    return {
        'target_rate_hz': node_cfg['rate_hz'],
        'achieved_rate_hz': achieved,
        'achieved_rate_outside_stalls_hz': metrics.rate_outside_stalls_hz(
            diag.get('ticks', 0.0), achieved, 1e-3 * stalled_ms),
        'period_error_p99_ms': diag.get('period_error_p99_ms', nan),
        'period_error_p50_ms': diag.get('period_error_p50_ms', nan),
        'inference_p99_us': diag.get('inference_p99_us', nan),
        'inference_p50_us': diag.get('inference_p50_us', nan),
        'observation_age_p50_ms': diag.get('observation_age_p50_ms', nan),
        'observation_age_p99_ms': diag.get('observation_age_p99_ms', nan),
    }


def _wait_ready(mon: HilMonitor, procs, timeout_s: float = 60.0) -> None:
    """Until the node publishes its state and the bridge its ground truth; fail fast on death."""
    deadline = time.monotonic() + timeout_s
    while not (mon.states and mon.ground_truth):
        for proc in procs:
            if not proc.alive():
                raise HilError(f'{proc.name} exited with code {proc.proc.returncode}:\n'
                               f'{proc.tail()}')
        if time.monotonic() > deadline:
            raise HilError(f'nodes not ready after {timeout_s:g} s; logs in {procs[0].log_path}')
        time.sleep(0.05)
