"""Command-line overrides of typed configs: `--set env.rewards.tilt.weight=-0.5`.

An assignment walks dataclass fields and dict keys from a named root to one leaf and sets it,
after checking the value (parsed as YAML) against the field's type, or against the current
value's type inside a dict. A name that does not exist is refused with the closest names; a
value of the wrong type is refused with the type expected. Nothing is set unless every
assignment is valid.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import math
import types
import typing
from typing import Any, Sequence

import yaml


class ConfigError(ValueError):
    """An override that names no field or carries a value of the wrong type."""


def parse_assignment(text: str) -> tuple[list[str], Any]:
    """'a.b.c=value' -> (['a', 'b', 'c'], value parsed as YAML)."""
    path, sep, raw = text.partition('=')
    names = path.strip().split('.')
    if not sep or not all(names):
        raise ConfigError(f'--set "{text}": expected dotted.path=value')
    try:
        value = yaml.safe_load(raw) if raw.strip() else ''
    except yaml.YAMLError as exc:
        raise ConfigError(f'--set "{text}": value is not valid YAML ({exc})') from None
    return names, value


def apply_overrides(roots: dict[str, Any], assignments: Sequence[str]) -> None:
    """Set each 'root.path=value' in roots (name -> config tree), all or none of them."""
    parsed = [(text, *parse_assignment(text)) for text in assignments]
    trial: dict[str, Any] = {}
    for text, names, value in parsed:        # check all, in order, on one copy of each root
        if names[0] not in trial:
            trial[names[0]] = copy.deepcopy(_root(roots, names, text))
        _assign(trial, names, value, text)
    for text, names, value in parsed:
        _assign(roots, names, value, text)


def split_by_root(assignments: Sequence[str], roots: Sequence[str]) -> dict[str, list[str]]:
    """Assignments grouped by their root name; an unknown root is refused."""
    out: dict[str, list[str]] = {name: [] for name in roots}
    for text in assignments:
        names, _ = parse_assignment(text)
        if names[0] not in out:
            raise ConfigError(f'--set "{text}": unknown config "{names[0]}"'
                              f'{did_you_mean(names[0], roots)}; configs: {", ".join(roots)}')
        out[names[0]].append(text)
    return out


def _root(roots: dict[str, Any], names: list[str], text: str) -> Any:
    """The config tree an assignment starts from."""
    if names[0] not in roots:
        raise ConfigError(f'--set "{text}": unknown config "{names[0]}"'
                          f'{did_you_mean(names[0], roots)}; configs: {", ".join(roots)}')
    return roots[names[0]]


def _assign(roots: dict[str, Any], names: list[str], value: Any, text: str) -> None:
    """Walk to the leaf's owner, check the value and set it."""
    owner = _root(roots, names, text)
    where = names[0]
    for name in names[1:-1]:
        owner = _child(owner, name, where, text)
        where = f'{where}.{name}'
    leaf = names[-1]
    if dataclasses.is_dataclass(owner) and not isinstance(owner, type):
        _child(owner, leaf, where, text)
        hint = _hints(type(owner)).get(leaf, Any)
        old = getattr(owner, leaf)
        setattr(owner, leaf, _coerce(value, hint, old, f'{where}.{leaf}', text))
        _revalidate(owner, leaf, old, text)
    elif isinstance(owner, dict):
        old = _child(owner, leaf, where, text)
        owner[leaf] = _coerce(value, Any, old, f'{where}.{leaf}', text)
    else:
        raise ConfigError(f'--set "{text}": {where} is a {type(owner).__name__}, '
                          'which has no fields to set')


def _child(owner: Any, name: str, where: str, text: str) -> Any:
    """owner's field or key called name; the error names the closest ones."""
    if dataclasses.is_dataclass(owner) and not isinstance(owner, type):
        known = [f.name for f in dataclasses.fields(owner)]
        if name in known:
            return getattr(owner, name)
    elif isinstance(owner, dict):
        known = [str(k) for k in owner]
        if name in owner:
            return owner[name]
    else:
        raise ConfigError(f'--set "{text}": {where} is a {type(owner).__name__}, '
                          'which has no fields to set')
    raise ConfigError(f'--set "{text}": {where} has no field "{name}"{did_you_mean(name, known)}')


