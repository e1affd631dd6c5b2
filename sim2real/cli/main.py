"""`sim2real` command line: tasks, train, export, eval, robustness, hil."""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import sys
from pathlib import Path

from sim2real import __version__
from sim2real.algo_cfg import ALGORITHMS

log = logging.getLogger('sim2real')


def _cmd_tasks(args: argparse.Namespace) -> int:
    """List registered tasks."""
    from sim2real.tasks import get_task, task_names
    for name in task_names():
        spec = get_task(name)
        sys.stdout.write(f'{name:24s} {spec.description} (actions: {", ".join(spec.actions)}; '
                         f'algorithm: {spec.train.algo})\n')
    return 0


def _cmd_train(args: argparse.Namespace) -> int:
    """Train a task into a run directory."""
    from sim2real.training import check_request, train, TrainArgs
    from sim2real.tasks import get_task
    get_task(args.task)
    check_request(args.task, args.set, args.action, args.algo)
    if args.backend == 'isaaclab':
        return _train_in_isaaclab(args)
    _check_run_dir(Path(args.run_dir), args.resume, args.overwrite)
    train_args = TrainArgs(task=args.task, seed=args.seed, num_envs=args.num_envs,
                           max_iterations=args.max_iterations, max_seconds=args.max_seconds,
                           save_interval=args.save_interval,
                           action=args.action, num_threads=args.threads,
                           backend=args.backend, device=args.device,
                           init_from=args.init_from, sets=args.set, algo=args.algo,
                           workers=args.workers, ray_address=args.ray_address)
    summary = train(train_args, args.run_dir, resume=args.resume,
                    progress_bar=not args.no_progress)
    from sim2real.rl.distributed import launched_by_torchrun
    info = launched_by_torchrun()
    if info is None or info.is_main:   # under torchrun: rank 0 speaks for the job
        sys.stdout.write(json.dumps(summary, sort_keys=True) + '\n')
    return 0


RUN_FILES = ('checkpoints', 'tb', 'config.yaml', 'summary.json', 'curves.png', 'policy.onnx')
"""What a training run leaves in its directory (TensorBoard's events in tb/)."""


def _check_run_dir(run_dir: Path, resume: bool, overwrite: bool) -> None:
    """A run directory that holds a run needs --resume (continue it) or --overwrite (remove
    its run files first); --resume needs a checkpoint. ValueError saying which. Under
    torchrun only rank 0 checks (the others would see its first files), and a worker that
    torchrun restarted resumes by itself."""
    from sim2real.rl.checkpoint import latest_checkpoint
    if int(os.environ.get('TORCHELASTIC_RESTART_COUNT', '0')) > 0 or os.environ.get(
            'RANK', '0') != '0':
        return
    if run_dir.exists() and not run_dir.is_dir():
        raise ValueError(f'--run-dir {run_dir} is a file, not a folder')
    latest = latest_checkpoint(run_dir) if run_dir.is_dir() else None
    holds = run_dir.is_dir() and any((run_dir / name).exists() for name in RUN_FILES)
    if resume and overwrite:
        raise ValueError('--resume and --overwrite: choose one')
    if resume and latest is None:
        raise ValueError(f'--resume: no checkpoint under {run_dir / "checkpoints"} to resume; '
                         'drop --resume to start a new run there')
    if holds and not (resume or overwrite):
        what = f'a run (last checkpoint {latest.name})' if latest else 'run files'
        raise ValueError(f'{run_dir} holds {what}: --resume continues it, --overwrite removes '
                         'it and starts over')
    if overwrite and holds:
        for name in RUN_FILES:
            path = run_dir / name
            if path.is_dir():
                shutil.rmtree(path)
            elif path.exists():
                path.unlink()
        log.info('removed the run files in %s (--overwrite)', run_dir)


