"""The run-directory rule of `sim2real train`: a run is continued or replaced, never mixed."""

from __future__ import annotations

import logging
import os
from pathlib import Path
import shutil

log = logging.getLogger('sim2real')

RUN_FILES = ('checkpoints', 'tb', 'config.yaml', 'summary.json', 'curves.png', 'policy.onnx')
"""What a training run leaves in its directory (TensorBoard's events in tb/)."""


def check_run_dir(run_dir: Path, resume: bool, overwrite: bool,
                  resume_or_new: bool = False) -> bool:
    """Whether to resume: a run directory that holds a run needs --resume (continue it),
    --overwrite (remove its run files first) or --resume-or-new (continue it if it has a
    checkpoint, else start there); --resume needs a checkpoint. ValueError saying which.
    Under torchrun only rank 0 checks (the others would see its first files), and a worker
    that torchrun restarted resumes by itself."""
    from sim2real.rl.checkpoint import latest_checkpoint
    if sum((resume, overwrite, resume_or_new)) > 1:
        raise ValueError('--resume, --overwrite and --resume-or-new: choose one')
    # under torchrun every rank asks for a resume (rank 0 finds none: a new run), so all
    # ranks take the same collective path
    ranked = int(os.environ.get('WORLD_SIZE', '1')) > 1
    if int(os.environ.get('TORCHELASTIC_RESTART_COUNT', '0')) > 0 or os.environ.get(
            'RANK', '0') != '0':
        return resume or resume_or_new
    if run_dir.exists() and not run_dir.is_dir():
        raise ValueError(f'--run-dir {run_dir} is a file, not a folder')
    latest = latest_checkpoint(run_dir) if run_dir.is_dir() else None
    holds = run_dir.is_dir() and any((run_dir / name).exists() for name in RUN_FILES)
    if resume_or_new and (latest is not None or not holds):
        log.info('%s (--resume-or-new)', f'resuming from {latest}' if latest else
                 f'no run in {run_dir}: starting one')
        return latest is not None or ranked
    if resume_or_new:
        raise ValueError(f'--resume-or-new: {run_dir} holds run files but no checkpoint to '
                         'resume; --overwrite removes them and starts over')
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
    return resume
