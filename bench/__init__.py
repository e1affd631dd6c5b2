"""Benchmarks: each prints one comparable line and returns figures for results.json."""

import sim2real  # noqa: F401  (first: it sets the OpenMP spin before torch loads)
