"""Data-parallel learners under torchrun: one process per rank, each with its own envs.

`torchrun --nproc_per_node=N -m sim2real.cli.main train ...` starts N copies of the command;
torchrun sets RANK, LOCAL_RANK and WORLD_SIZE. Each rank steps its own envs (seeded apart),
and its replica of the algorithm stays identical to the others because

- the initial parameters and buffers are broadcast from rank 0,
- every gradient is averaged over the ranks before the optimizer step
  (all_reduce_gradients, called by the algorithms after each backward pass),
- every observation batch updates the normalizers with the moments pooled over the ranks
  (pooled_moments), and decisions taken from local numbers (PPO's adaptive learning rate,
  stopping early) use their mean or any over the ranks.

Outside a process group the collectives here do nothing (pooled_moments returns the
batch's own moments), so single-process training pays one `is_initialized()` check per
call. Rank 0 logs, checkpoints and writes summary.json (`sim2real export` then works on the
run directory as on any other). Left per rank, as in rsl_rl: PPO's advantage
standardization, SAC's replay buffer, batch size and learning_starts.
"""

from __future__ import annotations

import datetime
import logging
import os
from dataclasses import dataclass
from typing import Iterable

import torch
import torch.distributed as dist

logger = logging.getLogger(__name__)

RANK_SEED_STRIDE = 1_000_003
"""Rank r seeds its envs and its action noise with seed + r * this; as the envs are reset
with seed + iteration, no two ranks share a seed in a run of fewer iterations than this."""
DEFAULT_TIMEOUT_S = 600.0
"""A collective that waits longer than this for another rank fails (the rank died or hung)."""


@dataclass(frozen=True)
class RankInfo:
    """Where this process sits in a torchrun job."""

    rank: int = 0
    local_rank: int = 0
    world_size: int = 1

    @property
    def is_main(self) -> bool:
        """Rank 0: the one that logs, checkpoints and writes the run's files."""
        return self.rank == 0


def launched_by_torchrun() -> RankInfo | None:
    """The rank torchrun (or any launcher setting RANK and WORLD_SIZE) gave this process,
    None when it was not started as one of several ranks."""
    world = int(os.environ.get('WORLD_SIZE', '1'))
    if world <= 1 or 'RANK' not in os.environ:
        return None
    return RankInfo(int(os.environ['RANK']), int(os.environ.get('LOCAL_RANK', '0')), world)


def init_process_group(info: RankInfo, device: str,
                       timeout_s: float = DEFAULT_TIMEOUT_S) -> bool:
    """Join the job's process group (env:// rendezvous torchrun prepared): gloo for CPU
    learners, NCCL for CUDA ones (each local rank on its own GPU, cuda:LOCAL_RANK). Returns
    whether it created the group (False: this process had joined one already)."""
    backend = 'nccl' if device.startswith('cuda') else 'gloo'
    if backend == 'nccl':
        torch.cuda.set_device(info.local_rank)
    if dist.is_initialized():
        return False
    dist.init_process_group(backend, timeout=datetime.timedelta(seconds=timeout_s))
    logger.info('rank %d of %d (local %d) joined the %s process group', info.rank,
                info.world_size, info.local_rank, backend)
    return True


def cores_per_rank() -> int:
    """This machine's CPUs shared out over the ranks torchrun started on it
    (LOCAL_WORLD_SIZE; all of them outside torchrun)."""
    local = int(os.environ.get('LOCAL_WORLD_SIZE', '1')) if launched_by_torchrun() else 1
    try:
        cpus = len(os.sched_getaffinity(0))   # the CPUs this process may run on
    except AttributeError:   # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, cpus // max(local, 1))


def active() -> bool:
    """Whether this process is one rank of a process group of more than one."""
    return dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1


def rank() -> int:
    """This process's rank (0 outside a process group)."""
    return dist.get_rank() if active() else 0


def world_size() -> int:
    """Ranks in the process group (1 outside one)."""
    return dist.get_world_size() if active() else 1


