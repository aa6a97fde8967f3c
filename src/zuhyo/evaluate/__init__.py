"""Evaluation: runner, run store, judges and metrics."""
