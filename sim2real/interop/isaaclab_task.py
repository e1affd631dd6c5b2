"""Our side of training a task in Isaac Lab: the run's task file, the Isaac Lab process, the
import of its checkpoint as our policy.onnx.

`sim2real train TASK --backend isaaclab --run-dir R` writes R/isaaclab_task.yaml (the task's
env config with --set applied, its contract and training settings, as plain data), runs
`python -m sim2real.isaaclab.train R` with the Isaac Lab venv's Python
(SIM2REAL_ISAACLAB_PYTHON), then imports the newest checkpoint (`import_isaaclab_run`), so the
run ends as ours do, with R/policy.onnx holding our contract.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from sim2real.contract import file_sha256
from sim2real.isaaclab.evaluate import check_contract
from sim2real.isaaclab.scene import read_task_file, TASK_FILE

log = logging.getLogger(__name__)

PYTHON_ENV_VAR = 'SIM2REAL_ISAACLAB_PYTHON'
"""The Python of an Isaac Lab 3.0 venv with sim2real installed in it (--no-deps)."""


class IsaacLabSetupError(RuntimeError):
    """The Isaac Lab side is missing or the task has no Isaac Lab env."""


def find_urdf(sha256: str) -> Path:
    """The URDF file among our assets whose SHA-256 is sha256 (the contract's robot)."""
    from sim2real.assets import asset_dirs
    searched = [p for d in asset_dirs('urdf') if d.is_dir() for p in sorted(d.glob('*.urdf'))]
    for path in searched:
        if file_sha256(path) == sha256:
            return path.resolve()
    raise IsaacLabSetupError(f'no URDF with SHA-256 {sha256[:12]}... among '
                             f'{", ".join(str(p) for p in searched)}')


def task_file_data(task: str, sets: list[str] | None = None) -> dict:
    """The task file's content: env config (sets applied), contract, training settings."""
    from sim2real.mdp.contract import contract_from_env
    from sim2real.mdp.serialize import to_plain
    from sim2real.tasks import get_task
    from sim2real.training import build_env, check_request, resolve_train_cfg, task_env_cfg
    spec = get_task(task)
    if spec.isaaclab_env is None:
        raise IsaacLabSetupError(f'task "{task}" has no Isaac Lab env (its TaskSpec names no '
                                 'isaaclab_env builder)')
    sets = list(sets or [])
    check_request(task, sets)
    cfg, train = task_env_cfg(task, sets), resolve_train_cfg(spec.train, sets)
    env = build_env(task, seed=0, num_envs=1, num_threads=1, sets=sets)
    contract = contract_from_env(env)
    urdf = find_urdf(contract.urdf_sha256)
    return {'task': task, 'isaaclab_env': spec.isaaclab_env, 'urdf': str(urdf.resolve()),
            'contract': json.loads(contract.to_json()), 'env': to_plain(cfg),
            'train': to_plain(train)}


def write_task_file(task: str, run_dir: str | Path, sets: list[str] | None = None) -> Path:
    """Write RUN_DIR/isaaclab_task.yaml; return its path."""
    path = Path(run_dir) / TASK_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(task_file_data(task, sets), sort_keys=False))
    return path


def isaaclab_python() -> str:
    """The Isaac Lab venv's Python from SIM2REAL_ISAACLAB_PYTHON, checked to exist."""
    python = os.environ.get(PYTHON_ENV_VAR)
    if not python or not Path(python).is_file():
        raise IsaacLabSetupError(
            f'{PYTHON_ENV_VAR}={python!r}: set it to the Python of an Isaac Lab 3.0 venv with '
            'sim2real installed (docs/isaaclab.md)')
    return python


