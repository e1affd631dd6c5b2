"""Values of the recorder's JSON channels: numbers, arrays and names as JSON writes them.

JSON has no NaN or infinity: non-finite floats are written as the strings 'NaN',
'Infinity' and '-Infinity' (Foxglove and PlotJuggler read the rest as plain numbers), and
turned back by number(), array() and untyped().

The node does not encode JSON itself: it hands a record to the writer process as
``pack(record)`` (arrays as their raw bytes, one C call of ``marshal``), and the writer
process encodes ``encode(unpack(...))``, the same JSON as ``encode(record)``.
"""

from __future__ import annotations

import math

import numpy as np
import orjson

_NON_FINITE = {'NaN': math.nan, 'Infinity': math.inf, '-Infinity': -math.inf}
_NON_FINITE_TEXT = {'nan': 'NaN', 'inf': 'Infinity', '-inf': '-Infinity'}
_AS_IS = frozenset(np.dtype(t) for t in ('float64', 'int64', 'int32', 'bool'))
"""Array dtypes the encoder (orjson) writes exactly as they are."""
_RAW_KINDS = frozenset('biuf')
"""Array kinds pack() hands over as raw bytes (others as lists)."""
_MARSHAL_AS_IS = frozenset((str, bytes, bool, int, float, type(None)))


def plain(value):
    """Numbers, arrays and lists as JSON-ready values, non-finite floats as strings.

    A finite float array goes through numpy's tolist() in one call; only an array holding
    NaN or infinity is walked."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind == 'f' and not all(map(math.isfinite, value.ravel().tolist())):
            return _finite_strings(value.tolist())
        return value.tolist()
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else _NON_FINITE_TEXT[_kind(value)]
    if isinstance(value, dict):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if isinstance(value, (int, np.integer)):
        return int(value)
    return plain(float(value))


def fast(value):
    """plain(value), except that a C-contiguous float64 array without NaN or infinity (or
    an int or bool array) is left as it is, for the encoder to write in C; a float32 array
    goes through plain() (its values as the float64 they are)."""
    if type(value) is np.ndarray:
        dtype = value.dtype
        if dtype in _AS_IS and value.ndim and value.flags.c_contiguous and (
                dtype.kind != 'f' or all(map(math.isfinite, value.ravel().tolist()))):
            return value
        return plain(value)
    if isinstance(value, dict):
        return {str(key): fast(item) for key, item in value.items()}
    return plain(value)


def encode(value) -> bytes:
    """The JSON text of value (arrays and non-finite floats as plain() writes them)."""
    return orjson.dumps(fast(value), option=orjson.OPT_SERIALIZE_NUMPY)


def _kind(number_: float) -> str:
    """'nan', 'inf' or '-inf'."""
    return 'nan' if math.isnan(number_) else ('inf' if number_ > 0 else '-inf')


def _finite_strings(nested):
    """A tolist() result with its non-finite floats as their strings."""
    if isinstance(nested, list):
        return [_finite_strings(item) for item in nested]
    if isinstance(nested, float) and not math.isfinite(nested):
        return _NON_FINITE_TEXT[_kind(nested)]
    return nested


def number(value) -> float:
    """A float written by plain()."""
    return _NON_FINITE[value] if isinstance(value, str) else float(value)


def _numbers(nested):
    """Nested lists written by plain() with the non-finite strings turned back."""
    if isinstance(nested, list):
        return [_numbers(item) for item in nested]
    if isinstance(nested, str) and nested not in _NON_FINITE:
        return nested   # a name (an array of joint names)
    return number(nested)


def array(values) -> np.ndarray | None:
    """A float64 array written by plain() (None stays None)."""
    return None if values is None else np.array(_numbers(values), dtype=float)


def typed(value) -> dict:
    """A sample value with its kind, so a replay rebuilds it exactly: an array with its dtype
    and shape, a list (of joint names, say) or a scalar. Its JSON is encode()'s."""
    if isinstance(value, np.ndarray):
        return {'array': value, 'dtype': value.dtype.str}
    if isinstance(value, (list, tuple)):
        return {'list': list(value)}
    return {'value': value}


def untyped(record: dict):
    """The value typed() wrote."""
    if 'array' in record:
        return np.array(_numbers(record['array']), dtype=record['dtype'])
    if 'list' in record:
        return _numbers(record['list'])
    return record['value'] if isinstance(record['value'], str) and (
        record['value'] not in _NON_FINITE) else number(record['value'])


def pack(value):
    """value with only what ``marshal`` writes: an int, float or bool array as a tuple
    (dtype, shape, raw bytes), tuples as lists, numpy scalars as Python ones; unpack()
    rebuilds it for encode()."""
    kind = type(value)
    if kind in _MARSHAL_AS_IS:
        return value
    if kind is np.ndarray:
        if value.dtype.kind in _RAW_KINDS:
            return value.dtype.str, value.shape, value.tobytes()
        return value.tolist()
    if kind is dict:
        return {str(key): pack(item) for key, item in value.items()}
    if kind is list or kind is tuple:
        return [pack(item) for item in value]
    if isinstance(value, np.generic):
        return value.item()
    for builtin in (str, int, float):   # a subclass (an IntEnum) as its builtin
        if isinstance(value, builtin):
            return builtin(value)
    return float(value)


def typed_packed(value):
    """pack(typed(value)), with an array's record built at once (a put's values)."""
    if type(value) is np.ndarray and value.dtype.kind in _RAW_KINDS:
        dtype = value.dtype.str
        return {'array': (dtype, value.shape, value.tobytes()), 'dtype': dtype}
    return pack(typed(value))


def unpack(value):
    """The value pack() wrote, with its arrays rebuilt (read-only)."""
    kind = type(value)
    if kind is tuple:
        dtype, shape, data = value
        return np.frombuffer(data, dtype=dtype).reshape(shape)
    if kind is dict:
        return {key: unpack(item) for key, item in value.items()}
    if kind is list:
        return [unpack(item) for item in value]
    return value
