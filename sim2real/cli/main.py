"""`sim2real` command line: list, inspect, train, export, eval, robustness, hil."""

from __future__ import annotations

import errno
import logging
import os
import sys

from sim2real.cli.commands import EXIT_INTERRUPTED
from sim2real.cli.parser import build_parser

log = logging.getLogger('sim2real')

EXPECTED = (KeyError, ValueError, FileNotFoundError, RuntimeError, PermissionError,
            IsADirectoryError, NotADirectoryError)
"""Errors of a user's input or machine, reported as one line with exit status 2."""
MACHINE_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EACCES,
                  errno.EPERM, errno.EIO)
"""OSErrors of the machine (a full disk or quota, a file size limit, a read-only or failing
file system, no permission): one line, exit 2."""


def _one_line(exc: BaseException) -> str:
    """An exception's message on one line (multi-line messages of wrapped errors joined)."""
    message = str(exc.args[0] if exc.args and not isinstance(exc, OSError) else exc)
    return ' '.join(line.strip() for line in message.splitlines() if line.strip())


def _configure_logging(verbose: bool) -> None:
    """INFO (DEBUG with -v) to stderr; under torchrun the other ranks only warn."""
    rank = os.environ.get('RANK', '0') if os.environ.get('WORLD_SIZE', '1') != '1' else '0'
    level = logging.DEBUG if verbose else logging.INFO
    if rank != '0':
        level = max(level, logging.WARNING)
    logging.basicConfig(level=level, stream=sys.stderr, format=(
        '%(levelname)s %(name)s: %(message)s' if rank == '0'
        else f'%(levelname)s [rank {rank}] %(name)s: %(message)s'))


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `sim2real` console script."""
    args = build_parser().parse_args(argv)
    _configure_logging(args.verbose)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        log.warning('interrupted')
        return EXIT_INTERRUPTED
    except OSError as exc:
        if isinstance(exc, EXPECTED) or exc.errno in MACHINE_ERRNOS:
            log.error('%s', _one_line(exc))
            return 2
        log.exception('unexpected error')
        return 2
    except EXPECTED as exc:
        log.error('%s', _one_line(exc))
        return 2
    except Exception:   # a crash is an error (2), never a FAIL verdict (1)
        log.exception('unexpected error')
        return 2


if __name__ == '__main__':
    sys.exit(main())
