"""What each `sim2real` verb does (the parser in sim2real.cli.parser routes to these)."""

from __future__ import annotations

import argparse
import logging
import os
from pathlib import Path

from sim2real.cli.output import verdict_line, write, write_json

log = logging.getLogger('sim2real')

EXIT_INTERRUPTED = 130
"""Exit status after Ctrl-C (128 + SIGINT), as shells report it."""


def cmd_tasks(args: argparse.Namespace) -> int:
    """List registered tasks."""
    from sim2real.tasks import get_task, task_names
    for name in task_names():
        spec = get_task(name)
        write(f'{name:24s} {spec.description} (actions: {", ".join(spec.actions)}; '
              f'algorithm: {spec.train.algo})')
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    """Tasks, HIL robots and shipped policies with their headline figures."""
    from sim2real.cli.catalog import catalog, catalog_view
    data = catalog()
    if args.json:
        write_json(data)
    else:
        write(catalog_view(data))
    return 0


def cmd_inspect(args: argparse.Namespace) -> int:
    """A policy's contract as tables (or JSON)."""
    from sim2real.cli.catalog import inspect_policy, inspect_view
    data = inspect_policy(args.policy)
    if args.json:
        write_json(data)
    else:
        write(inspect_view(data))
    return 0


def cmd_train(args: argparse.Namespace) -> int:
    """Train a task into a run directory; Ctrl-C saves and exits 130."""
    from sim2real.cli.run_dir import check_run_dir
    from sim2real.rl.distributed import launched_by_torchrun
    from sim2real.tasks import get_task
    from sim2real.training import check_request, train, TrainArgs
    get_task(args.task)
    check_request(args.task, args.set, args.action, args.algo)
    if args.backend == 'isaaclab':
        return _train_in_isaaclab(args)
    resume = check_run_dir(Path(args.run_dir), args.resume, args.overwrite,
                           args.resume_or_new)
    train_args = TrainArgs(task=args.task, seed=args.seed, num_envs=args.num_envs,
                           max_iterations=args.max_iterations, max_seconds=args.max_seconds,
                           save_interval=args.save_interval,
                           action=args.action, num_threads=args.threads,
                           backend=args.backend, device=args.device,
                           init_from=args.init_from, sets=args.set, algo=args.algo,
                           workers=args.workers, ray_address=args.ray_address)
    summary = train(train_args, args.run_dir, resume=resume,
                    progress_bar=not args.no_progress)
    info = launched_by_torchrun()
    if info is None or info.is_main:   # under torchrun: rank 0 speaks for the job
        _report_training(args, summary)
    return EXIT_INTERRUPTED if summary.get('interrupted') else 0


def _report_training(args: argparse.Namespace, summary: dict) -> None:
    """The summary (table or JSON); after Ctrl-C, one line saying how to go on."""
    from sim2real.cli.views import train_view
    if args.json:
        write_json(summary)
    elif not summary.get('interrupted'):
        write(train_view(summary, args.run_dir))
    if summary.get('interrupted'):
        log.warning('interrupted at iteration %d (checkpoint saved); resume with: sim2real '
                    'train %s --run-dir %s --resume', summary['iterations'], args.task,
                    args.run_dir)


def _train_in_isaaclab(args: argparse.Namespace) -> int:
    """Train in Isaac Lab (its own venv) and import the run as RUN_DIR/policy.onnx."""
    from sim2real.interop.isaaclab_task import train_in_isaaclab
    ignored = {'--algo': args.algo, '--workers': args.workers, '--init-from': args.init_from,
               '--action': args.action, '--max-seconds': args.max_seconds,
               '--overwrite': args.overwrite, '--resume-or-new': args.resume_or_new}
    given = sorted(flag for flag, value in ignored.items() if value)
    if given:
        raise ValueError(f'{", ".join(given)}: not available with --backend isaaclab (rsl_rl '
                         "PPO with the task's action, from scratch or --resume)")
    path = train_in_isaaclab(args.task, args.run_dir, args.set, args.num_envs,
                             args.max_iterations, args.seed, args.device, args.resume,
                             args.save_interval)
    if args.json:
        write_json({'onnx': str(path), 'backend': 'isaaclab'})
    else:
        write(f'trained in Isaac Lab and imported as {path}')
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """Export a run's policy to ONNX and verify it against torch (or re-bind an ONNX file)."""
    from sim2real.policy_io import export_run, rebind_onnx
    if args.run_dir.endswith('.onnx') and os.path.isfile(args.run_dir):
        if args.checkpoint is not None:
            raise ValueError(f'--checkpoint: {args.run_dir} is an ONNX file, not a run '
                             'directory with checkpoints')
        path, graph, vouched = rebind_onnx(args.run_dir, args.out, args.trust_graph,
                                           band_samples=args.band_samples)
        result = {'onnx': str(path), 'graph_sha256': graph, 'graph': vouched,
                  'band_samples': args.band_samples}
        text = f'bound the contract of {path} to its graph {graph} ({vouched})'
    else:
        path, max_abs, checkpoint = export_run(args.run_dir, args.out,
                                               num_samples=args.samples,
                                               tolerance=args.tolerance,
                                               iteration=args.checkpoint,
                                               band_samples=args.band_samples)
        result = {'onnx': str(path), 'max_abs_diff': max_abs, 'samples': args.samples,
                  'checkpoint': str(checkpoint), 'band_samples': args.band_samples}
        text = (f'exported {path} from {checkpoint}; onnxruntime vs torch max |diff| '
                f'{max_abs:.3g} over {args.samples} observations (tolerance '
                f'{args.tolerance:g})\nnext: sim2real eval {path}')
    if args.json:
        write_json(result)
    else:
        write(text)
    return 0


