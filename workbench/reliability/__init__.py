"""Reliability figures: sandbox attacks, crash safety, CLI fuzzing and load, measured and printed.

``python -m workbench.reliability`` runs every section and prints what was tried and what held; the
tests under ``tests/`` run the same code and keep it that way.
"""
