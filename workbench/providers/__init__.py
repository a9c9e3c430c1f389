"""Provider plumbing for real models, by job:

- :mod:`~workbench.providers.failures`: what failed, described in one line, and whether it is worth retrying;
- :mod:`~workbench.providers.retry`: the retry policy and the retrying model and stream;
- :mod:`~workbench.providers.limits`: the concurrency cap per provider endpoint;
- :mod:`~workbench.providers.factory`: the request stack of a real model built from the settings (``harden``).
"""
