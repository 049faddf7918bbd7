"""The official Python SDK against a jetgraph whose langgraph.json names a langgraph_sdk.Auth
(auth.path): no token is its 401 with the handler's message, a banned token its 403, a handler
that fails a 500 that says nothing of why, and a known token a user that a hosted graph sees in
its config.

Run by TestAuthHandler; JETGRAPH_URL names the server.
"""

import asyncio
import os
import sys
from typing import Any

import httpx
from langgraph_sdk import get_client

URL = os.environ["JETGRAPH_URL"]


def check(cond: bool, what: str) -> None:
    if not cond:
        sys.exit(f"FAIL: {what}")


async def refusal(client: Any) -> tuple[int, str]:
    """The status and body of a thread search the server refuses."""
    try:
        await client.threads.search()
    except httpx.HTTPStatusError as e:
        return e.response.status_code, e.response.text.strip()
    return 200, ""


def as_(token: str | None) -> Any:
    return get_client(url=URL, api_key=None, headers={"Authorization": f"Bearer {token}"} if token else None)


async def main() -> None:
    status, body = await refusal(as_(None))
    check((status, body) == (401, '{"detail":"Missing bearer token"}'), f"no token: {status} {body}")
    status, body = await refusal(as_("tok-nobody"))
    check((status, body) == (401, '{"detail":"Unknown token"}'), f"an unknown token: {status} {body}")
    status, body = await refusal(as_("tok-banned"))
    check((status, body) == (403, '{"detail":"This user is banned"}'), f"a banned token: {status} {body}")
    status, body = await refusal(as_("tok-boom"))
    check(status == 500 and "secret" not in body, f"a failing handler: {status} {body}")
    async with httpx.AsyncClient(base_url=URL) as http:
        check((await http.get("/ok")).status_code == 200, "/ok needs no token")
        doc = (await http.get("/openapi.json")).json()
        ops = [op for path in doc["paths"].values() for op in path.values() if isinstance(op, dict)]
        check(all(op.get("security", []) is not None for op in ops), "an operation's security is null")
        check(any("401" in op.get("responses", {}) for op in ops), "no operation documents its 401")

    ada = as_("tok-ada")
    thread = await ada.threads.create()
    out = await ada.runs.wait(thread["thread_id"], "whoami", input={},
                              config={"configurable": {"langgraph_auth_user_id": "mallory"}})
    check(out["user_id"] == "ada" and out["identity"] == "ada" and out["display_name"] == "Ada L.", f"ada: {out}")
    check(out["email"] == "ada@example.test" and out["permissions"] == ["threads:write"], f"ada's fields: {out}")
    check(out["leaked"] == [], f"authorization reached configurable: {out}")

    out = await as_("tok-bob").runs.wait(None, "whoami", input={})
    check(out["user_id"] == "bob" and out["display_name"] == "bob" and out["permissions"] == [], f"bob: {out}")


asyncio.run(main())
print("ok")
