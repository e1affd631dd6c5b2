"""The policy node's flight recorder: each ROS message the node receives on its own topic
(CDR, as received), the runtime's calls (RecordingRuntime), and as metadata and
attachments what a replay needs to rebuild the node: parameters, contract, policy, URDF.

Records wait in a Backlog until the control loop drains it in the time its tick leaves
before the next deadline (drain); close() writes what still waits."""

from __future__ import annotations

import hashlib
import math
import os
from pathlib import Path
import time

import yaml

from sim2real import __version__
from sim2real.deploy.record.runtime_log import Backlog, RecordingRuntime
from sim2real.deploy.record.writer import Recorder, RecorderCfg, ros2_channel

METADATA = 'sim2real'
"""Name of the metadata record: robot, task, files and their SHA-256, version."""
ATTACHMENTS = ('params.yaml', 'contract.json', 'policy.onnx', 'robot.urdf')
"""The files a replay rebuilds the node from."""


def default_folder() -> Path:
    """$ROS_HOME/sim2real/flights ($ROS_HOME: ~/.ros unless set)."""
    return Path(os.environ.get('ROS_HOME', Path.home() / '.ros')) / 'sim2real' / 'flights'


def _sha256(data: bytes) -> str:
    """Hex SHA-256 of bytes."""
    return hashlib.sha256(data).hexdigest()


class NodeRecorder:
    """A recorder of one policy node (see the module docstring)."""

    def __init__(self, values: dict, runtime, node_name: str):
        """Start recording: values are the node's parameters, runtime its Runtime."""
        params = runtime.params
        policy = Path(params.policy_file).read_bytes()
        urdf_path = Path(runtime.urdf_path) if getattr(runtime, 'urdf_path', None) else None
        urdf = urdf_path.read_bytes() if urdf_path is not None else b''
        metadata = {
            'robot': params.robot, 'task': runtime.contract.task, 'node': node_name,
            'version': __version__, 'policy_file': str(params.policy_file),
            'policy_sha256': _sha256(policy), 'urdf_file': str(urdf_path or ''),
            'urdf_sha256': _sha256(urdf) if urdf else '', 'rate_hz': f'{runtime.rate_hz:g}',
            'started_unix_ns': str(time.time_ns())}
        params_yaml = yaml.safe_dump({node_name: {'ros__parameters': dict(values)}},
                                     sort_keys=False)
        attachments = {
            'params.yaml': params_yaml.encode(),
            'contract.json': runtime.contract.to_json().encode(), 'policy.onnx': policy}
        if urdf:
            attachments['robot.urdf'] = urdf
        folder = Path(params.record_dir).expanduser() if params.record_dir else default_folder()
        cfg = RecorderCfg(folder, prefix=params.robot,
                          max_file_bytes=int(params.record_max_file_mb * 2 ** 20))
        self.recorder = Recorder(cfg, {METADATA: metadata}, attachments)
        self.backlog = Backlog(self.recorder.count_dropped)
        self.runtime = RecordingRuntime(runtime, self.recorder, self.backlog)
        self._channels: dict[str, int] = {}

    def message(self, topic: str, ros_type: str, data: bytes, info: dict | None) -> None:
        """One received message's CDR bytes on its topic (ros_type 'nav_msgs/msg/Odometry'):
        log time its DDS arrival, publish time the publisher's send time, both from the
        message info (system clock), as rosbag2 records them; a header stamp is in the
        message itself. Queued in the backlog."""
        info = info or {}
        received_ns = info.get('received_timestamp') or time.time_ns()
        self.backlog.add(self._write_message, topic, ros_type, data, received_ns,
                         info.get('source_timestamp') or received_ns)

    def _write_message(self, topic: str, ros_type: str, data: bytes, received_ns: int,
                       published_ns: int) -> None:
        """Hand one received message to the writer (its channel registered first)."""
        channel = self._channels.get(topic)
        if channel is None:
            channel = self._channels[topic] = self.recorder.channel(
                ros2_channel(topic, ros_type))
        self.recorder.write(channel, data, received_ns, published_ns)

    def drain(self, until_s: float = math.inf) -> None:
        """Encode and hand over waiting records until none waits or the steady clock reaches
        until_s [s] (the control loop's slack before its next deadline)."""
        self.backlog.drain(until_s)

    def diagnostics(self) -> dict[str, float]:
        """Records written and dropped, files started, records waiting in the backlog."""
        stats = self.recorder.stats
        return {'record_written': float(stats.written), 'record_dropped': float(stats.dropped),
                'record_files': float(len(stats.files)),
                'record_backlog': float(len(self.backlog))}

    def close(self) -> None:
        """Write what waits in the backlog and in the writer's queue; finish the file."""
        self.backlog.drain()
        self.recorder.close()