def train_in_isaaclab(task: str, run_dir: str | Path, sets: list[str] | None = None,
                      num_envs: int | None = None, iterations: int | None = None,
                      seed: int = 0, device: str = 'cpu', resume: bool = False,
                      save_interval: int | None = None) -> Path:
    """Write the task file, train in the Isaac Lab venv, import the run as
    RUN_DIR/policy.onnx; return that path. iterations: in total, as ours; a resumed run keeps
    its task file, env count and seed."""
    from sim2real.interop.isaaclab_import import import_isaaclab_run
    run_dir = Path(run_dir)
    python = isaaclab_python()
    path = run_dir / TASK_FILE
    if resume:
        if not path.is_file():
            raise IsaacLabSetupError(f'--resume: {path} does not exist')
        if sets:
            raise IsaacLabSetupError('--set with --resume: the run keeps the settings of its '
                                     f'task file ({path})')
        run = yaml.safe_load(path.read_text()).get('run', {})
        num_envs, seed = num_envs or run.get('num_envs'), run.get('seed', seed)
    else:
        if list(run_dir.glob('model_*.pt')):
            raise IsaacLabSetupError(f'{run_dir} holds checkpoints of another run: --resume '
                                     'it, or choose a new --run-dir')
        data = task_file_data(task, sets)
        data['run'] = {'num_envs': num_envs or int(data['train']['num_envs']), 'seed': seed}
        run_dir.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(data, sort_keys=False))
    # -P: a checkout's sim2real/ in the working directory must not shadow the installed one
    command = [python, '-P', '-m', 'sim2real.isaaclab.train', str(run_dir), '--seed',
               str(seed), '--device', device]
    if num_envs:
        command += ['--num-envs', str(num_envs)]
    if iterations:
        command += ['--iterations', str(iterations)]
    if resume:
        command.append('--resume')
    if save_interval:
        command += ['--save-interval', str(save_interval)]
    log.info('running %s', ' '.join(command))
    done = subprocess.run(command, check=False, stdout=sys.stderr)   # ours: one JSON line
    if done.returncode != 0:
        raise IsaacLabSetupError(f'Isaac Lab training exited with {done.returncode}: '
                                 f'{" ".join(command)}')
    return import_isaaclab_run(run_dir, task).path


def evaluate_in_isaaclab(policy: str | Path, episodes: int, seed: int = 12345,
                         device: str = 'cpu') -> dict:
    """Our ONNX policy in its task's Isaac Lab env (one episode per env), judged by the
    task's evaluation floors as `sim2real eval` judges it in ours."""
    from sim2real.onnx_io import read_contract
    from sim2real.tasks import get_task
    from sim2real.verdict import as_dicts, judge
    python = isaaclab_python()
    policy = Path(policy)
    if policy.is_dir():
        policy = policy / 'policy.onnx'   # a run directory: its exported file
    if not policy.is_file():
        raise IsaacLabSetupError(f'{policy}: no such ONNX file (export the run first)')
    contract = read_contract(policy)
    with tempfile.TemporaryDirectory(prefix='sim2real-isaaclab-eval-') as run_dir:
        write_task_file(contract.task, run_dir)
        check_contract(contract, read_task_file(run_dir))   # before Isaac Lab starts
        out = Path(run_dir) / 'result.json'
        command = [python, '-P', '-m', 'sim2real.isaaclab.evaluate', run_dir, '--policy',
                   str(policy.resolve()), '--episodes', str(episodes), '--seed', str(seed),
                   '--device', device, '--out', str(out)]
        log.info('running %s', ' '.join(command))
        done = subprocess.run(command, check=False, stdout=sys.stderr)
        if done.returncode != 0 or not out.is_file():
            raise IsaacLabSetupError(f'Isaac Lab evaluation exited with {done.returncode}: '
                                     f'{" ".join(command)}')
        result = json.loads(out.read_text())
    result.update({'backend': 'isaaclab', 'device': device,
                   'randomization': 'the Isaac Lab env of the task (docs/isaaclab.md)'})
    floors = get_task(contract.task).acceptance.get('eval', ())
    passed, text = judge(result, floors)
    result['verdict'] = {'passed': passed, 'text': text, 'floors': as_dicts(floors)}
    return result
