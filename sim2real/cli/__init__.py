"""The `sim2real` command line."""
