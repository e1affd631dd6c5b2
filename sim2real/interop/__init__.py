"""Interoperability with other training stacks (Isaac Lab's rsl_rl runs)."""