def broadcast_module(module: torch.nn.Module) -> None:
    """Overwrite every parameter and buffer of module with rank 0's."""
    if not active():
        return
    with torch.no_grad():
        for tensor in [*module.parameters(), *module.buffers()]:
            dist.broadcast(tensor.data, src=0)


def all_reduce_gradients(params: Iterable[torch.nn.Parameter]) -> None:
    """Replace each parameter's gradient by its mean over the ranks (one flat all-reduce);
    a parameter without a gradient counts as zero on that rank."""
    if not active():
        return
    params = [p for p in params if p.requires_grad]
    if not params:
        return
    flat = torch.cat([(p.grad if p.grad is not None else torch.zeros_like(p)).reshape(-1)
                      for p in params])
    dist.all_reduce(flat)
    flat /= dist.get_world_size()
    offset = 0
    for p in params:
        n = p.numel()
        grad = flat[offset:offset + n].view_as(p)
        if p.grad is None:
            p.grad = grad.clone()
        else:
            p.grad.copy_(grad)
        offset += n


def pooled_moments(batch: torch.Tensor) -> tuple[int, torch.Tensor, torch.Tensor]:
    """Count, mean and population variance (float64) of the rows of batch (B, F) pooled over
    every rank's batch, in two all-reduces: the counts and sums, then the squared deviations
    from the pooled mean (no catastrophic cancellation)."""
    batch = batch.to(torch.float64)
    if not active():
        if batch.shape[0] == 0:
            return 0, batch.new_zeros(batch.shape[1:]), batch.new_ones(batch.shape[1:])
        return batch.shape[0], batch.mean(dim=0), batch.var(dim=0, unbiased=False)
    sums = torch.cat([batch.new_tensor([batch.shape[0]]), batch.sum(dim=0)])
    dist.all_reduce(sums)
    count = int(sums[0].item())
    mean = sums[1:] / max(count, 1)
    m2 = (batch - mean).pow(2).sum(dim=0)
    dist.all_reduce(m2)
    return count, mean, m2 / max(count, 1)


def _collective_device() -> torch.device:
    """Where tensors of a collective must live: this rank's GPU under NCCL, else the CPU."""
    if dist.get_backend() == 'nccl':
        return torch.device('cuda', torch.cuda.current_device())
    return torch.device('cpu')


def mean_over_ranks(value: float) -> float:
    """The mean of a number over the ranks (value itself outside a process group)."""
    if not active():
        return value
    tensor = torch.tensor([float(value)], dtype=torch.float64, device=_collective_device())
    dist.all_reduce(tensor)
    return float(tensor.item()) / dist.get_world_size()


def any_rank(flag: bool) -> bool:
    """Whether flag holds on any rank, so that every rank takes the same branch."""
    if not active():
        return flag
    tensor = torch.tensor([1 if flag else 0], dtype=torch.int64, device=_collective_device())
    dist.all_reduce(tensor, op=dist.ReduceOp.MAX)
    return bool(tensor.item())


def pooled_stats(stats: dict[str, float]) -> dict[str, float]:
    """Per key, the mean of the ranks' episode statistics over the ranks that hold it (a
    rank where no episode ended has fewer keys)."""
    if not active():
        return stats
    from sim2real.rl.collector import mean_by_key   # the collector imports the normalizer
    every: list = [None] * dist.get_world_size()
    dist.all_gather_object(every, stats)
    return mean_by_key(every)


def gather_to_main(obj):
    """Every rank's obj as a list on rank 0 (None on the other ranks); [obj] outside one."""
    if not active():
        return [obj]
    out = [None] * dist.get_world_size() if dist.get_rank() == 0 else None
    dist.gather_object(obj, out, dst=0)
    return out


def broadcast_from_main(obj):
    """Rank 0's obj on every rank."""
    if not active():
        return obj
    box = [obj]
    dist.broadcast_object_list(box, src=0)
    return box[0]


def barrier() -> None:
    """Wait for every rank."""
    if active():
        dist.barrier()


def destroy() -> None:
    """Leave the process group (if any)."""
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()