def _train_in_isaaclab(args: argparse.Namespace) -> int:
    """Train in Isaac Lab (its own venv) and import the run as RUN_DIR/policy.onnx."""
    from sim2real.interop.isaaclab_task import train_in_isaaclab
    ignored = {'--algo': args.algo, '--workers': args.workers, '--init-from': args.init_from,
               '--action': args.action, '--max-seconds': args.max_seconds}
    given = sorted(flag for flag, value in ignored.items() if value)
    if given:
        raise ValueError(f'{", ".join(given)}: not available with --backend isaaclab (rsl_rl '
                         "PPO with the task's action, from scratch or --resume)")
    path = train_in_isaaclab(args.task, args.run_dir, args.set, args.num_envs,
                             args.max_iterations, args.seed, args.device, args.resume,
                             args.save_interval)
    sys.stdout.write(json.dumps({'onnx': str(path), 'backend': 'isaaclab'}) + '\n')
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    """Export a run's policy to ONNX and verify it against torch (or re-bind an ONNX file)."""
    from sim2real.policy_io import export_run, rebind_onnx
    if args.run_dir.endswith('.onnx') and os.path.isfile(args.run_dir):
        path, graph, vouched = rebind_onnx(args.run_dir, args.out, args.trust_graph)
        sys.stdout.write(json.dumps({'onnx': str(path), 'graph_sha256': graph,
                                     'graph': vouched}) + '\n')
        return 0
    path, max_abs = export_run(args.run_dir, args.out, num_samples=args.samples,
                               tolerance=args.tolerance)
    sys.stdout.write(json.dumps({'onnx': str(path), 'max_abs_diff': max_abs,
                                 'samples': args.samples}) + '\n')
    return 0


def _cmd_import_isaaclab(args: argparse.Namespace) -> int:
    """Turn an Isaac Lab rsl_rl run into a policy.onnx of one of our tasks."""
    from sim2real.interop.isaaclab_import import import_isaaclab_run
    order = None if args.joint_order is None else [
        name.strip() for name in args.joint_order.split(',') if name.strip()]
    result = import_isaaclab_run(args.run_dir, task=args.task, out=args.out,
                                 joint_order=order, urdf=args.urdf)
    sys.stdout.write(json.dumps({
        'onnx': str(result.path), 'task': result.contract.task,
        'checkpoint': result.contract.robot_params['isaaclab_checkpoint'],
        'observations': [t.name for t in result.contract.observations],
        'isaaclab_joint_order': result.joint_order,
        'max_abs_diff': result.max_abs_diff}) + '\n')
    return 0


def _cmd_eval(args: argparse.Namespace) -> int:
    """Evaluate a policy and print its metrics."""
    if args.video and 'MUJOCO_GL' not in os.environ and not os.environ.get('DISPLAY'):
        os.environ['MUJOCO_GL'] = 'osmesa'  # offscreen; must be set before mujoco loads
    if args.backend == 'isaaclab':
        from sim2real.interop.isaaclab_task import evaluate_in_isaaclab
        if args.play or args.video:
            raise ValueError('--play and --video: not available with --backend isaaclab')
        result = evaluate_in_isaaclab(args.policy, args.episodes, args.seed, args.device)
        _print_result(result, args.json)
        return _verdict_line(f'eval {result["task"]} in Isaac Lab', result['verdict'])
    from sim2real.evaluate import evaluate
    result = evaluate(args.policy, args.episodes, seed=args.seed, play=args.play,
                      video=args.video, backend=args.backend, device=args.device)
    _print_result(result, args.json)
    return _verdict_line(f'eval {result["task"]}', result['verdict'])


def _verdict_line(what: str, verdict: dict) -> int:
    """Write 'verdict <what>: pass: ...' (or FAIL) to stderr; the exit status it means."""
    from sim2real.verdict import EXIT_FAIL
    sys.stderr.write(f'verdict {what}: {verdict["text"]}\n')
    return 0 if verdict['passed'] else EXIT_FAIL


def _print_result(result: dict, as_json: bool) -> None:
    """One JSON line, or one aligned `key value` line per entry."""
    if as_json:
        sys.stdout.write(json.dumps(result, sort_keys=True) + '\n')
        return
    for key, value in result.items():
        sys.stdout.write(f'{key:24s} {value}\n')


