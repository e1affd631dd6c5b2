"""The quadrotor's flight-report panels (`sim2real replay --out`)."""

from sim2real.deploy.record.panels import position_and_attitude

PANELS = (position_and_attitude,)
