"""The quadruped's flight-report panels (`sim2real replay --out`)."""

from sim2real.deploy.record.panels import base_velocity, joint_targets

PANELS = (base_velocity, joint_targets)
