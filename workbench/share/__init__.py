"""Sharing a comparison beyond the terminal: a self-contained HTML report, OpenTelemetry traces, the app in a browser.

Everything here draws from stored or live events and the one fold (:class:`~workbench.summary.ArmSummary`,
:class:`~workbench.bench.report.BenchReport`), so its figures equal every other view's. Optional dependencies
(OpenTelemetry, textual-serve) are imported only by the commands that use them.
"""
