"""Atomic, weights_only-loadable training checkpoints.

A checkpoint is a dict of tensors, dicts, lists, tuples, ints, floats, bools, strings and None,
so torch.load(weights_only=True) reads it without unpickling arbitrary objects.
Checkpoints of a run live in run_dir/checkpoints/model_{iteration:06d}.pt.
"""

from __future__ import annotations

import json
import logging
import os
import re
from pathlib import Path

import torch

from sim2real.atomic import atomic_path

logger = logging.getLogger(__name__)

CHECKPOINT_DIR = 'checkpoints'
_NAME_RE = re.compile(r'^model_(\d{6,})\.pt$')
# temp files of save_checkpoint (sim2real.atomic) that a killed process left behind
_TEMP_RE = re.compile(r'^\.model_\d{6,}\.pt\..+\.tmp$')
_PLAIN_TYPES = (int, float, bool, str, type(None), torch.Tensor)


class CheckpointError(ValueError):
    """A file is not a loadable checkpoint (truncated, corrupted or of another format)."""


def _check_plain(value: object, where: str) -> None:
    """Raise TypeError if value holds anything torch.load(weights_only=True) may refuse."""
    if isinstance(value, dict):
        for key, item in value.items():
            _check_plain(key, where)
            _check_plain(item, f'{where}[{key!r}]')
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _check_plain(item, f'{where}[{i}]')
    elif not isinstance(value, _PLAIN_TYPES):
        raise TypeError(f'checkpoint entry {where} has type {type(value).__name__}, which a '
                        'weights_only load would refuse; store tensors or plain containers')


def plain_config(config: dict) -> dict:
    """config as JSON-plain data (lists, dicts, str, numbers), as checkpoints store it."""
    return json.loads(json.dumps(config, default=str))


def _fsync_dir(directory: Path) -> None:
    """Flush a directory entry to disk where the OS allows it (POSIX), so a rename survives."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def save_checkpoint(path: str | os.PathLike, state: dict) -> Path:
    """Write state to path atomically: temp file in the same directory, fsync, os.replace.

    A crash or error mid-write leaves any previous file at path untouched.
    """
    path = Path(path)
    _check_plain(state, 'state')
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path, sync=True) as tmp, open(tmp, 'wb') as f:
        torch.save(state, f)
    _fsync_dir(path.parent)
    return path


def load_checkpoint(path: str | os.PathLike) -> dict:
    """Load a checkpoint with weights_only=True; raise CheckpointError if it is unreadable."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f'checkpoint {path} does not exist')
    try:
        state = torch.load(path, map_location='cpu', weights_only=True)
    except Exception as exc:  # torch raises RuntimeError, UnpicklingError, EOFError, ...
        raise CheckpointError(
            f'checkpoint {path} is truncated, corrupted or not a checkpoint: '
            f'{type(exc).__name__}: {exc}'
        ) from exc
    if not isinstance(state, dict):
        raise CheckpointError(
            f'checkpoint {path} holds a {type(state).__name__}, not a dict of training state'
        )
    return state


def checkpoint_path(run_dir: str | os.PathLike, iteration: int) -> Path:
    """Return run_dir/checkpoints/model_{iteration:06d}.pt."""
    return Path(run_dir) / CHECKPOINT_DIR / f'model_{iteration:06d}.pt'


def list_checkpoints(run_dir: str | os.PathLike) -> list[tuple[int, Path]]:
    """Return (iteration, path) of the run's checkpoints, oldest first."""
    directory = Path(run_dir) / CHECKPOINT_DIR
    if not directory.is_dir():
        return []
    found = []
    for entry in directory.iterdir():
        match = _NAME_RE.match(entry.name)
        if match and entry.is_file():
            found.append((int(match.group(1)), entry))
    return sorted(found)


def latest_checkpoint(run_dir: str | os.PathLike) -> Path | None:
    """Return the checkpoint with the highest iteration under run_dir/checkpoints, or None."""
    found = list_checkpoints(run_dir)
    return found[-1][1] if found else None


def select_checkpoint(run_dir: str | os.PathLike, iteration: int | None = None) -> Path:
    """The run's checkpoint of that iteration (None: the newest); CheckpointError naming the
    iterations there are when it has none or not that one."""
    found = list_checkpoints(run_dir)
    where = Path(run_dir) / CHECKPOINT_DIR
    if not found:
        raise CheckpointError(f'{run_dir}: no checkpoint under {where}')
    if iteration is None:
        return found[-1][1]
    for number, path in found:
        if number == iteration:
            return path
    kept = ', '.join(str(number) for number, _ in found)
    raise CheckpointError(f'{run_dir}: no checkpoint of iteration {iteration} under {where} '
                          f'(kept: {kept})')


def prune_checkpoints(run_dir: str | os.PathLike, keep_last: int = 3) -> list[Path]:
    """Delete all but the keep_last newest checkpoints; return the deleted paths.

    Also deletes the partial temp files of saves interrupted by a kill (one writer per run).
    """
    if keep_last < 1:
        raise ValueError(f'keep_last must be at least 1, got {keep_last}')
    old = [path for _, path in list_checkpoints(run_dir)[:-keep_last]]
    for path in old:
        path.unlink(missing_ok=True)
        logger.debug('removed old checkpoint %s', path)
    directory = Path(run_dir) / CHECKPOINT_DIR
    for path in directory.iterdir() if directory.is_dir() else ():
        if _TEMP_RE.match(path.name) and path.is_file():
            path.unlink(missing_ok=True)
            logger.info('removed %s, left by an interrupted save', path)
    return old
