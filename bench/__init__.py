"""Benchmarks: each prints one comparable line and returns figures for results.json."""
