"""Run `sim2real` in this process and SIGKILL it at a chosen moment (test helper, no test).

    python kill_driver.py PHASE N CLI_ARGS...

PHASE picks the moment, N the call it happens in:

- ``collect``: the N-th RLEnv.step, before it runs (in the middle of a rollout);
- ``update``: the N-th PPO.update, after its second optimizer step (weights half-updated);
- ``save``: the N-th torch.save of a checkpoint, after half of its bytes reached the file.

The library has no hooks for this: the driver wraps the real functions, then runs the real
CLI main with CLI_ARGS.
"""

from __future__ import annotations

import io
import os
import signal
import sys

import torch

from sim2real.cli.main import main
from sim2real.mdp.env import RLEnv
from sim2real.rl.ppo import PPO


def kill() -> None:
    """End this process the way a power cut or the OOM killer would."""
    os.kill(os.getpid(), signal.SIGKILL)


def on_nth_call(owner, name: str, n: int, action) -> None:
    """Replace owner.name so that its n-th call runs action(original, *args) instead."""
    original = getattr(owner, name)
    calls = [0]

    def wrapper(*args, **kwargs):
        calls[0] += 1
        if calls[0] == n:
            return action(original, *args, **kwargs)
        return original(*args, **kwargs)
    setattr(owner, name, wrapper)


def kill_before(original, *args, **kwargs):
    """Kill instead of running the call."""
    kill()


def kill_mid_update(original, ppo, *args, **kwargs):
    """Run the update, killing after its second optimizer step."""
    step, steps = ppo.optimizer.step, [0]

    def step_then_kill(*a, **k):
        step(*a, **k)
        steps[0] += 1
        if steps[0] == 2:
            kill()
    ppo.optimizer.step = step_then_kill
    return original(ppo, *args, **kwargs)


def kill_mid_write(original, obj, f, *args, **kwargs):
    """Write the first half of what torch.save would write to f, then kill."""
    buffer = io.BytesIO()
    original(obj, buffer, *args, **kwargs)
    data = buffer.getvalue()
    f.write(data[:len(data) // 2])
    f.flush()
    os.fsync(f.fileno())
    kill()


PHASES = {'collect': (RLEnv, 'step', kill_before),
          'update': (PPO, 'update', kill_mid_update),
          'save': (torch, 'save', kill_mid_write)}

if __name__ == '__main__':
    phase, n, cli_args = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    owner, name, action = PHASES[phase]
    on_nth_call(owner, name, n, action)
    sys.exit(main(cli_args))
