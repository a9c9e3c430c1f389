"""The reliability figures as tables: a summary of every area, then what each attack got and the load cases."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from workbench.display import sanitize as shown


def all_held(results: dict[str, Any]) -> bool:
    checks = {
        "attacks": lambda r: all(a.contained for a in r),
        "hostile": lambda r: r.held,
        "crash": lambda r: all(k.recovered for k in r),
        "stops": lambda r: all(x.held for x in r),
        "storage": lambda r: all(x.held for x in r),
        "outages": lambda r: all(x.held for x in r),
        "huge": lambda r: all(x.held for x in r),
        "limits": lambda r: all(x.held for x in r),
        "fuzz": lambda r: all(o.clean for o in r["outcomes"]),
        "prompts": lambda r: all(p.handled for p in r),
        "load": lambda r: all(x.ok for x in r),
    }
    held = all(check(results[name]) for name, check in checks.items() if name in results)
    return held and not _over_goal(results)


def attack_line(report: Any) -> str:
    verdict = (
        "[green]contained[/green]"
        if report.contained
        else f"[red]NOT CONTAINED: {escape('; '.join(report.problems))}[/red]"
    )
    return f"  {report.attack.category:9} {report.attack.name:30} {report.outcome:8} {verdict}"


def hostile_line(outcome: Any) -> str:
    verdict = "[green]held[/green]" if outcome.held else f"[red]NOT HELD: {escape('; '.join(outcome.problems))}[/red]"
    rss = "" if outcome.peak_rss_mb is None else f" {outcome.peak_rss_mb:.0f} MB"
    return f"  {outcome.attack.kind:13} {outcome.attack.name:48} {outcome.seconds:6.2f} s{rss} {verdict}"


def print_all(console: Console, results: dict[str, Any]) -> None:
    console.print(
        Text(f"Code Mode Workbench: reliability figures ({results['machine']}, {results['seconds']} s)", style="bold")
    )
    console.print(summary_table(results))
    if "attacks" in results:
        console.print(attacks_table(results["attacks"]))
    if "hostile" in results:
        console.print(hostile_table(results["hostile"]))
    if "crash" in results or "limits" in results:
        console.print(stops_table(results.get("crash", []), results.get("limits", [])))
    if "storage" in results:
        console.print(storage_table(results["storage"]))
    if "outages" in results:
        console.print(outages_table(results["outages"]))
    if "prompts" in results:
        console.print(prompts_table(results["prompts"]))
    if "load" in results:
        console.print(load_table(results["load"]))
    problems = _problems(results)
    if problems:
        console.print(Text("Did not hold:", style="bold red"))
        for line in problems:
            console.print(Text(f"  {line}", style="red"))
    slow = _over_goal(results)
    if slow:
        console.print(Text("Held, but slower than the goal:", style="bold yellow"))
        for line in slow:
            console.print(Text(f"  {line}", style="yellow"))


def summary_table(results: dict[str, Any]) -> Table:
    table = Table(title="What was tried and what held", box=box.SIMPLE_HEAD, title_justify="left")
    table.add_column("area")
    table.add_column("tried", justify="right")
    table.add_column("held", justify="right")
    table.add_column("figures", overflow="fold")
    if "attacks" in results:
        attacks = results["attacks"]
        by_category = Counter(a.attack.category for a in attacks)
        held = Counter(a.attack.category for a in attacks if a.contained)
        refused = sum(a.outcome != "ok" for a in attacks)
        table.add_row(
            "sandbox attacks",
            str(len(attacks)),
            f"{sum(held.values())} contained",
            f"{refused} refused with the error shown to the model, {len(attacks) - refused} ran harmlessly; "
            "secrets never surfaced, host dir unchanged, no connection, other arm passed every time; "
            + ", ".join(f"{c} {held[c]}/{n}" for c, n in by_category.items()),
        )
    if "hostile" in results:
        hostile = results["hostile"]
        tried = hostile.everything
        own = [o for o in hostile.outcomes if o.peak_rss_mb is not None]
        stops = [o for o in hostile.extra if o.attack.kind == "signal"]
        kinds = Counter(o.attack.kind for o in tried)
        table.add_row(
            "hostile files and requests",
            str(len(tried)),
            f"{sum(o.held for o in tried)} held",
            f"commands run {hostile.commands_run} (goal 0), results changed {hostile.results_changed} (goal 0); "
            f"{', '.join(f'{n} {kind}' for kind, n in kinds.items())}; slowest refusal "
            f"{max((o.own_s or 0 for o in hostile.outcomes), default=0):.2f} s (goal 2 s); in a process of their own: "
            f"slowest {max((o.seconds for o in own), default=0):.2f} s with the start-up (alone "
            f"{hostile.baseline_s:.2f} s), peak RSS "
            f"{max((o.peak_rss_mb for o in own), default=0):.0f} MB (goal under 200 MB); stop signals while MCP "
            "servers start: " + ", ".join(f"exit {o.exit_code} after {o.seconds:.2f} s" for o in stops),
        )
    if "crash" in results:
        kills = [k for k in results["crash"] if k.signal == "SIGKILL"]
        interrupts = [k for k in results["crash"] if k.signal == "SIGINT"]
        lost = sum(k.events_lost or 0 for k in kills)
        window = max((k.lost_window_s or 0.0 for k in kills), default=0.0)
        lag = max((k.lag_s or 0.0 for k in kills), default=0.0)
        lost_text = f"events lost {lost}" + (f" (all from the last {window:.2f} s)" if lost else "")
        table.add_row(
            "kill tests (SIGKILL)",
            str(len(kills)),
            f"{sum(k.recovered for k in kills)} recovered",
            f"sessions listed as interrupted, `show` works; {lost_text}; last stored event {lag:.2f} s before "
            "the kill; no sandbox worker left behind",
        )
        saved = max((k.saved_s or 0.0 for k in interrupts), default=0.0)
        exited = max((k.exit_s or 0.0 for k in interrupts), default=0.0)
        table.add_row(
            "Ctrl+C (SIGINT)",
            str(len(interrupts)),
            f"{sum(k.recovered for k in interrupts)} cancelled",
            f"session saved as cancelled {saved:.2f} s after the signal, exit 130 after {exited:.2f} s; "
            "to the process and to its whole group",
        )
    if "stops" in results:
        stops = results["stops"]
        table.add_row(
            "stop signals, orphaned workers",
            str(len(stops)),
            f"{sum(x.held for x in stops)} held, {sum(x.orphaned for x in stops)} orphaned workers",
            "; ".join(
                f"{x.name} {x.signal}: exit {x.exit_code} after {x.exit_s:.2f} s, {x.workers} worker(s) gone "
                f"{x.workers_gone_s:.2f} s after the exit, arms {'/'.join(x.shown_arms.values()) or '?'}"
                for x in stops
                if x.exit_s is not None and x.workers_gone_s is not None
            ),
        )
    if "storage" in results:
        faults = [x for x in results["storage"] if x.tried]
        waited = [x for x in faults if x.stored and x.waited_s > 0]
        skipped = [x.fault for x in results["storage"] if not x.tried]
        table.add_row(
            "storage faults, sessions lost",
            str(len(faults)),
            f"{sum(x.held for x in faults)} held, {sum(x.lost for x in faults)} sessions lost",
            "; ".join(
                [f"{x.fault}: waited out in {x.waited_s:.2f} s" for x in waited]
                + [f"{sum(not x.stored for x in faults)} runs went to their fallback file and were imported back"]
                + ([f"skipped: {', '.join(skipped)}"] if skipped else [])
            ),
        )
    if "outages" in results:
        outages = results["outages"]
        sigterm = [x.exit_s for x in outages if x.fault.startswith("SIGTERM during") and x.exit_s is not None]
        table.add_row(
            "outages (frozen or restarted server, stalled worker, crawling collector)",
            str(len(outages)),
            f"{sum(x.held for x in outages)} held, {sum(x.hung for x in outages)} runs hung, "
            f"{sum(x.lost for x in outages)} sessions lost, {sum(x.recorded_twice for x in outages)} recorded twice",
            (f"exit {max(sigterm):.2f} s after SIGTERM during the outage; " if sigterm else "")
            + f"faults: {', '.join(x.fault for x in outages)}",
        )
    if "huge" in results:
        for huge in results["huge"]:
            received = max(huge.received_bytes, default=0)
            peak = "?" if huge.peak_rss_mb is None else f"{huge.peak_rss_mb:.0f} MB"
            table.add_row(
                f"huge results: {huge.name}",
                str(len(huge.received_bytes)),
                "ok" if huge.held else "NO",
                f"peak RSS {peak} (goal under 500 MB); the model received at most {received:,} bytes each time, "
                f"clipped from {max((c or 0 for c in huge.clipped_from), default=0):,}; {huge.seconds:.1f} s",
            )
    if "limits" in results:
        limits = results["limits"]
        table.add_row(
            "limits and Escape",
            str(len(limits)),
            f"{sum(x.held for x in limits)} ended cleanly",
            "; ".join(f"{x.name}: {'/'.join(x.statuses.values())} in {x.seconds:.2f} s" for x in limits),
        )
    if "fuzz" in results:
        outcomes, params = results["fuzz"]["outcomes"], results["fuzz"]["params"]
        exits = Counter(o.exit_code for o in outcomes)
        commands = {" ".join(p.command) or "(group)" for p in params}
        tracebacks = sum(any("traceback" in p for p in o.problems) for o in outcomes)
        table.add_row(
            "CLI fuzz cases",
            str(len(outcomes)),
            f"{sum(o.clean for o in outcomes)} clean exits",
            f"{len(params)} options and arguments of {len(commands)} commands; exit 2 (one line): "
            f"{exits[2]}, exit 0: {exits[0]}, exit 1: {exits[1]}, tracebacks: {tracebacks}",
        )
    if "prompts" in results:
        prompts = results["prompts"]
        accepted = sum(p.engine == "accepted" for p in prompts)
        table.add_row(
            "unusual prompts",
            str(len(prompts)),
            f"{sum(p.handled for p in prompts)} handled",
            f"{accepted} accepted and run, {len(prompts) - accepted} refused with a message; "
            f"slowest {max(p.seconds for p in prompts):.2f} s",
        )
    if "load" in results:
        for case in results["load"]:
            memory = f", peak RSS {case.peak_mb:.0f} MB (heap {case.heap_mb:.1f} MB)" if case.peak_mb else ""
            if case.name.startswith("reads"):
                memory = f", reads p50 {case.detail['p50_ms']} ms, max {case.detail['max_ms']} ms"
            table.add_row(f"load: {case.name}", "1", "ok" if case.ok else "NO", f"{case.seconds:.2f} s{memory}")
    return table


def attacks_table(attacks: list[Any]) -> Table:
    table = Table(
        title="Sandbox attacks (code arm; the tool arm ran the same task beside it)",
        box=box.SIMPLE_HEAD,
        title_justify="left",
    )
    for column in ("category", "attack", "model got", "arm ended", "what the model received", "held"):
        table.add_column(column, overflow="fold", max_width=70 if column == "what the model received" else None)
    for attack in attacks:
        table.add_row(
            attack.attack.category,
            attack.attack.name,
            attack.outcome,
            attack.status,
            Text(shown(attack.shown)),
            "yes" if attack.contained else "NO",
        )
    return table


_PATH = re.compile(r"/[^\s:]+")
"""An absolute path in a message: shown by its file name (the scratch folders say nothing)."""


def _message(message: str) -> str:
    """A refusal for the table: paths by their file name, without the ``workbench: error:`` every one has."""
    text = shown(_PATH.sub(lambda found: found.group(0).rsplit("/", 1)[-1], message))
    return text.removeprefix("workbench: error: ")[:160]


def hostile_table(hostile: Any) -> Table:
    table = Table(
        title="Hostile files and requests (one line and exit 2 each; time includes the process's start-up)",
        box=box.SIMPLE_HEAD,
        title_justify="left",
    )
    for column in ("kind", "attack", "exit", "refused in s", "process s", "peak RSS MB", "what it got", "held"):
        table.add_column(column, overflow="fold", max_width=80 if column == "what it got" else None)
    for outcome in hostile.everything:
        own = outcome.own_s if outcome.own_s is not None else outcome.seconds
        table.add_row(
            outcome.attack.kind,
            outcome.attack.name,
            "–" if outcome.exit_code is None else str(outcome.exit_code),
            f"{own:.2f}",
            "–" if outcome.peak_rss_mb is None else f"{outcome.seconds:.2f}",
            _mb(outcome.peak_rss_mb),
            Text(_message(outcome.message)),
            "yes" if outcome.held else "NO",
        )
    return table


def stops_table(kills: list[Any], limits: list[Any]) -> Table:
    table = Table(title="Crash, cancellation and limits", box=box.SIMPLE_HEAD, title_justify="left")
    for column in ("check", "listed as", "arms", "events at stop / stored", "timing", "held"):
        table.add_column(column, overflow="fold")
    for kill in kills:
        arms = ", ".join(f"{k} {v}" for k, v in kill.arm_statuses.items())
        if kill.signal == "SIGKILL":
            lost = "" if kill.events_lost is None else f"; events lost {kill.events_lost}"
            if kill.events_lost:
                lost += f", all from the last {kill.lost_window_s:.2f} s"
            timing = f"last stored event {kill.lag_s:.2f} s before the kill{lost}"
        else:
            timing = f"saved {kill.saved_s:.2f} s after, exit {kill.exit_code} after {kill.exit_s:.2f} s"
        timing += f"; sandbox workers {kill.workers_at_kill}, left behind {kill.leftover_processes}"
        table.add_row(
            kill.name,
            kill.listed_status or "–",
            arms,
            f"{kill.events_at_kill} / {kill.events_stored}",
            timing,
            "yes" if kill.recovered else "NO",
        )
    for limit in limits:
        reasons = "; ".join(sorted({(e or "").split(". ")[0][:90] for e in limit.errors.values()}))
        table.add_row(
            limit.name,
            "–",
            ", ".join(f"{k} {v}" for k, v in limit.statuses.items()),
            "–",
            f"{limit.seconds:.2f} s: {reasons}",
            "yes" if limit.held else "NO",
        )
    return table


def storage_table(faults: list[Any]) -> Table:
    table = Table(title="Storage faults under a run (cart/remove-expensive)", box=box.SIMPLE_HEAD, title_justify="left")
    for column in ("fault", "stored directly", "waited", "events", "in the database after", "lost", "note"):
        table.add_column(column, justify="left" if column in ("fault", "note") else "right", overflow="fold")
    for fault in faults:
        table.add_row(
            fault.fault,
            "–" if fault.stored is None else ("yes" if fault.stored else "no"),
            f"{fault.waited_s:.2f} s",
            str(fault.emitted),
            str(fault.recovered),
            str(fault.lost),
            fault.note,
        )
    return table


def outages_table(outages: list[Any]) -> Table:
    table = Table(title="Outages under a run (cart/remove-expensive, scripted:paced)", box=box.SIMPLE_HEAD,
                  title_justify="left")  # fmt: skip
    for column in ("fault", "exit", "seconds to exit", "stored directly", "hung", "lost", "twice", "note"):
        table.add_column(column, justify="left" if column in ("fault", "note") else "right", overflow="fold")
    for outage in outages:
        goal = f" (goal {outage.goal_s:g})" if outage.goal_s is not None else ""
        table.add_row(
            outage.fault,
            "–" if outage.exit_code is None else str(outage.exit_code),
            "–" if outage.exit_s is None else f"{outage.exit_s:.2f}{goal}",
            "–" if outage.stored_directly is None else ("yes" if outage.stored_directly else "no"),
            "yes" if outage.hung else "no",
            str(outage.lost),
            str(outage.recorded_twice),
            outage.note,
        )
    return table


def prompts_table(prompts: list[Any]) -> Table:
    table = Table(title="Unusual prompts (engine and `workbench run`)", box=box.SIMPLE_HEAD, title_justify="left")
    for column in ("prompt", "chars", "engine", "cli exit", "seconds", "held"):
        table.add_column(column, justify="right" if column in ("chars", "seconds") else "left")
    for prompt in prompts:
        table.add_row(
            prompt.name,
            f"{prompt.length:,}",
            prompt.engine,
            "–" if prompt.cli_exit is None else str(prompt.cli_exit),
            f"{prompt.seconds:.2f}",
            "yes" if prompt.handled else "NO",
        )
    return table


def load_table(cases: list[Any]) -> Table:
    table = Table(title="Load (each case in its own process)", box=box.SIMPLE_HEAD, title_justify="left")
    for column in ("case", "seconds", "peak RSS MB", "baseline MB", "heap MB", "detail"):
        table.add_column(column, justify="left" if column in ("case", "detail") else "right", overflow="fold")
    for case in cases:
        table.add_row(
            case.name,
            f"{case.seconds:.2f}",
            _mb(case.peak_mb),
            _mb(case.baseline_mb),
            _mb(case.heap_mb),
            ", ".join(f"{k} {v}" for k, v in case.detail.items()),
        )
    return table


def _mb(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}"


def _problems(results: dict[str, Any]) -> list[str]:
    lines = []
    for attack in results.get("attacks", []):
        lines += [f"attack {attack.attack.name}: {p}" for p in attack.problems]
    if "hostile" in results:
        hostile = results["hostile"]
        for outcome in hostile.everything:
            lines += [f"hostile {outcome.attack.name}: {p}" for p in outcome.problems]
        if hostile.commands_run or hostile.results_changed:
            lines.append(f"hostile: commands run {hostile.commands_run}, results changed {hostile.results_changed}")
    for kill in results.get("crash", []):
        lines += [f"{kill.name}: {p}" for p in kill.problems]
    for stop in results.get("stops", []):
        lines += [f"{stop.name}, {stop.signal}: {p}" for p in stop.problems]
    for fault in results.get("storage", []):
        lines += [f"storage, {fault.fault}: {p}" for p in fault.problems]
    for outage in results.get("outages", []):
        lines += [f"outage, {outage.fault}: {p}" for p in outage.problems]
    for huge in results.get("huge", []):
        lines += [f"huge results: {p}" for p in huge.problems]
    for limit in results.get("limits", []):
        lines += [f"{limit.name}: {p}" for p in limit.problems]
    for outcome in results.get("fuzz", {}).get("outcomes", []):
        lines += [f"fuzz {shown(' '.join(outcome.case.args))[:120]}: {p}" for p in outcome.problems]
    for prompt in results.get("prompts", []):
        lines += [f"prompt {prompt.name}: {p}" for p in prompt.problems]
    for case in results.get("load", []):
        lines += [f"load {case.name}: {p}" for p in case.problems]
    return lines


def _over_goal(results: dict[str, Any]) -> list[str]:
    """Timing figures past their goal (what held, but too slowly)."""
    lines = []
    for section in ("crash", "limits", "prompts"):
        for report in results.get(section, []):
            lines += [f"{report.name}: {figure}" for figure in report.over_goal]
    for outage in results.get("outages", []):
        lines += [f"{outage.fault}: {figure}" for figure in outage.over_goal]
    if "hostile" in results:
        lines += results["hostile"].over_goal
    return lines
