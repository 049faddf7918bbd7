"""LangChain's tracer (langchain-core, pinned with the clients) sending to jetgraph through the
langsmith client: a runnable sequence around a chat model, invoked (with usage) and streamed
(new_token), in LangChain's serialized message format. Read back with the langsmith client;
jetgraph's normalised messages with a plain GET. Run by TestPythonTracing ("langchain").
"""

from __future__ import annotations

import os
import uuid
from typing import Any

import requests
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import Runnable, RunnableLambda
from langchain_core.tracers.context import tracing_v2_enabled
from langsmith import Client

import checks
from checks import check, poll

checks.label = "langchain"
PROJECT = f"py-langchain-{uuid.uuid4().hex[:8]}"
USAGE = {"input_tokens": 9, "output_tokens": 4, "total_tokens": 13}


def main() -> None:
    client = Client()
    reply = AIMessage(content="Paris is the capital.", usage_metadata=USAGE)
    model = GenericFakeChatModel(messages=iter([reply, AIMessage(content="Rome is the capital.")]),
                                 metadata={"ls_provider": "openai", "ls_model_name": "gpt-4o-mini"})
    chain: Runnable[Any, BaseMessage] = RunnableLambda(lambda q: [HumanMessage(content=q)]).with_config(run_name="to-messages") | model
    with tracing_v2_enabled(project_name=PROJECT, client=client):
        answer = chain.invoke("Capital of France?", config={"run_name": "ask", "metadata": {"thread_id": "lc"}})
        streamed = "".join(str(c.content) for c in chain.stream("Capital of Italy?", config={"run_name": "ask-streamed"}))
    check(answer.content == "Paris is the capital." and streamed == "Rome is the capital.", f"{answer} {streamed}")
    client.flush()

    def ended(kw: dict[str, Any], n: int) -> list[Any] | None:
        runs = [r for r in client.list_runs(project_name=PROJECT, **kw) if r.end_time]
        return runs if len(runs) == n else None

    poll("both traces", lambda: ended({}, 6))
    roots = {r.name: r for r in client.list_runs(project_name=PROJECT, is_root=True)}
    check(sorted(roots) == ["ask", "ask-streamed"], f"roots: {sorted(roots)}")
    llms = {str(r.trace_id): r for r in client.list_runs(project_name=PROJECT, run_type="llm")}
    invoked, streamed_run = llms[str(roots["ask"].id)], llms[str(roots["ask-streamed"].id)]

    check(invoked.name == "GenericFakeChatModel" and invoked.parent_run_id == roots["ask"].id, f"llm: {invoked}")
    check((invoked.prompt_tokens, invoked.completion_tokens, invoked.total_tokens) == (9, 4, 13), f"tokens: {invoked}")
    cost = 9 * 0.15e-6 + 4 * 0.6e-6
    check(invoked.total_cost is not None and abs(float(invoked.total_cost) - cost) < 1e-12, f"cost: {invoked.total_cost}")
    check(roots["ask"].total_tokens == 13, f"the chain's roll-up: {roots['ask'].total_tokens}")
    message = (invoked.outputs or {})["generations"][0][0]["message"]
    check(message["kwargs"]["content"] == "Paris is the capital.", f"LangChain's serialized message: {message}")

    check(streamed_run.first_token_time is not None, f"streamed first token: {streamed_run}")
    check(any(e.get("name") == "new_token" for e in streamed_run.events or []), f"events: {streamed_run.events}")

    # jetgraph's additions: LangChain's messages normalised to the spec's native format.
    raw = requests.get(f"{os.environ['LANGSMITH_ENDPOINT']}/runs/{invoked.id}",
                       headers={"x-api-key": os.environ["LANGSMITH_API_KEY"]}, timeout=10).json()
    check(raw["input_messages"] == [{"role": "user", "content": [{"type": "text", "text": "Capital of France?"}]}],
          f"input_messages: {raw['input_messages']}")
    out = raw["output_messages"]
    check(len(out) == 1 and out[0]["role"] == "assistant" and out[0]["content"] == [{"type": "text", "text": "Paris is the capital."}]
          and out[0]["usage_metadata"] == USAGE, f"output_messages: {out}")
    check(not raw.get("message_problems"), f"message problems: {raw.get('message_problems')}")
    print("ok")


main()
