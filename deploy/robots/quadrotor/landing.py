"""When the quadrotor's fallback may switch the motors off: evidence of landing, in samples.

Evidence is counted per distinct odometry sample (a new stamp: the store keeps one sample
object per stamp), never per control tick, so one sample that stays fresh over several
ticks (an odometry gap shorter than the stale timeout) counts once. A sample is evidence of
landing when it is fresh, below ``ground_height_m`` and plausible for the vehicle: above the
geofence's floor (``geofence_min_m[2]``, the estimator's noise below the ground), so an
estimator glitch far below the ground is no evidence; where it is horizontally does not
matter (a vehicle that left the fence sideways still lands). LANDING_SAMPLES such samples in
a row mean landed (a row of distinct samples: ticks without a fresh sample do not break it,
a sample that is no evidence does).

A cut is not final while a vehicle cut in the air could still be falling: until the free-fall
time from the geofence's ceiling to the ground has passed, AIRBORNE_SAMPLES consecutive
distinct samples above ``ground_height_m + AIRBORNE_MARGIN_M`` show it in the air again and
the fallback's level-and-descend takes over. After that window a vehicle lifted by hand does
not restart its motors.
"""

from __future__ import annotations

import math

from sim2real.deploy.robots.quadrotor.params import QuadrotorParams
from sim2real.deploy.runtime.physics_check import GRAVITY_M_S2
from sim2real.deploy.runtime.sensors import Sample

LANDING_SAMPLES = 3
"""Consecutive distinct, fresh, plausible odometry samples below ground_height_m that mean
landed (one glitched sample in the air must not switch the motors off)."""
AIRBORNE_SAMPLES = 3
"""Consecutive distinct samples above the ground (by AIRBORNE_MARGIN_M) that revoke a cut."""
AIRBORNE_MARGIN_M = 0.1
"""How far above ground_height_m a sample must be to show the vehicle in the air [m]."""


class LandingEvidence:
    """Counts distinct odometry samples for and against 'landed' (see the module docstring)."""

    def __init__(self, params: QuadrotorParams):
        """Thresholds from the parameters: ground height, geofence, fall window."""
        self.ground_m = params.ground_height_m
        self.floor_m = float(params.geofence_min_m[2])
        drop_m = max(float(params.geofence_max_m[2]) - self.ground_m, 0.0)
        self.fall_window_s = math.sqrt(2.0 * drop_m / GRAVITY_M_S2) + params.odom_timeout_s
        """How long after a cut a vehicle cut at the ceiling can still be falling [s]."""
        self.reset()

    def reset(self) -> None:
        """Forget every sample (a new latch)."""
        self.low = self.high = 0
        """Consecutive distinct samples low and plausible / high above the ground."""
        self._seen: Sample | None = None

    def observe(self, sample: Sample | None) -> None:
        """Count sample (the latest fresh odometry, or None when stale) if not counted yet."""
        if sample is None or sample is self._seen:
            return
        self._seen = sample
        z_m = float(sample.values['pos_w'][2])
        self.low = self.low + 1 if self.floor_m <= z_m < self.ground_m else 0
        self.high = self.high + 1 if z_m > self.ground_m + AIRBORNE_MARGIN_M else 0

    @property
    def landed(self) -> bool:
        """LANDING_SAMPLES consecutive distinct samples below the ground height."""
        return self.low >= LANDING_SAMPLES

    def in_the_air(self, cut_s: float, now_s: float) -> bool:
        """Whether samples show a vehicle cut at cut_s [s] in the air while it could still be
        falling (within fall_window_s of the cut)."""
        return self.high >= AIRBORNE_SAMPLES and now_s - cut_s <= self.fall_window_s