def _cmd_robustness(args: argparse.Namespace) -> int:
    """Sweep a policy over its task's randomization box and judge every point."""
    from sim2real.robustness import run_robustness, verdict_lines
    report = run_robustness(args.policy, episodes=args.episodes, seed=args.seed,
                            out_dir=args.out, max_corners=args.max_corners,
                            batch_envs=args.batch_envs, backend=args.backend,
                            device=args.device, progress=not args.no_progress)
    if args.json:
        sys.stdout.write(json.dumps(report, sort_keys=True) + '\n')
    lines = sys.stderr if args.json else sys.stdout   # stdout stays one JSON line
    for line in verdict_lines(report):
        lines.write(line + '\n')
    text = (f'{len(report["points"]) - report["failed_points"]} of {len(report["points"])} '
            'points meet their floors')
    if report.get('files'):
        text += f'; report in {report["files"]["markdown"]}'
    return _verdict_line(f'robustness {report["task"]}', {
        'passed': report['passed'], 'text': ('pass: ' if report['passed'] else 'FAIL: ') + text})


def _cmd_hil(args: argparse.Namespace) -> int:
    """Fly a policy through the ROS 2 node against the simulated robot, with faults."""
    from sim2real.hil.runner import run_hil
    result = run_hil(args.robot, args.policy, duration_s=args.duration, faults=args.faults,
                     params_file=args.params, log_dir=args.log_dir, expect=args.expect)
    _print_result(result, args.json)
    verdict = result['verdict']
    for line in verdict['lines']:
        sys.stderr.write(f'  {line}\n')
    failed = sum(not line.startswith('pass') for line in verdict['lines'])
    text = (f'all {len(verdict["lines"])} scenarios pass' if verdict['passed'] else
            f'{failed} of {len(verdict["lines"])} scenarios fail')
    return _verdict_line(f'hil {args.robot}', {
        'passed': verdict['passed'],
        'text': ('pass: ' if verdict['passed'] else 'FAIL: ') + text})


def _floor(text: str):
    """argparse type: METRIC>=VALUE or METRIC<=VALUE as a sim2real.verdict.Floor."""
    from sim2real.verdict import parse_floor
    try:
        return parse_floor(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def _integer(text: str, least: int) -> int:
    """text as an integer >= least; ArgumentTypeError saying what it must be."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'must be an integer, got {text!r}') from None
    if value < least:
        raise argparse.ArgumentTypeError(f'must be at least {least}, got {value}')
    return value


def _positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    return _integer(text, 1)


def _non_negative_int(text: str) -> int:
    """argparse type: an integer >= 0."""
    return _integer(text, 0)


def _positive_float(text: str) -> float:
    """argparse type: a finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'must be a number, got {text!r}') from None
    if not 0.0 < value < float('inf'):
        raise argparse.ArgumentTypeError(f'must be a finite number > 0, got {text}')
    return value


