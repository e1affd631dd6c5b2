"""Files written whole or not at all: a temporary file beside the target, then a rename."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Iterator


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, sync: bool = False) -> Iterator[Path]:
    """A temporary path beside `path` to write within; on success it replaces `path` (after
    an fsync with sync=True), on any error it is removed and an OSError names `path`, so a
    full disk or a file size limit leaves the previous file and no partial one."""
    path = Path(path)
    tmp = path.with_name(f'.{path.name}.{os.getpid()}.tmp')
    try:
        yield tmp
        if sync:
            with open(tmp, 'rb+') as f:
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise type(exc)(exc.errno, f'cannot write {path}: {exc.strerror or exc}') from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_atomic(path: str | os.PathLike, data: bytes | str) -> Path:
    """Write bytes or UTF-8 text to path whole or not at all; the path."""
    with atomic_path(path) as tmp:
        if isinstance(data, str):
            tmp.write_text(data, encoding='utf-8')
        else:
            tmp.write_bytes(data)
    return Path(path)
