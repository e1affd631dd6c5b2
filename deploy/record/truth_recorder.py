"""The HIL bridge's ground-truth recorder: the simulated robot's true state at the ground
truth rate, every event (faults on and off, their first effect, stalls, resets), and as
metadata and an attachment the bridge's parameters, so a flight log can be compared with
what really happened."""

from __future__ import annotations

import json
import time

import yaml

from sim2real import __version__
from sim2real.deploy.record.json_values import pack, plain, typed_packed
from sim2real.deploy.record.writer import json_channel, Recorder, RecorderCfg

TRUTH_TOPIC, EVENT_TOPIC = '/sim2real/truth', '/sim2real/bridge_event'
METADATA = 'sim2real_bridge'
"""Name of the metadata record: robot, rates, seed, version."""


class TruthRecorder:
    """Records one bridge's ground truth and events (see the module docstring)."""

    def __init__(self, params: dict, folder, physical: dict | None = None,
                 variant: dict | None = None):
        """Start recording to folder with the bridge's parameters (a flat dict), the true
        physical parameters of the simulated robot (name -> value, `bridge.physical`) and
        its variant (box name -> value, `bridge.variant`)."""
        from pathlib import Path
        metadata = {**{f'physical.{k}': str(v) for k, v in (physical or {}).items()},
                    **{f'variant.{k}': repr(float(v)) for k, v in (variant or {}).items()},
                    'robot': params['robot'], 'version': __version__,
                    'physics_rate_hz': f'{params["physics_rate_hz"]:g}',
                    'ground_truth_rate_hz': f'{params["ground_truth_rate_hz"]:g}',
                    'seed': str(params['seed']), 'started_unix_ns': str(time.time_ns())}
        attachments = {'bridge_params.yaml': yaml.safe_dump(
            {'sim_bridge': {'ros__parameters': dict(params)}}, sort_keys=False).encode()}
        self.recorder = Recorder(RecorderCfg(Path(folder), prefix=f'{params["robot"]}_truth'),
                                 {METADATA: metadata}, attachments)
        self._truth = self.recorder.channel(json_channel(TRUTH_TOPIC, 'sim2real/Truth', {
            'state_s': {'type': 'number'}, 'stamp_s': {'type': 'number'},
            'values': {'type': 'object'}}))
        self._event = self.recorder.channel(json_channel(EVENT_TOPIC, 'sim2real/BridgeEvent', {
            'event': {'type': 'string'}, 'fault': {'type': 'string'},
            'monotonic_s': {'type': 'number'}}))

    def truth(self, values: dict, state_s: float, stamp_s: float) -> None:
        """One ground-truth sample: the simulated state at steady time state_s (stamped
        stamp_s on the node clock, as the published ground truth is)."""
        self.recorder.write_packed(self._truth, {
            'state_s': pack(state_s), 'stamp_s': pack(stamp_s),
            'values': {str(k): typed_packed(v) for k, v in values.items()}}, time.time_ns())

    def event(self, payload: dict) -> None:
        """One bridge event as the bridge publishes it on ~/events."""
        self.recorder.write(self._event, json.dumps(plain(payload)).encode(), time.time_ns())

    def close(self) -> None:
        """Write what is queued and finish the file."""
        self.recorder.close()
