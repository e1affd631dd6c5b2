"""The `sim2real` argument parser: every verb, its options grouped, defaults shown."""

from __future__ import annotations

import argparse

from sim2real import __version__
from sim2real.algo_cfg import ALGORITHMS
from sim2real.cli import commands
from sim2real.export.observation_band import BAND_SAMPLES
from sim2real.cli.argtypes import (
    floor, gif_path, non_negative_int, positive_float, positive_int)

DESCRIPTION = ('Train robot policies in MuJoCo, export them to ONNX with their deployment '
               'contract, and fly them through a ROS 2 node against the simulator (HIL).')
EPILOG = ('Start with `sim2real list`; `sim2real VERB --help` for each verb. Global options '
          '(-v) go before or after the verb.')


class HelpFormatter(argparse.HelpFormatter):
    """Help with each option's default, where it has a meaningful one."""

    def _get_help_string(self, action: argparse.Action) -> str:
        """The help text, with '(default: X)' unless X is None, False, [] or suppressed."""
        text = action.help or ''
        default = action.default
        if ('%(default)' in text or default in (None, False, [], argparse.SUPPRESS)
                or not action.option_strings):
            return text
        return text + ' (default: %(default)s)'


def add_backend_args(parser, isaaclab: bool = False) -> None:
    """--backend and --device, shared by train, eval and robustness (isaaclab: train's and
    eval's)."""
    choices = ['mujoco', 'mjwarp'] + (['isaaclab'] if isaaclab else [])
    parser.add_argument('--backend', default='mujoco', choices=choices,
                        help='simulation backend: mujoco (mujoco.batch, CPU threads) or '
                        'mjwarp (MuJoCo Warp)' + (
                            '; isaaclab: run in the Isaac Lab 3.0 env of the task (the Python '
                            'named by SIM2REAL_ISAACLAB_PYTHON); train imports the run as '
                            'policy.onnx' if isaaclab else ''))
    parser.add_argument('--device', default='cpu',
                        help="simulation device: 'cpu', or 'cuda'/'cuda:N' with mjwarp")


def _json_flag(parser) -> None:
    """--json: one JSON object on stdout instead of tables."""
    parser.add_argument('--json', action='store_true',
                        help='print one JSON object instead of tables (for scripts)')


def _checkpoint_flag(parser) -> None:
    """--checkpoint N of a run directory."""
    parser.add_argument('--checkpoint', type=non_negative_int, default=None, metavar='N',
                        help='with a run directory: the checkpoint of iteration N (default: '
                             'the newest)')


def _verb(sub, name: str, help_text: str, common, func) -> argparse.ArgumentParser:
    """A sub-command parser with the shared formatter and global options."""
    parser = sub.add_parser(name, help=help_text, description=help_text, parents=[common],
                            formatter_class=HelpFormatter)
    parser.set_defaults(func=func)
    return parser


