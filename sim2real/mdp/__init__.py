"""Batched RL environments built from managers of pure term functions."""
