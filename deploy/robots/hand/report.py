"""The hand's flight-report panels (`sim2real replay --out`)."""

from sim2real.deploy.record.panels import joint_targets

PANELS = (joint_targets,)