def cmd_import_isaaclab(args: argparse.Namespace) -> int:
    """Turn an Isaac Lab rsl_rl run into a policy.onnx of one of our tasks."""
    from sim2real.interop.isaaclab_import import import_isaaclab_run
    order = None if args.joint_order is None else [
        name.strip() for name in args.joint_order.split(',') if name.strip()]
    result = import_isaaclab_run(args.run_dir, task=args.task, out=args.out,
                                 joint_order=order, urdf=args.urdf)
    data = {'onnx': str(result.path), 'task': result.contract.task,
            'checkpoint': result.contract.robot_params['isaaclab_checkpoint'],
            'observations': [t.name for t in result.contract.observations],
            'isaaclab_joint_order': result.joint_order,
            'max_abs_diff': result.max_abs_diff}
    if args.json:
        write_json(data)
    else:
        write(f'imported {data["checkpoint"]} as {data["onnx"]} (task {data["task"]}); '
              f'max |diff| {data["max_abs_diff"]:.3g}\nnext: sim2real inspect {data["onnx"]}')
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    """Evaluate a policy: its figures as a table (or JSON) and one verdict line."""
    from sim2real.cli.views import eval_view
    if args.video and 'MUJOCO_GL' not in os.environ and not os.environ.get('DISPLAY'):
        os.environ['MUJOCO_GL'] = 'osmesa'  # offscreen; must be set before mujoco loads
    if args.backend == 'isaaclab':
        from sim2real.interop.isaaclab_task import evaluate_in_isaaclab
        if args.play or args.video or args.checkpoint is not None:
            raise ValueError('--play, --video and --checkpoint: not available with --backend '
                             'isaaclab')
        result = evaluate_in_isaaclab(args.policy, args.episodes, args.seed, args.device)
        what = f'eval {result["task"]} in Isaac Lab'
    else:
        from sim2real.evaluate import evaluate
        result = evaluate(args.policy, args.episodes, seed=args.seed, play=args.play,
                          video=args.video, backend=args.backend, device=args.device,
                          iteration=args.checkpoint)
        what = f'eval {result["task"]}'
    if args.json:
        write_json(result)
    else:
        write(eval_view(result))
    return verdict_line(what, result['verdict']['passed'], result['verdict']['text'])


def cmd_robustness(args: argparse.Namespace) -> int:
    """Sweep a policy over its task's randomization box and judge every point."""
    from sim2real.cli.views import robustness_verdict_text, robustness_view
    from sim2real.robustness import run_robustness
    report = run_robustness(args.policy, episodes=args.episodes, seed=args.seed,
                            out_dir=args.out, max_corners=args.max_corners,
                            batch_envs=args.batch_envs, backend=args.backend,
                            device=args.device, progress=not args.no_progress)
    if args.json:
        write_json(report)
    else:
        write(robustness_view(report))
    return verdict_line(f'robustness {report["task"]}', report['passed'],
                        robustness_verdict_text(report))


REPLAY_TOLERANCE = 1e-6
"""Largest |command difference| a replay of the same policy may show (float round-off)."""


