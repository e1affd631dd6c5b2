"""Turn configs (dataclasses holding functions and classes) into plain, YAML-able data."""

from __future__ import annotations

import dataclasses
import enum

from sim2real.mdp.ranges import PerEnvRange


def to_plain(obj):
    """Recursively convert dataclasses, callables and tuples into dicts, strings and lists;
    a per-env range with pinned rows as the config's range its free rows draw."""
    if isinstance(obj, PerEnvRange) and obj.free is not None:
        obj = obj.free
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {str(k): to_plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_plain(v) for v in obj]
    if isinstance(obj, enum.Enum):
        return obj.name
    if callable(obj):
        return f'{obj.__module__}:{obj.__qualname__}'
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    return repr(obj)
