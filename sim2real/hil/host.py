"""How much CPU time the host withheld from this machine (hypervisor steal, Linux).

A virtual machine whose host is overcommitted loses whole slices of time: every process,
the simulated robot's and the node's alike, stops for tens of milliseconds. ``steal`` in
/proc/stat counts that time; `sim2real hil` reports its share beside a stall so that a user
can tell a busy host from a slow node.
"""

from __future__ import annotations

from pathlib import Path

PROC_STAT = Path('/proc/stat')
STEAL_FIELD = 8
"""Position of `steal` on the `cpu` line of /proc/stat (after user, nice, system, idle,
iowait, irq, softirq)."""
DISTURBED_SHARE = 0.10
"""A HIL attempt during which the host withheld this share of CPU time or more cannot be
judged on timing, like one the simulated robot stalled in (runner.unstalled): stalls under
the stall limit, many of them, add up (a walking quadruped fell over at 24 % steal with no
single stall over 25 ms)."""
STEAL_WORTH_SAYING = 0.02
"""Smallest withheld share steal_words names (a host that is not overcommitted shows ~0)."""


def cpu_ticks(path: Path = PROC_STAT) -> tuple[int, int] | None:
    """(steal, total) clock ticks of all CPUs since boot; None where /proc/stat is absent
    or does not count steal."""
    try:
        fields = path.read_text(encoding='ascii').split('\n', 1)[0].split()
    except OSError:
        return None
    if len(fields) <= STEAL_FIELD or fields[0] != 'cpu':
        return None
    # guest time is already inside user time: the first eight fields partition it all
    ticks = [int(value) for value in fields[1:STEAL_FIELD + 1]]
    return ticks[-1], sum(ticks)


def steal_share(since: tuple[int, int] | None,
                now: tuple[int, int] | None) -> float | None:
    """Share of CPU time the host withheld between two cpu_ticks() readings (None unknown)."""
    if since is None or now is None or now[1] <= since[1]:
        return None
    return (now[0] - since[0]) / (now[1] - since[1])


def steal_words(share: float | None) -> str:
    """' (the host withheld 24% of the CPU time)', or '' below STEAL_WORTH_SAYING."""
    if share is None or share < STEAL_WORTH_SAYING:
        return ''
    return f' (the host withheld {share:.0%} of the CPU time)'


def disturbed(share: float | None) -> bool:
    """The host withheld DISTURBED_SHARE of the CPU time or more (False where unknown)."""
    return share is not None and share >= DISTURBED_SHARE
