"""Helpers the tests share (and ``reliability/`` and ``benchmarks/`` reuse): real servers, processes and clusters
started for a test, and the waits that read them. Not tests themselves: pytest collects only ``test_*.py``."""
