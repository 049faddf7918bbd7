"""A hosted graph's model call in jetgraph's own trace of the run: the `traced` graph of
scenarios/hosted/python or scenarios/hosted/typescript (a fake chat model that streams its answer
and reports its usage), run by the official SDK, its trace read back with the langsmith client.
Run by TestHostedTracing and TestHostedTracingUserSettings.

argv: the graph id, then "jetgraph" (the hosts trace into jetgraph: the default) or "user" (the
user's LangSmith settings win: jetgraph's trace of the run has its own spans, no model call).
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

from langgraph_sdk import get_client
from langsmith import Client

import checks
from checks import check, poll

URL = os.environ["JETGRAPH_URL"]
GRAPH, MODE = sys.argv[1], sys.argv[2]
checks.label = f"hosted tracing {GRAPH} {MODE}"


async def run() -> str:
    """Streams a run of the graph with its tokens, as a chat UI does; returns its id."""
    client = get_client(url=URL)
    thread = await client.threads.create()
    run_id, tokens = "", []
    async for part in client.runs.stream(thread["thread_id"], GRAPH, stream_mode=["messages-tuple", "values"],
                                         input={"messages": [{"role": "user", "content": "hi"}]}):
        if part.event == "metadata":
            run_id = part.data["run_id"]
        elif part.event == "messages":
            tokens.append(part.data[0]["content"])
    check("".join(tokens) == "hello there friend" and len(tokens) > 1, f"the streamed tokens: {tokens}")
    return run_id


def main() -> None:
    run_id = asyncio.run(run())
    ls = Client(api_url=f"{URL}/tracing", api_key="anything")

    def trace(ready: Any) -> list[Any] | None:
        runs = list(ls.list_runs(project_name="default", trace_id=run_id))
        return runs if ready(runs) else None

    def ended(runs: list[Any], name: str, run_type: str) -> bool:
        return any(r.name == name and r.run_type == run_type and r.end_time for r in runs)

    if MODE == "user":
        runs = poll("jetgraph's own spans of the run", lambda: trace(lambda rs: ended(rs, "chat", "chain") and ended(rs, GRAPH, "chain")))
        check(not [r for r in runs if r.run_type == "llm"], f"a model call in jetgraph's trace: {runs}")
        print("ok")
        return

    runs = poll("the model call in the run's trace", lambda: trace(lambda rs: ended(rs, "MeteredChatModel", "llm") and ended(rs, GRAPH, "chain")))
    by_id = {str(r.id): r for r in runs}
    root = by_id.get(run_id)
    check(root is not None and root.parent_run_id is None, f"the trace's root is the run: {runs}")
    llm = next(r for r in runs if r.run_type == "llm")
    # The model call is under the run's root, through the host's graph and node spans.
    path, at = [], llm
    while at.parent_run_id is not None:
        at = by_id[str(at.parent_run_id)]
        path.append(at.name)
    check(path[-1] == GRAPH and at.id == root.id and "chat" in path, f"the model call's ancestors: {path}")
    check(all(str(r.trace_id) == run_id for r in runs), f"trace ids: {[str(r.trace_id) for r in runs]}")
    # The run's steps are traced once: by the host, not by jetgraph too.
    check([r.name for r in runs].count("chat") == 1, f"the node traced twice: {[r.name for r in runs]}")

    check((llm.prompt_tokens, llm.completion_tokens, llm.total_tokens) == (9, 4, 13), f"tokens: {llm}")
    cost = 9 * 0.15e-6 + 4 * 0.6e-6  # gpt-4o-mini in jetgraph's price table
    check(llm.total_cost is not None and abs(float(llm.total_cost) - cost) < 1e-12, f"cost: {llm.total_cost}")
    check(llm.first_token_time is not None and llm.start_time <= llm.first_token_time <= llm.end_time,
          f"time to first token: {llm.start_time} {llm.first_token_time} {llm.end_time}")
    check(any(e.get("name") == "new_token" for e in llm.events or []), f"events: {llm.events}")
    check(root.total_tokens == 13, f"the run's roll-up: {root.total_tokens}")
    print("ok")


main()