def cmd_replay(args: argparse.Namespace) -> int:
    """Re-run a flight log through a fresh runtime; judge (same policy) or compare."""
    import tempfile
    from sim2real.cli.views import replay_verdict, replay_view
    from sim2real.deploy.record.rebuild import read_logs, rebuild_runtime
    from sim2real.deploy.record.replay import replay
    if not getattr(args, 'verbose', False):   # the replayed latches were logged when flown
        logging.getLogger('sim2real.deploy.runtime').setLevel(logging.ERROR)
    if args.out is not None and Path(args.out).exists() and not Path(args.out).is_dir():
        raise NotADirectoryError(f'--out: {args.out} is a file, not a folder for the report')
    contents = read_logs(args.log)
    if contents.damage:
        log.warning('%s is damaged or cut short: %s', args.log, contents.damage)
    with tempfile.TemporaryDirectory(prefix='sim2real-replay-') as workdir:
        rebuilt = rebuild_runtime(contents, Path(workdir), args.policy)
        result = replay(contents, rebuilt.runtime, keep_observations=args.out is not None)
    summary = {'log': str(args.log), 'same_policy': rebuilt.same_policy,
               'policy_sha256': rebuilt.policy_sha256,
               'logged_policy_sha256': rebuilt.logged_policy_sha256,
               'damage': contents.damage, **result.summary()}
    passed, text = replay_verdict(summary, REPLAY_TOLERANCE)
    if args.out is not None:
        written = _replay_report(args, contents, rebuilt, result, summary, text)
        summary['report'] = [str(path) for path in written]
    if args.json:
        write_json(summary)
    else:
        write(replay_view(summary))
    return verdict_line('replay', passed, text)


def _replay_report(args, contents, rebuilt, result, summary: dict, verdict: str) -> list:
    """replay --out: the flight report (with the HIL bridge's truth beside the log)."""
    import dataclasses
    from sim2real.deploy.record.rebuild import read_logs
    from sim2real.deploy.record.report import write_report
    from sim2real.deploy.record.series import flight_series, truth_folder
    runtime = rebuilt.runtime
    folder = truth_folder(args.log)
    truth = read_logs(folder) if folder is not None else None
    series = flight_series(contents, runtime.contract, dataclasses.asdict(runtime.params),
                           truth)
    return write_report(args.out, summary, series, result, verdict)


def _variant(path: str | None) -> dict[str, float]:
    """--variant (or --params) FILE.yaml: box parameter -> value ({} without a file)."""
    if path is None:
        return {}
    from pathlib import Path
    from sim2real.deploy.bridge.variant import parse, VariantError
    try:
        return parse(Path(path).read_text())
    except VariantError as exc:
        raise ValueError(f'{path}: {exc}') from None


def cmd_excite(args: argparse.Namespace) -> int:
    """Send a robot's identification commands to its policy node."""
    from sim2real.hil.excite import excite, node_params
    from sim2real.hil.runner import params_path
    params = node_params(args.robot, args.params or params_path(args.robot), args.node_name)
    summary = excite(args.robot, params, dry_run=args.dry_run)
    if args.json:
        write_json(summary)
    elif not summary['message']:
        write(f'excite {args.robot}: no operator command: {summary["what"]}; record that '
              'long with the flight recorder of the node on')
    else:
        verb = 'would send' if args.dry_run else 'sent'
        write(f'excite {args.robot}: {verb} {summary["sent"] or summary["commands"]} '
              f'{summary["message"]} commands on {summary["topic"]} over '
              f'{summary["duration_s"]:.0f} s: {summary["what"]}')
    return 0


def cmd_gap(args: argparse.Namespace) -> int:
    """The sim-to-real gap of a flight log in its task's simulator."""
    from sim2real.cli.views import gap_view
    from sim2real.sysid.flight import load_flight
    from sim2real.sysid.gap import gap
    flight = load_flight(args.log)
    result = gap(flight, args.task or flight.contract.task, _variant(args.params),
                 args.window, args.windows)
    write_json(result.as_dict()) if args.json else write(gap_view(result, args.log))
    return 0


def cmd_hil(args: argparse.Namespace) -> int:
    """Fly a policy through the ROS 2 node against the simulated robot, with faults."""
    from sim2real.cli.views import hil_verdict_text, hil_view
    from sim2real.hil.runner import run_hil
    if args.scenario == 'identify':
        if args.faults != 'all' or args.expect:
            raise ValueError('--scenario identify runs no fault and judges no nominal figure: '
                             'leave out --faults and --expect')
        if args.record is None:
            log.warning('--scenario identify without --record: the run leaves no log to '
                        'identify the robot from')
    result = run_hil(args.robot, args.policy, duration_s=args.duration, faults=args.faults,
                     params_file=args.params, log_dir=args.log_dir, expect=args.expect,
                     record=args.record, bridge=args.bridge, variant=_variant(args.variant),
                     identify=args.scenario == 'identify')
    if args.json:
        write_json(result)
    else:
        write(hil_view(result))
    from sim2real.verdict import EXIT_INCONCLUSIVE
    status = verdict_line(f'hil {args.robot}', result['verdict']['passed'],
                          hil_verdict_text(result['verdict']))
    return EXIT_INCONCLUSIVE if result['verdict'].get('inconclusive') else status