def _add_train(sub, common) -> None:
    """`sim2real train`."""
    p = _verb(sub, 'train', 'train a task (PPO or SAC)', common, commands.cmd_train)
    p.add_argument('task', help='registered task name (see `sim2real list`)')
    run = p.add_argument_group('run directory')
    run.add_argument('--run-dir', required=True, help='output folder of the run')
    run.add_argument('--resume', action='store_true',
                     help='continue the run in --run-dir from its last checkpoint')
    run.add_argument('--overwrite', action='store_true',
                     help='remove the run already in --run-dir and start over')
    run.add_argument('--resume-or-new', action='store_true',
                     help='continue the run in --run-dir if it has a checkpoint, else start '
                          'one there (for jobs a scheduler may restart)')
    run.add_argument('--save-interval', type=positive_int, default=None,
                     help='checkpoint every N iterations (task default: 25)')
    run.add_argument('--init-from', default=None, metavar='RUN_DIR_CHECKPOINT_OR_ONNX',
                     help='start the policy (actor, action std, observation normalizer) from '
                          'that of another run, e.g. a rough-terrain task from a flat-ground '
                          'run, or from an exported policy.onnx (PPO; the action std then '
                          'starts at init_noise_std); the critic starts fresh')
    schedule = p.add_argument_group('schedule')
    schedule.add_argument('--seed', type=int, default=0, help='seed of env and learner')
    schedule.add_argument('--num-envs', type=positive_int, default=None,
                          help="parallel environments (default: the task's)")
    schedule.add_argument('--max-iterations', type=positive_int, default=None,
                          help='iterations in total, a rollout and an update each (default: '
                               "the task's)")
    schedule.add_argument('--max-seconds', type=positive_float, default=None,
                          help='wall-clock budget [s]')
    learner = p.add_argument_group('learner and scale-out')
    learner.add_argument('--algo', default=None, choices=ALGORITHMS,
                         help="learning algorithm (default: the task's, see `sim2real list`)")
    learner.add_argument('--action', default=None,
                         help='action interface (default: the first of the task; `sim2real '
                              'list` shows them)')
    learner.add_argument('--workers', type=non_negative_int, default=0,
                         help='rollout workers on Ray (extra "ray"), each stepping num_envs / '
                              'N envs; 0: the envs step in this process and Ray is not '
                              'imported')
    learner.add_argument('--ray-address', default=None,
                         help="Ray cluster to join ('auto' after `ray start`, or host:port); "
                              'default: a local Ray started for the run')
    learner.add_argument('--set', action='append', default=[], metavar='CONFIG.FIELD=VALUE',
                         help='override a field of the env config of the task (env.), of its '
                              'training defaults (train.) or of an algorithm (ppo., sac.), '
                              'e.g. --set env.rewards.tilt.weight=-0.5 --set '
                              'ppo.learning_rate=3e-4; the value is YAML, checked against the '
                              'type of the field; repeatable; stored with the run')
    sim = p.add_argument_group('simulation')
    sim.add_argument('--threads', type=non_negative_int, default=None,
                     help='simulation threads (default and 0: all CPUs; with --resume the '
                          "default keeps the run's)")
    add_backend_args(sim, isaaclab=True)
    out = p.add_argument_group('output')
    out.add_argument('--no-progress', action='store_true', help='hide the progress bar')
    _json_flag(out)


def _add_export(sub, common) -> None:
    """`sim2real export` and `sim2real import-isaaclab`."""
    p = _verb(sub, 'export', 'export a run to ONNX with its contract', common,
              commands.cmd_export)
    p.add_argument('run_dir', metavar='RUN_DIR_OR_ONNX',
                   help='run directory written by `sim2real train`, or an exported .onnx '
                        'whose contract is re-derived from its task and bound to its graph '
                        '(for files exported before the digest; refused if they differ)')
    _checkpoint_flag(p)
    p.add_argument('--out', default=None,
                   help='ONNX path (default RUN_DIR/policy.onnx, or the .onnx in place)')
    p.add_argument('--trust-graph', action='store_true',
                   help='re-binding an .onnx without a digest: bind its graph although '
                        'nothing can show it is the one exported (compare the printed '
                        'graph_sha256 with the one you expect)')
    p.add_argument('--samples', type=positive_int, default=1000, help='observations compared')
    p.add_argument('--band-samples', type=non_negative_int, default=BAND_SAMPLES,
                   help="observation vectors of the policy's rollouts under training "
                        'randomization its training band is measured over (0: no band, so '
                        'neither replay nor the node flags what training never showed it)')
    p.add_argument('--tolerance', type=positive_float, default=1e-5,
                   help='max |onnx - torch|')
    _json_flag(p)

    p = _verb(sub, 'import-isaaclab', 'turn an Isaac Lab rsl_rl run into a policy.onnx of '
              'our task with its contract', common, commands.cmd_import_isaaclab)
    p.add_argument('run_dir', metavar='RUN_DIR',
                   help='Isaac Lab run directory (params/env.yaml, params/agent.yaml, '
                        'model_<iteration>.pt; the newest is taken)')
    p.add_argument('--task', required=True,
                   help='our task of the same robot, whose contract the file gets (see '
                        '`sim2real list`)')
    p.add_argument('--out', default=None, help='ONNX path (default RUN_DIR/policy.onnx)')
    p.add_argument('--joint-order', default=None, metavar='J1,J2,...',
                   help="the run's articulation joint order (Isaac Lab: "
                        "env.scene['robot'].joint_names); default: that of the URDF it "
                        'spawned')
    p.add_argument('--urdf', default=None,
                   help='where the URDF the run spawned is now, if not at its recorded path')
    _json_flag(p)


