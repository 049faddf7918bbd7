"""The Python langsmith client's async side against jetgraph: async @traceable functions (an
async generator model streamed, tools run concurrently), run trees built by hand (post, add_event,
end, patch), read back with the AsyncClient (read_run, list_runs, projects, feedback through a
presigned token). Run by TestPythonTracing ("async") with the README's environment.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

from langsmith import AsyncClient, Client, traceable
from langsmith.run_trees import RunTree
from langsmith.utils import LangSmithNotFoundError

import checks
from checks import check, native_reply, note_run

checks.label = "async"
SUFFIX = uuid.uuid4().hex[:8]
PROJECT = f"py-async-{SUFFIX}"
USAGE = {"input_tokens": 7, "output_tokens": 3, "total_tokens": 10}


async def apoll(what: str, f: Any, timeout: float = 30) -> Any:
    """poll for a coroutine function."""
    end = asyncio.get_running_loop().time() + timeout
    last: Exception | None = None
    while asyncio.get_running_loop().time() < end:
        try:
            if v := await f():
                return v
        except Exception as e:  # noqa: BLE001 - not there yet
            last = e
        await asyncio.sleep(0.05)
    check(False, f"timed out waiting for {what}: {last!r}")


async def send(client: Client) -> dict[str, str]:
    """An async chain: a streamed async generator model, then two tools at once."""
    ids: dict[str, str] = {}

    def here(role: str) -> None:
        note_run(ids, role)

    @traceable(run_type="llm", name="async-model", reduce_fn=native_reply(USAGE),
               metadata={"ls_provider": "anthropic", "ls_model_name": "claude-3-5-haiku"})
    async def model(messages: list[dict[str, Any]]) -> AsyncIterator[str]:
        here("llm")
        await asyncio.sleep(0.05)
        for token in ["Both", " done."]:
            yield token

    @traceable(run_type="tool", name="lookup")
    async def lookup(key: str, delay: float) -> str:
        here(f"tool-{key}")
        await asyncio.sleep(delay)
        return key.upper()

    @traceable(run_type="chain", name="async-agent")
    async def agent(question: str) -> dict[str, Any]:
        here("chain")
        text = "".join([t async for t in model([{"role": "user", "content": question}])])
        # The one started first (a) ends last: execution order is start order.
        found = await asyncio.gather(lookup("a", 0.05), lookup("b", 0.0))
        return {"text": text, "found": found}

    out = await agent("go", langsmith_extra={"client": client, "project_name": PROJECT})
    check(out == {"text": "Both done.", "found": ["A", "B"]}, f"agent: {out}")
    return ids


def run_tree(client: Client) -> tuple[str, str]:
    """A trace built by hand with RunTree: the spec's post, add_event (new_token), end, patch."""
    root = RunTree(name="by-hand", run_type="chain", inputs={"q": "hi"}, client=client, project_name=PROJECT)
    root.post()
    child = root.create_child(name="hand-model", run_type="llm",
                              inputs={"messages": [{"role": "user", "content": "hi"}]},
                              extra={"metadata": {"ls_provider": "openai", "ls_model_name": "gpt-4o-mini"}})
    child.post()
    child.add_event({"name": "new_token", "time": datetime.now(UTC).isoformat()})
    child.end(outputs={"choices": [{"message": {"role": "assistant", "content": "hello"}}],
                       "usage_metadata": USAGE})
    child.patch()
    root.end(outputs={"a": "hello"})
    root.patch()
    return str(root.id), str(child.id)


async def reads(ac: AsyncClient, ids: dict[str, str], hand: tuple[str, str]) -> None:
    root = await apoll("the async trace", lambda: _finished(ac, ids["chain"], 10))
    check(root.outputs == {"text": "Both done.", "found": ["A", "B"]}, f"async root: {root.outputs}")
    llm = await ac.read_run(ids["llm"])
    check(llm.total_tokens == 10 and llm.first_token_time is not None and str(llm.parent_run_id) == ids["chain"],
          f"async llm: {llm}")
    check(llm.total_cost is not None and float(llm.total_cost) > 0, f"claude-3-5-haiku priced: {llm.total_cost}")
    async def ended_tools() -> list[Any] | None:
        tools = [r async for r in ac.list_runs(project_name=PROJECT, run_type="tool")]
        return tools if len(tools) == 2 and all(r.end_time for r in tools) else None

    tools = await apoll("both tools", ended_tools)
    by_order = sorted(tools, key=lambda r: r.dotted_order)
    check([r.name for r in by_order] == ["lookup", "lookup"] and [str(r.id) for r in by_order] == [ids["tool-a"], ids["tool-b"]],
          f"concurrent tools in start order: {[(r.id, r.dotted_order) for r in by_order]}")
    check(all(r.dotted_order.startswith(root.dotted_order + ".") for r in tools), "tools under the chain")

    hand_root = await apoll("the hand-built trace", lambda: _finished(ac, hand[0], 10))
    check(hand_root.outputs == {"a": "hello"} and hand_root.inputs == {"q": "hi"}, f"by hand: {hand_root}")
    hand_llm = await ac.read_run(hand[1])
    check(hand_llm.first_token_time is not None and hand_llm.total_tokens == 10 and str(hand_llm.parent_run_id) == hand[0],
          f"hand-built llm: {hand_llm}")

    project = await ac.read_project(project_name=PROJECT)
    check(project.name == PROJECT, f"read_project: {project}")
    token = await ac.create_presigned_feedback_token(ids["chain"], "stars", expiration=timedelta(minutes=5))
    await ac.create_feedback_from_token(token.url, score=4, comment="from a token")
    fb = [f async for f in ac.list_feedback(run_ids=[ids["chain"]])]
    check([(f.key, f.score, f.comment) for f in fb] == [("stars", 4, "from a token")], f"feedback from a token: {fb}")
    made = await ac.create_feedback(ids["llm"], key="ok", score=1)
    check((await ac.read_feedback(made.id)).key == "ok", "async read_feedback")
    await ac.delete_feedback(made.id)
    try:
        await ac.read_feedback(made.id)
        check(False, "a deleted feedback read back")
    except LangSmithNotFoundError:
        pass
    await ac.delete_project(project_name=PROJECT)
    try:
        await ac.read_run(ids["chain"])
        check(False, "a run of a deleted project read back")
    except LangSmithNotFoundError:
        pass


async def _finished(ac: AsyncClient, run_id: str, tokens: int) -> Any:
    r = await ac.read_run(run_id)
    return r if r.end_time and r.total_tokens == tokens else None


async def main() -> None:
    errors: list[Exception] = []
    client = Client(tracing_error_callback=errors.append)
    ids = await send(client)
    hand = run_tree(client)
    client.flush()
    check(not errors, f"tracing errors: {errors}")
    async with AsyncClient() as ac:
        await reads(ac, ids, hand)
    print("ok")


asyncio.run(main())
