"""Recognized benchmark suites the workbench can run beside its own tiers."""