def _add_judges(sub, common) -> None:
    """`sim2real eval`, `robustness` and `hil`: the commands with a verdict."""
    p = _verb(sub, 'eval', 'evaluate a policy under full randomization', common,
              commands.cmd_eval)
    p.add_argument('policy', help='policy.onnx or a run directory')
    _checkpoint_flag(p)
    p.add_argument('--episodes', type=positive_int, default=256, help='number of episodes')
    p.add_argument('--seed', type=int, default=12345, help='evaluation seed')
    p.add_argument('--play', action='store_true', help='without disturbances and noise')
    p.add_argument('--video', type=gif_path, default=None, metavar='FILE.gif',
                   help='also record one episode to this animated GIF')
    add_backend_args(p, isaaclab=True)
    _json_flag(p)

    p = _verb(sub, 'robustness', 'evaluate a policy at the nominal robot, the edges and '
              'corners of its randomization box and 1.25x past each edge', common,
              commands.cmd_robustness)
    p.add_argument('policy', help='policy.onnx or a run directory')
    p.add_argument('--episodes', type=positive_int, default=32, help='episodes per point')
    p.add_argument('--seed', type=int, default=12345, help='evaluation seed')
    p.add_argument('--out', default=None,
                   help='folder for robustness.json, robustness.md and robustness.png')
    p.add_argument('--max-corners', type=positive_int, default=256,
                   help='more corners than this: a strength-3 covering design instead')
    p.add_argument('--batch-envs', type=positive_int, default=8192,
                   help='envs simulated at once (points are run in batches)')
    p.add_argument('--no-progress', action='store_true', help='hide the progress bar')
    add_backend_args(p)
    _json_flag(p)

    p = _verb(sub, 'hil', 'fly a policy through the ROS 2 node against the simulator',
              common, commands.cmd_hil)
    p.add_argument('robot', help='registered robot with a config/<robot>.yaml (see '
                                 '`sim2real list`)')
    p.add_argument('--policy', required=True, help='exported policy.onnx')
    p.add_argument('--duration', type=positive_float, default=10.0,
                   help='nominal flight measured for this long [s]')
    p.add_argument('--faults', default='all',
                   help="'none', 'all' or a comma list of fault names")
    p.add_argument('--params', default=None,
                   help='parameter file of both nodes (default config/<robot>.yaml)')
    p.add_argument('--log-dir', default=None,
                   help='folder for the logs of both nodes (default: a new temporary folder)')
    p.add_argument('--record', default=None, metavar='DIR',
                   help="the node's flight recorder writes MCAP logs to DIR/policy_node "
                        '(`sim2real replay` re-runs them) and the simulated robot its ground '
                        'truth and events to DIR/sim_bridge; default: no recording')
    p.add_argument('--bridge', action='append', default=[], metavar='NAME=VALUE',
                   help='a parameter of the simulated robot over the parameter file, e.g. '
                        'base_mass_scale=1.5 or base_payload_kg=6 (a robot heavier than the '
                        'one trained for); repeatable')
    p.add_argument('--scenario', choices=('check', 'identify'), default='check',
                   help='check: the nominal run and every fault (the default); identify: one '
                        'identification run (steps and turns the robot can take with its '
                        'policy, under 60 s) to record with --record')
    p.add_argument('--variant', default=None, metavar='FILE.yaml',
                   help='a variant of the simulated robot: a YAML mapping of its randomization '
                        'box parameters (the names `sim2real robustness` reports) to values, '
                        'inside the box or past its edges, e.g. "thrust_scale: 0.7" and '
                        '"action_delay_ticks: 3"; the ground truth (--record) keeps them')
    p.add_argument('--expect', action='append', default=[], type=floor, metavar='METRIC>=X',
                   help='a floor on a figure of the nominal run (or METRIC<=X), added to the '
                        "robot's or replacing its floor or error bound on that metric; "
                        'repeatable, e.g. rotation_rad_per_10s>=6.4 for 80 %% of an eval '
                        'figure of 8, or lin_vel_error_mps<=0.2 for a policy that walks less '
                        'precisely than the 0.15 m/s bound')
    _json_flag(p)

    p = _verb(sub, 'excite', "send a robot's identification run (the operator commands of "
              '`hil --scenario identify`) to the policy node of a real robot, while its '
              'flight recorder logs', common, commands.cmd_excite)
    p.add_argument('robot', help='registered robot (see `sim2real list`)')
    p.add_argument('--params', default=None,
                   help="the node's parameter file (default config/<robot>.yaml): the "
                        'topics and the hover target the commands are for')
    p.add_argument('--node-name', default='policy_node',
                   help='the node whose ros__parameters the file holds')
    p.add_argument('--dry-run', action='store_true',
                   help='say what would be sent, send nothing')
    _json_flag(p)

    p = _verb(sub, 'gap', 'the sim-to-real gap of a flight log: its commands replayed in the '
              "task's simulator over short windows from the logged states, per signal the "
              'error against holding the start value', common, commands.cmd_gap)
    p.add_argument('log', help="a node's flight log (.mcap, or the folder of a recording)")
    p.add_argument('--task', default=None,
                   help="the task whose simulator replays it (default: the log's contract's)")
    p.add_argument('--params', default=None, metavar='FILE.yaml',
                   help='box parameters of the simulated robot (the --variant format, e.g. '
                        'an identified robot); default: nominal')
    p.add_argument('--window', type=positive_float, default=0.5,
                   help='length of a replay window [s]')
    p.add_argument('--windows', type=positive_int, default=40,
                   help='windows spread over the spans the policy was in control')
    _json_flag(p)

    p = _verb(sub, 'replay', "re-run a flight log (the node's MCAP recording) through a fresh "
              'runtime: the same decisions to the last bit, or what another policy would have '
              'commanded', common, commands.cmd_replay)
    p.add_argument('log', help='a .mcap flight log, or a folder of them (one recording)')
    p.add_argument('--policy', default=None,
                   help='replay with this policy.onnx instead of the logged one (a '
                        'comparison, not a verdict)')
    p.add_argument('--out', default=None, metavar='DIR',
                   help='write a report to DIR: report.md (figures, training-band flags, '
                        'events) and PNG plots (observation terms against their training '
                        "band, the robot's own panels)")
    _json_flag(p)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every sub-command."""
    parser = argparse.ArgumentParser(prog='sim2real', description=DESCRIPTION, epilog=EPILOG,
                                     formatter_class=HelpFormatter)
    parser.add_argument('-v', '--verbose', action='store_true', help='debug logging')
    parser.add_argument('--version', action='version', version=f'sim2real {__version__}')
    # -v after the verb too (SUPPRESS: a verb without it keeps the global value)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument('-v', '--verbose', action='store_true', default=argparse.SUPPRESS,
                        help='debug logging')
    sub = parser.add_subparsers(dest='command', required=True, metavar='VERB')
    p = _verb(sub, 'list', 'list tasks, HIL robots and shipped policies with their headline '
              'figures', common, commands.cmd_list)
    _json_flag(p)
    _verb(sub, 'tasks', 'list registered tasks, one per line', common, commands.cmd_tasks)
    p = _verb(sub, 'inspect', "show a policy's deployment contract: robot, joints, "
              'observations, action, rates, gains, training box', common, commands.cmd_inspect)
    p.add_argument('policy', help='exported policy.onnx')
    _json_flag(p)
    _add_train(sub, common)
    _add_export(sub, common)
    _add_judges(sub, common)
    return parser
