"""What a worker lets a queued job decide, and where it sends its own keys.

A worker holds its operator's provider keys, sandbox limits, tracing endpoint and store; a job comes from
anyone who can write to the shared database. So a job chooses only what a comparison is
(:data:`workbench.queue.jobs.JOB_FIELDS`: the task, its size and seed, the arms by name, the models, the
spending bounds of :data:`~workbench.queue.jobs.JOB_SETTINGS`), and the worker decides the rest:

- **Endpoints.** A job's ``base_url`` is honoured only when the worker's own config names it (its
  ``base_url``) or its command line does (``workbench worker --allow-base-url URL``); any other is refused
  before a model is built, so no request (and no key) goes there.
- **Arms.** A job names arms; the worker resolves the names in its own catalog (the presets and its own
  config's ``[arms.NAME]`` tables), so sandbox limits and arm options are the worker's.
- **Commands and code.** A queued comparison runs a built-in task on a demo app, or a BFCL entry named by its
  id (``bfcl/multi_turn_base_0``): the worker looks the id up among its own installed entries and runs them on
  bfcl-eval's own classes with the entry's own turns and initial state (an id of no entry, or no BFCL here,
  fails the comparison in one line). No job field names an MCP server command, a toolset module, a task file,
  a setup command or a prompt, so a job cannot make a worker start a process, import a module of its choosing
  or say anything to a model beyond a built-in task's words.
- **Everything else** (``otel_endpoint``, ``[sandbox]``, retries, timeouts, prices, the store) is the
  worker's own config.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from workbench.config import Settings, load_settings
from workbench.queue.jobs import ComparisonJob, JobRefused


def endpoint_key(url: str) -> str:
    """A URL as compared for trust: scheme and host lower case, default port made explicit, no trailing slash,
    no query or fragment. Raises :class:`ValueError` for a URL that is not http(s) with a host."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as error:
        raise ValueError(f"{url!r} is not a URL: {error}") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{url!r} is not an http(s) URL with a host, such as http://localhost:8000/v1")
    if parts.username or parts.password:
        raise ValueError(f"{url!r} holds a user name or password; give the endpoint without them")
    scheme = parts.scheme.lower()
    port = port or (443 if scheme == "https" else 80)
    return f"{scheme}://{parts.hostname.lower()}:{port}{parts.path.rstrip('/')}"


@dataclass(frozen=True)
class WorkerTrust:
    """The endpoints a worker sends its keys to, beyond the providers' own: its config's ``base_url`` and
    every ``--allow-base-url``."""

    allowed: tuple[str, ...] = ()
    """Endpoint keys (:func:`endpoint_key`)."""
    shown: tuple[str, ...] = ()
    """The same endpoints as given, for messages."""
    settings: Settings | None = field(default=None, compare=False)
    """The worker's own settings, loaded once at its start (``None``: loaded per job, as a test without a
    worker does); each job's allowed flags go over them."""

    @classmethod
    def of(cls, settings: Settings, allow_base_urls: Iterable[str] = ()) -> WorkerTrust:
        """Raises :class:`ValueError` for an ``--allow-base-url`` that is not an http(s) URL."""
        keys: dict[str, str] = {}
        if settings.base_url:
            try:
                keys[endpoint_key(settings.base_url)] = settings.base_url
            except ValueError:  # the worker's own value, used as is (its provider reports a bad one)
                keys[settings.base_url] = settings.base_url
        for url in allow_base_urls:
            keys.setdefault(endpoint_key(url), url)
        return cls(tuple(keys), tuple(keys.values()), settings)

    def check(self, job: ComparisonJob) -> None:
        """Raise :class:`JobRefused` when the job asks for an endpoint this worker does not send its keys to."""
        wanted = job.settings.get("base_url")
        if wanted is None:
            return
        try:
            key = endpoint_key(wanted)
        except ValueError as error:
            raise JobRefused(f"base URL refused: {error}") from None
        if key not in self.allowed:
            trusted = ", ".join(self.shown) if self.shown else "none"
            raise JobRefused(
                f"base URL {wanted} is not one this worker sends its keys to (trusted: {trusted}); "
                f"its operator can allow it with workbench worker --allow-base-url {wanted}"
            )

    def settings_for(self, job: ComparisonJob) -> Settings:
        """The worker's own settings with the job's allowed settings over them; raises :class:`JobRefused` (an
        endpoint this worker does not trust) or :class:`~workbench.config.ConfigError` (a setting out of range),
        both ``BadInput``, which the worker refuses the job for."""
        self.check(job)
        if self.settings is not None:
            return self.settings.with_flags(**job.settings)
        return load_settings(**job.settings)