def _hints(cls: type) -> dict[str, Any]:
    """The resolved field annotations of a dataclass ({} where they do not resolve)."""
    try:
        return typing.get_type_hints(cls)
    except (NameError, TypeError):
        return {}


def did_you_mean(name: str, known: Sequence[str]) -> str:
    """', did you mean "x"?' for the closest known name, or nothing."""
    match = difflib.get_close_matches(name, list(known), n=1, cutoff=0.5)
    return f'; did you mean "{match[0]}"?' if match else ''


def _revalidate(owner: Any, leaf: str, old: Any, text: str) -> None:
    """Rerun the dataclass's own checks (__post_init__); undo the change if they refuse."""
    check = getattr(owner, '__post_init__', None)
    if check is None:
        return
    try:
        check()
    except (TypeError, ValueError) as exc:
        setattr(owner, leaf, old)
        raise ConfigError(f'--set "{text}": {exc}') from None


def _coerce(value: Any, hint: Any, old: Any, where: str, text: str) -> Any:
    """value converted to hint (or to the type of old where hint says nothing), or an error."""
    ok, out = _convert(value, hint, old)
    if not ok:
        expected = _describe(hint, old)
        raise ConfigError(f'--set "{text}": {where} takes {expected}, not {value!r}')
    return out


def _convert(value: Any, hint: Any, old: Any) -> tuple[bool, Any]:
    """(True, converted) if value fits hint, else (False, None)."""
    if hint is Any:
        return _convert_like(value, old)
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        for option in typing.get_args(hint):
            ok, out = _convert(value, option, old)
            if ok:
                return True, out
        return False, None
    if hint is type(None):
        return value is None, None
    if origin is tuple:
        return _convert_tuple(value, typing.get_args(hint))
    if origin in (list, dict):
        return isinstance(value, origin), value
    if hint is bool:
        return isinstance(value, bool), value
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool), value
    if hint is float:
        return _as_float(value)
    if hint is str:
        return isinstance(value, str), value
    return False, None   # dataclasses, callables, classes: not settable from a string


def _as_float(value: Any) -> tuple[bool, Any]:
    """A number as a float; also '3e-4', which YAML 1.1 reads as a string."""
    if isinstance(value, bool):
        return False, None
    if isinstance(value, (int, float)):
        return math.isfinite(value), float(value)
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return False, None
        return math.isfinite(number), number
    return False, None


def _convert_tuple(value: Any, args: tuple) -> tuple[bool, Any]:
    """A YAML list as a tuple of the hinted element types."""
    if not isinstance(value, (list, tuple)):
        return False, None
    if len(args) == 2 and args[1] is Ellipsis:
        args = (args[0],) * len(value)
    elif args and len(args) != len(value):
        return False, None
    out = []
    for item, hint in zip(value, args or (Any,) * len(value)):
        ok, converted = _convert(item, hint, item)
        if not ok:
            return False, None
        out.append(converted)
    return True, tuple(out)


def _convert_like(value: Any, old: Any) -> tuple[bool, Any]:
    """Without a type hint: the type of the value being replaced."""
    if old is None:
        return True, value
    if isinstance(old, bool):
        return isinstance(value, bool), value
    if isinstance(old, float):
        return _as_float(value)
    if isinstance(old, int):
        return isinstance(value, int) and not isinstance(value, bool), value
    if isinstance(old, str):
        return isinstance(value, str), value
    if isinstance(old, (list, tuple)):
        if not isinstance(value, (list, tuple)) or len(value) != len(old):
            return False, None
        items = [_convert_like(v, o) for v, o in zip(value, old)]
        if not all(ok for ok, _ in items):
            return False, None
        return True, type(old)(v for _, v in items)
    if isinstance(old, dict):
        # a whole mapping (e.g. joint name -> angle): the entries it replaces keep their types
        if not isinstance(value, dict):
            return False, None
        items = {k: _convert_like(v, old[k]) if k in old else (True, v)
                 for k, v in value.items()}
        if not all(ok for ok, _ in items.values()):
            return False, None
        return True, {k: v for k, (_, v) in items.items()}
    return False, None


def _describe(hint: Any, old: Any) -> str:
    """The expected type in words."""
    if hint is Any:
        return f'a value like {old!r}'
    if isinstance(hint, type):
        return hint.__name__
    return str(hint).replace('typing.', '')
