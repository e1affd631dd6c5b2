"""Records the writer process encodes: pack() in the node, unpack() and encode() in the
writer give the JSON that encoding in the node gave, for every kind of value a put or a
tick holds; a packed record the writer cannot read is dropped and counted, the rest kept."""

from __future__ import annotations

import enum
import json
import marshal

import numpy as np
import pytest

from sim2real.deploy.record.json_values import (
    array, encode, pack, typed, typed_packed, unpack)
from sim2real.deploy.record.reader import read_log
from sim2real.deploy.record.writer import frame, json_channel, PACKED, Recorder, RecorderCfg

pytestmark = pytest.mark.filterwarnings('ignore::DeprecationWarning')


class _Mode(enum.IntEnum):
    HOVER = 2


def _record() -> dict:
    """A tick-like record with every kind of value the runtime hands the recorder."""
    grid = np.arange(12, dtype=np.float64).reshape(3, 4)
    return {
        'now_s': 12.5, 'state': 'armed', 'reason': '', 'ok': True, 'none': None,
        'nan_s': float('nan'), 'inf_s': -float('inf'), 'scalar64': np.float64(0.25),
        'count': np.int64(7), 'mode': _Mode.HOVER, 'pair': (1.0, 'a'),
        'command': np.array([0.1, -0.2, np.nan, np.inf]),
        'observation': np.linspace(-1.0, 1.0, 49)[None, :],
        'float32': np.array([0.1, 1e-8], dtype=np.float32),
        'ints': np.arange(6, dtype=np.int32).reshape(2, 3), 'flags': np.array([True, False]),
        'zero_d': np.array(3.5), 'strided': grid[:, 1], 'names': ['hip', 'knee'],
        'nested': {'integrator': {'position_rad': np.array([0.5, np.nan])}},
        'values': {'pos_rad': typed(np.array([1.0, 2.0])), 'names': typed(['a', 'b']),
                   'frame': typed('world')},
    }


def test_packed_records_encode_as_the_node_encoded_them():
    """encode(unpack(marshal(pack(r)))) == encode(r), byte for byte; NaN and infinity as
    strings, float32 as its float64 values, a strided column as its values."""
    record = _record()
    text = encode(unpack(marshal.loads(marshal.dumps(pack(record)))))
    assert text == encode(record)
    back = json.loads(text)
    assert back['command'][2:] == ['NaN', 'Infinity'] and back['inf_s'] == '-Infinity'
    assert back['float32'] == [float(np.float32(0.1)), float(np.float32(1e-8))]
    assert back['strided'] == [1.0, 5.0, 9.0] and back['zero_d'] == 3.5
    assert back['mode'] == 2 and back['count'] == 7 and back['pair'] == [1.0, 'a']
    assert back['values']['pos_rad'] == {'array': [1.0, 2.0], 'dtype': '<f8'}
    assert np.isnan(array(back['nested']['integrator']['position_rad'])[1])
    for value in (np.array([1.0, np.nan], dtype=np.float32), ['a'], 'world', 2.5):
        assert encode(unpack(typed_packed(value))) == encode(typed(value))


def test_the_writer_encodes_packed_records_and_drops_an_unreadable_one(tmp_path):
    """Packed records reach the file as JSON; a damaged one is counted as dropped and the
    records after it are written."""
    rec = Recorder(RecorderCfg(tmp_path))
    channel = rec.channel(json_channel('/tick', 'Tick', {}))
    assert rec.write_packed(channel, pack(_record()), 1)
    assert rec._put(frame(PACKED, channel, 2, 2, b'\x00not marshal'))
    assert rec.write_packed(channel, pack({'k': np.array([4.0])}), 3)
    stats = rec.close()
    assert (stats.written, stats.dropped) == (2, 1)
    log = read_log(stats.files[0])
    assert [m.log_time_ns for m in log.messages] == [1, 3]
    assert json.loads(log.messages[0].data) == json.loads(encode(_record()))
    assert json.loads(log.messages[1].data) == {'k': [4.0]}