def add_backend_args(parser: argparse.ArgumentParser, isaaclab: bool = False) -> None:
    """--backend and --device, shared by train, eval and bench (isaaclab: train's, eval's)."""
    choices = ['mujoco', 'mjwarp'] + (['isaaclab'] if isaaclab else [])
    parser.add_argument('--backend', default='mujoco', choices=choices,
                        help='simulation backend: mujoco (mujoco.batch, CPU threads) or '
                        'mjwarp (MuJoCo Warp)' + (
                            '; isaaclab: run in the Isaac Lab 3.0 env of the task (the Python '
                            'named by SIM2REAL_ISAACLAB_PYTHON); train imports the run as '
                            'policy.onnx' if isaaclab else ''))
    parser.add_argument('--device', default='cpu',
                        help="simulation device: 'cpu', or 'cuda'/'cuda:N' with mjwarp")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every sub-command."""
    parser = argparse.ArgumentParser(prog='sim2real', description=__doc__)
    parser.add_argument('-v', '--verbose', action='store_true', help='debug logging')
    parser.add_argument('--version', action='version', version=f'sim2real {__version__}')
    # -v after the verb too (SUPPRESS: a verb without it keeps the global value)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument('-v', '--verbose', action='store_true', default=argparse.SUPPRESS,
                        help='debug logging')
    sub = parser.add_subparsers(dest='command', required=True)
    sub.add_parser('tasks', help='list registered tasks',
                   parents=[common]).set_defaults(func=_cmd_tasks)

    p = sub.add_parser('train', help='train a task (PPO or SAC)', parents=[common])
    p.add_argument('task', help='registered task name (see `sim2real tasks`)')
    p.add_argument('--run-dir', required=True, help='output folder of the run')
    p.add_argument('--seed', type=int, default=0, help='seed of env and learner')
    p.add_argument('--num-envs', type=_positive_int, default=None, help='parallel environments')
    p.add_argument('--max-iterations', type=_positive_int, default=None,
                   help='iterations in total (a rollout and an update each)')
    p.add_argument('--algo', default=None, choices=ALGORITHMS,
                   help="learning algorithm (default: the task's, see `sim2real tasks`)")
    p.add_argument('--workers', type=_non_negative_int, default=0,
                   help='rollout workers on Ray (extra "ray"), each stepping num_envs / N '
                        'envs; 0: the envs step in this process and Ray is not imported')
    p.add_argument('--ray-address', default=None,
                   help="Ray cluster to join ('auto' after `ray start`, or host:port); "
                        'default: a local Ray started for the run')
    p.add_argument('--max-seconds', type=_positive_float, default=None,
                   help='wall-clock budget [s]')
    p.add_argument('--save-interval', type=_positive_int, default=None,
                   help='checkpoint every N iterations (task default: 25)')
    p.add_argument('--resume', action='store_true', help='continue from the last checkpoint')
    p.add_argument('--overwrite', action='store_true',
                   help='remove the run already in --run-dir and start over')
    p.add_argument('--init-from', default=None, metavar='RUN_DIR_CHECKPOINT_OR_ONNX',
                   help='start the policy (actor, action std, observation normalizer) from '
                        'that of another run, e.g. a rough-terrain task from a flat-ground run, '
                        'or from an exported policy.onnx (PPO; the action std then starts at '
                        'init_noise_std); the critic starts fresh')
    p.add_argument('--action', default=None,
                   help='action interface (default: the first of the task; `sim2real tasks` '
                        'lists them)')
    p.add_argument('--threads', type=_non_negative_int, default=None,
                   help='simulation threads (default and 0: all CPUs; with --resume the '
                        "default keeps the run's)")
    p.add_argument('--set', action='append', default=[], metavar='CONFIG.FIELD=VALUE',
                   help='override a field of the env config of the task (env.), of its '
                        'training defaults (train.) or of an algorithm (ppo., sac.), e.g. --set '
                        'env.rewards.tilt.weight=-0.5 --set ppo.learning_rate=3e-4; the value '
                        'is YAML, checked against the type of the field; repeatable; stored '
                        'with the run')
    add_backend_args(p, isaaclab=True)
    p.add_argument('--no-progress', action='store_true', help='hide the progress bar')
    p.set_defaults(func=_cmd_train)

    p = sub.add_parser('export', parents=[common],
                       help='export a run to ONNX with its contract')
    p.add_argument('run_dir', metavar='RUN_DIR_OR_ONNX',
                   help='run directory written by `sim2real train`, or an exported .onnx '
                        'whose contract is re-derived from its task and bound to its graph '
                        '(for files exported before the digest; refused if they differ)')
    p.add_argument('--out', default=None,
                   help='ONNX path (default RUN_DIR/policy.onnx, or the .onnx in place)')
    p.add_argument('--trust-graph', action='store_true',
                   help='re-binding an .onnx without a digest: bind its graph although '
                        'nothing can show it is the one exported (compare the printed '
                        'graph_sha256 with the one you expect)')
    p.add_argument('--samples', type=_positive_int, default=1000, help='observations compared')
    p.add_argument('--tolerance', type=_positive_float, default=1e-5, help='max |onnx - torch|')
    p.set_defaults(func=_cmd_export)

    p = sub.add_parser('import-isaaclab', parents=[common],
                       help='turn an Isaac Lab rsl_rl run into a policy.onnx of our task with '
                            'its contract')
    p.add_argument('run_dir', metavar='RUN_DIR',
                   help='Isaac Lab run directory (params/env.yaml, params/agent.yaml, '
                        'model_<iteration>.pt; the newest is taken)')
    p.add_argument('--task', required=True,
                   help='our task of the same robot, whose contract the file gets (see '
                        '`sim2real tasks`)')
    p.add_argument('--out', default=None, help='ONNX path (default RUN_DIR/policy.onnx)')
    p.add_argument('--joint-order', default=None, metavar='J1,J2,...',
                   help="the run's articulation joint order (Isaac Lab: "
                        "env.scene['robot'].joint_names); default: that of the URDF it "
                        'spawned')
    p.add_argument('--urdf', default=None,
                   help='where the URDF the run spawned is now, if not at its recorded path')
    p.set_defaults(func=_cmd_import_isaaclab)

    p = sub.add_parser('eval', parents=[common],
                       help='evaluate a policy under full randomization')
    p.add_argument('policy', help='policy.onnx or a run directory')
    p.add_argument('--episodes', type=_positive_int, default=256, help='number of episodes')
    p.add_argument('--seed', type=int, default=12345, help='evaluation seed')
    p.add_argument('--play', action='store_true', help='without disturbances and noise')
    p.add_argument('--json', action='store_true', help='print one JSON object')
    p.add_argument('--video', default=None, help='also record one episode to this GIF file')
    add_backend_args(p, isaaclab=True)
    p.set_defaults(func=_cmd_eval)

    p = sub.add_parser('robustness', parents=[common],
                       help='evaluate a policy at the nominal robot, the edges and corners of '
                            'its randomization box and 1.25x past each edge')
    p.add_argument('policy', help='policy.onnx or a run directory')
    p.add_argument('--episodes', type=_positive_int, default=32, help='episodes per point')
    p.add_argument('--seed', type=int, default=12345, help='evaluation seed')
    p.add_argument('--out', default=None,
                   help='folder for robustness.json, robustness.md and robustness.png')
    p.add_argument('--max-corners', type=_positive_int, default=256,
                   help='more corners than this: a strength-3 covering design instead')
    p.add_argument('--batch-envs', type=_positive_int, default=8192,
                   help='envs simulated at once (points are run in batches)')
    p.add_argument('--json', action='store_true', help='print the report as one JSON object')
    p.add_argument('--no-progress', action='store_true', help='hide the progress bar')
    add_backend_args(p)
    p.set_defaults(func=_cmd_robustness)

    p = sub.add_parser('hil', parents=[common],
                       help='fly a policy through the ROS 2 node against the simulator')
    p.add_argument('robot', help='registered robot (sim2real.deploy.robots) with a '
                                 'config/<robot>.yaml')
    p.add_argument('--policy', required=True, help='exported policy.onnx')
    p.add_argument('--duration', type=_positive_float, default=10.0,
                   help='nominal flight measured for this long [s]')
    p.add_argument('--faults', default='all',
                   help="'none', 'all' or a comma list of fault names")
    p.add_argument('--params', default=None,
                   help='parameter file of both nodes (default config/<robot>.yaml)')
    p.add_argument('--log-dir', default=None, help='folder for the logs of both nodes')
    p.add_argument('--expect', action='append', default=[], type=_floor, metavar='METRIC>=X',
                   help='a floor on a figure of the nominal run (or METRIC<=X), added to the '
                        "robot's or replacing its floor or error bound on that metric; "
                        'repeatable, e.g. rotation_rad_per_10s>=6.4 for 80 %% of an eval '
                        'figure of 8, or lin_vel_error_mps<=0.2 for a policy that walks less '
                        'precisely than the 0.15 m/s bound')
    p.add_argument('--json', action='store_true', help='print one JSON object')
    p.set_defaults(func=_cmd_hil)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `sim2real` console script."""
    args = build_parser().parse_args(argv)
    rank = os.environ.get('RANK', '0') if os.environ.get('WORLD_SIZE', '1') != '1' else '0'
    level = logging.DEBUG if args.verbose else logging.INFO
    if rank != '0':   # under torchrun the other ranks only warn (rank 0 logs progress)
        level = max(level, logging.WARNING)
    logging.basicConfig(level=level, stream=sys.stderr, format=(
        '%(levelname)s %(name)s: %(message)s' if rank == '0'
        else f'%(levelname)s [rank {rank}] %(name)s: %(message)s'))
    try:
        return args.func(args)
    except (KeyError, ValueError, FileNotFoundError, RuntimeError) as exc:
        message = str(exc.args[0] if exc.args else exc)
        # one line, also for multi-line messages of wrapped errors (e.g. torch.load's)
        log.error('%s', ' '.join(line.strip() for line in message.splitlines() if line.strip()))
        return 2
    except Exception:   # a crash is an error (2), never a FAIL verdict (1)
        log.exception('unexpected error')
        return 2


if __name__ == '__main__':
    sys.exit(main())
