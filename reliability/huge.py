"""Peak memory under huge results: a code arm whose snippet returns 100 MB, three times in one run.

The run happens in a child process, so the peak RSS it reports is the workbench's own (its Monty worker
is another process). What the model received each time is bounded by ``max_result_bytes`` (1 MB by
default) and the stored session keeps only the clipped text; the goal is a peak under 500 MB.

    python -m reliability.huge     # the child: prints one JSON object
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reliability import child_command, child_env

SNIPPET = 'x = "y" * 100_000_000\nx'
TIMES = 3
PEAK_GOAL_MB = 500.0


@dataclass
class HugeReport:
    name: str = "snippet returning 100 MB, three times"
    peak_rss_mb: float | None = None
    received_bytes: list[int] = field(default_factory=list)
    """What the model received for each snippet (bytes of text)."""
    clipped_from: list[int | None] = field(default_factory=list)
    """The size each result had before it was clipped, as its stored event records it."""
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)

    @property
    def held(self) -> bool:
        return not self.problems


def measure(directory: Path) -> HugeReport:
    """Run the child and check what it reports."""
    directory.mkdir(parents=True, exist_ok=True)
    command = child_command("huge", str(directory / "huge.db"))
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, env=child_env())
    report = HugeReport()
    if done.returncode != 0:
        report.problems.append(f"the run failed (exit {done.returncode}): {done.stderr.strip()[-300:]}")
        return report
    figures = json.loads(done.stdout)
    report.peak_rss_mb = figures["peak_rss_mb"]
    report.received_bytes = figures["received_bytes"]
    report.clipped_from = figures["clipped_from"]
    report.seconds = figures["seconds"]
    if figures["status"] != "completed":
        report.problems.append(f"the code arm ended {figures['status']}")
    if len(report.received_bytes) != TIMES or max(report.received_bytes) > figures["limit"]:
        report.problems.append(f"the model received {report.received_bytes} bytes (limit {figures['limit']:,})")
    if report.clipped_from != [100_000_000] * TIMES:
        report.problems.append(f"the result events record {report.clipped_from} as the original sizes")
    if report.peak_rss_mb > PEAK_GOAL_MB:
        report.problems.append(f"peak RSS {report.peak_rss_mb:.0f} MB, over {PEAK_GOAL_MB:.0f} MB")
    return report


def _child(db: str) -> dict[str, Any]:
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

    import workbench
    from workbench.events import ToolResult

    received: list[int] = []

    def pick(messages: list[ModelMessage]) -> ModelResponse:
        for part in messages[-1].parts:
            if isinstance(part, ToolReturnPart):
                received.append(len(part.model_response_str().encode()))
        made = sum(isinstance(m, ModelResponse) for m in messages)
        if made < TIMES:
            return ModelResponse(parts=[ToolCallPart("run_code", {"code": SNIPPET}, f"huge-{made}")])
        return ModelResponse(parts=[TextPart("done")])

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> Any:
        response = pick(messages)
        call = response.parts[0]
        if isinstance(call, ToolCallPart):
            yield {
                0: DeltaToolCall(name=call.tool_name, json_args=call.args_as_json_str(), tool_call_id=call.tool_call_id)
            }
        else:
            yield "done"

    model = FunctionModel(lambda messages, info: pick(messages), stream_function=stream)
    started = time.perf_counter()
    comparison = workbench.compare_sync("huge results", app="cart", items=5, model=model, arms=["code"], db=db)
    results = [e.payload for e in comparison.arms["code"].events if isinstance(e.payload, ToolResult)]
    return {
        "status": comparison.arms["code"].summary.status,
        "seconds": round(time.perf_counter() - started, 2),
        "received_bytes": received,
        "clipped_from": [result.clipped_from for result in results],
        "limit": workbench.ArmConfig().max_result_bytes,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


if __name__ == "__main__":
    print(json.dumps(_child(sys.argv[1])))
