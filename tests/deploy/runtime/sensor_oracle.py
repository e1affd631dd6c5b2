"""The spec of the runtime's sensor handling, written independently of deploy/runtime.

The property tests feed the same samples to this oracle and to a Runtime and compare the
latch decisions. It states: which samples are usable (finite; the declared arrays; unit-ish
quaternions; joint names that name each policy joint once), which are new data (a newer
stamp, or the third of a rising run behind the stored stamp), when a stream is stale, and
that time never runs backwards.
"""

import math

import numpy as np

from sim2real import terms

QUAT_TOLERANCE = 0.1
RESYNC = 3


def usable(values, shapes, joint_names):
    """values in policy order when the spec calls the sample usable, else None."""
    values = dict(values)
    if 'names' in values:
        names = [str(n) for n in values.pop('names')]
        if any(names.count(j) != 1 for j in joint_names):
            return None
        q, qd = (np.asarray(values.get(k), float) for k in ('pos_rad', 'vel_rad_s'))
        if q.shape != (len(names),) or qd.shape != (len(names),):
            return None
        index = [names.index(j) for j in joint_names]
        values = {'pos_rad': q[index], 'vel_rad_s': qd[index]}
    for value in values.values():
        if not np.isfinite(np.asarray(value, float)).all():
            return None
    for name, shape in shapes.items():
        if name not in values or np.shape(values[name]) != shape:
            return None
        if name.endswith('quat_wxyz'):
            quat = np.asarray(values[name], float)
            scale = np.max(np.abs(quat))
            if not (scale > 0 and abs(scale * np.linalg.norm(quat / scale) - 1) <= QUAT_TOLERANCE):
                return None
    return values


class Oracle:
    """Latest usable sample per stream, problems since the last tick, the monotonic clock."""

    def __init__(self, shapes, joint_names=()):
        """Nothing received; shapes[stream] as the profile declares, policy joint names."""
        self.shapes, self.joint_names = shapes, list(joint_names)
        self.stamp, self.received, self.values, self.behind = {}, {}, {}, {}
        self.stored = {}
        """How many samples each stream has stored (a new count: a distinct sample)."""
        self.problem, self.now, self.backwards, self.clock_behind = False, -math.inf, False, []

    def clock(self, now_s):
        """A reading of the steady clock (each enable() and step()): time the runtime uses
        never runs back, but RESYNC non-decreasing readings behind it are followed again."""
        self.backwards = now_s < self.now
        if not self.backwards:
            self.now, self.clock_behind = now_s, []
            return
        if self.clock_behind and now_s < self.clock_behind[-1]:
            self.clock_behind = []
        self.clock_behind.append(now_s)
        if len(self.clock_behind) >= RESYNC:
            self.now, self.clock_behind = now_s, []

    def put(self, stream, sample):
        """Record a sample as the spec defines usable and new data."""
        values = usable(sample.values, self.shapes.get(stream, {}), self.joint_names)
        if values is None or not (math.isfinite(sample.stamp_s)
                                  and math.isfinite(sample.received_s)):
            self.problem = True
            return
        last = self.stamp.get(stream)
        if last is None or sample.stamp_s > last:
            self._store(stream, sample, values)
        elif sample.stamp_s < last:
            run = self.behind.setdefault(stream, [])
            if run and not sample.stamp_s > run[-1]:
                run.clear()
            run.append(sample.stamp_s)
            if len(run) >= RESYNC:
                self._store(stream, sample, values)

    def _store(self, stream, sample, values):
        """The sample becomes the stream's latest."""
        self.stamp[stream], self.received[stream] = sample.stamp_s, sample.received_s
        self.values[stream] = values
        self.behind[stream] = []
        self.stored[stream] = self.stored.get(stream, 0) + 1

    def stale(self, stream, timeout_s):
        """Required and never received, received in the future, or older than timeout_s."""
        received = self.received.get(stream)
        if timeout_s <= 0:
            return False
        return received is None or received > self.now or self.now - received > timeout_s

    def tilted(self, stream, max_tilt_rad):
        """Body z more than max_tilt_rad from world z."""
        quat = np.asarray(self.values[stream]['quat_wxyz'], float)
        scale = np.max(np.abs(quat))
        unit = (quat / scale) / np.linalg.norm(quat / scale)
        return not terms.quat_to_rotmat(unit)[2, 2] >= math.cos(max_tilt_rad)

    def end_tick(self):
        """Problems are consumed by the tick."""
        self.problem = False
