"""Tests of atomic checkpoint writing, clear load errors and checkpoint bookkeeping."""

import dataclasses

import pytest
import torch

from sim2real.rl import (
    CheckpointError, latest_checkpoint, load_checkpoint, prune_checkpoints, save_checkpoint,
)
from sim2real.rl.checkpoint import checkpoint_path, list_checkpoints


def test_round_trip_of_plain_state(tmp_path):
    """Tensors, nested containers and scalars come back equal through weights_only loading."""
    state = {'w': torch.arange(3.0), 'nested': {'lr': 1e-3, 'names': ['a', 'b'], 'flag': True},
             'iteration': 7, 'none': None, 'rng': torch.get_rng_state()}
    path = save_checkpoint(tmp_path / 'ckpt.pt', state)
    loaded = load_checkpoint(path)
    assert torch.equal(loaded['w'], state['w'])
    assert torch.equal(loaded['rng'], state['rng'])
    assert loaded['nested'] == state['nested']
    assert loaded['iteration'] == 7 and loaded['none'] is None


def test_failed_write_leaves_previous_file_intact(tmp_path, monkeypatch):
    """An error halfway through torch.save keeps the old checkpoint and leaves no temp file."""
    path = tmp_path / 'model.pt'
    save_checkpoint(path, {'version': 1})

    def partial_save(obj, f):
        """Write some bytes, then fail like a full disk would."""
        f.write(b'PK\x03\x04 partial checkpoint')
        raise OSError('disk full')

    monkeypatch.setattr(torch, 'save', partial_save)
    with pytest.raises(OSError, match='disk full'):
        save_checkpoint(path, {'version': 2})
    monkeypatch.undo()
    assert load_checkpoint(path) == {'version': 1}
    assert [p.name for p in tmp_path.iterdir()] == ['model.pt']


def test_truncated_file_raises_checkpoint_error_naming_it(tmp_path):
    """A checkpoint cut in half fails with CheckpointError (a ValueError) naming the file."""
    path = save_checkpoint(tmp_path / 'model_000001.pt', {'w': torch.randn(1000)})
    data = path.read_bytes()
    path.write_bytes(data[:len(data) // 2])
    with pytest.raises(CheckpointError, match='model_000001.pt') as info:
        load_checkpoint(path)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize('content', [b'', b'not a checkpoint at all', bytes(range(256)) * 4])
def test_garbage_file_raises_checkpoint_error(tmp_path, content):
    """Empty or random bytes raise CheckpointError, not a raw pickle/zip error."""
    path = tmp_path / 'garbage.pt'
    path.write_bytes(content)
    with pytest.raises(CheckpointError, match='garbage.pt'):
        load_checkpoint(path)


@dataclasses.dataclass
class _Arbitrary:
    """An object that a weights_only load must refuse."""

    value: int = 1


def test_non_checkpoint_pickles_are_rejected(tmp_path):
    """A bare tensor or an arbitrary pickled object is not accepted as a checkpoint."""
    tensor_path = tmp_path / 'tensor.pt'
    torch.save(torch.zeros(2), tensor_path)
    with pytest.raises(CheckpointError, match='not a dict'):
        load_checkpoint(tensor_path)
    object_path = tmp_path / 'object.pt'
    torch.save({'cfg': _Arbitrary()}, object_path)
    with pytest.raises(CheckpointError, match='object.pt'):
        load_checkpoint(object_path)


def test_missing_file_and_unsafe_state_fail_early(tmp_path):
    """A missing file is FileNotFoundError; saving a non-plain object is refused before writing."""
    with pytest.raises(FileNotFoundError):
        load_checkpoint(tmp_path / 'absent.pt')
    with pytest.raises(TypeError, match='_Arbitrary'):
        save_checkpoint(tmp_path / 'bad.pt', {'cfg': _Arbitrary()})
    assert not list(tmp_path.iterdir())


def test_latest_and_prune_follow_iteration_numbers(tmp_path):
    """latest_checkpoint picks the highest iteration; pruning keeps the newest K only."""
    assert latest_checkpoint(tmp_path) is None
    for iteration in (2, 10, 1, 300):
        save_checkpoint(checkpoint_path(tmp_path, iteration), {'iteration': iteration})
    (tmp_path / 'checkpoints' / 'notes.txt').write_text('not a checkpoint')
    assert latest_checkpoint(tmp_path).name == 'model_000300.pt'
    removed = prune_checkpoints(tmp_path, keep_last=3)
    assert [p.name for p in removed] == ['model_000001.pt']
    assert [it for it, _ in list_checkpoints(tmp_path)] == [2, 10, 300]
    assert (tmp_path / 'checkpoints' / 'notes.txt').exists()
