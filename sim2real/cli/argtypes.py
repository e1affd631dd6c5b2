"""argparse types of the CLI: counts, durations and floors checked when parsed."""

from __future__ import annotations

import argparse


def integer(text: str, least: int) -> int:
    """text as an integer >= least; ArgumentTypeError saying what it must be."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'must be an integer, got {text!r}') from None
    if value < least:
        raise argparse.ArgumentTypeError(f'must be at least {least}, got {value}')
    return value


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    return integer(text, 1)


def non_negative_int(text: str) -> int:
    """argparse type: an integer >= 0."""
    return integer(text, 0)


def positive_float(text: str) -> float:
    """argparse type: a finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'must be a number, got {text!r}') from None
    if not 0.0 < value < float('inf'):
        raise argparse.ArgumentTypeError(f'must be a finite number > 0, got {text}')
    return value


def gif_path(text: str) -> str:
    """argparse type: a path ending in .gif (the recorder writes animated GIFs)."""
    if not text.lower().endswith('.gif'):
        raise argparse.ArgumentTypeError(f'must be a .gif path (an animated GIF is written), '
                                         f'got {text!r}')
    return text


def floor(text: str):
    """argparse type: METRIC>=VALUE or METRIC<=VALUE as a sim2real.verdict.Floor."""
    from sim2real.verdict import parse_floor
    try:
        return parse_floor(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc
