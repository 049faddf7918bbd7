"""The official Python SDK against a deployed LangGraph project (TestControlPlaneProjects).

JETGRAPH_URL is the deployment's custom_url, LANGGRAPH_API_KEY the tenant's key (the SDK sends
it as x-api-key). It prints the graphs the deployment serves (comma-separated), then runs the
graph named by the first argument on a new thread and prints the last message's text.

    python controlplane_project.py <graph_id>
"""

import asyncio
import os
import sys
from typing import Any

from langgraph_sdk import get_client

from checks import check


async def main() -> None:
    client = get_client(url=os.environ["JETGRAPH_URL"])
    graph = sys.argv[1]
    ids = sorted(a["graph_id"] for a in await client.assistants.search(limit=100))
    thread = await client.threads.create()
    state: Any = await client.runs.wait(
        thread["thread_id"], graph, input={"messages": [{"role": "user", "content": "hi"}], "name": "Ada"}
    )
    check(isinstance(state, dict) and bool(state.get("messages")), f"run result {state!r}")
    print(",".join(ids))
    print(state["messages"][-1]["content"])


asyncio.run(main())
