"""The official Python SDK against a jetgraph that authenticates: no credential is a 401, an
API key (api_key=) and a JWT (headers=) are users that a hosted Python graph and a Go graph see
in their config, an expired token is a 401.

Run by TestAuthSDKs; JETGRAPH_URL names the server, AUTH_KEY an API key, AUTH_TOKEN a JWT of
ada, AUTH_EXPIRED an expired one.
"""

import asyncio
import os
import sys
from typing import Any

import httpx
from langgraph_sdk import get_client, get_sync_client

URL = os.environ["JETGRAPH_URL"]
KEY, TOKEN, EXPIRED = os.environ["AUTH_KEY"], os.environ["AUTH_TOKEN"], os.environ["AUTH_EXPIRED"]


def check(cond: bool, what: str) -> None:
    if not cond:
        sys.exit(f"FAIL: {what}")


async def status_of(client: Any) -> int:
    """The status of a thread search, 200 when it succeeds."""
    try:
        await client.threads.search()
    except httpx.HTTPStatusError as e:
        return e.response.status_code
    return 200


async def main() -> None:
    anonymous = get_client(url=URL, api_key=None)
    check(await status_of(anonymous) == 401, "no credential: 401")
    expired = get_client(url=URL, api_key=None, headers={"Authorization": f"Bearer {EXPIRED}"})
    check(await status_of(expired) == 401, "an expired token: 401")

    keyed = get_client(url=URL, api_key=KEY)
    out = await keyed.runs.wait(None, "whoami", input={}, config={"configurable": {"langgraph_auth_user_id": "mallory"}})
    check(out["user_id"] == "default" and out["identity"] == "default", f"the key's user (its tenant): {out}")
    check(out["permissions"] == ["admin"] and out["leaked"] == [], f"the admin key's permissions, no credential: {out}")

    ada = get_client(url=URL, api_key=None, headers={"Authorization": f"Bearer {TOKEN}", "X-Team": "blue"})
    thread = await ada.threads.create()
    out = await ada.runs.wait(thread["thread_id"], "whoami", input={})
    check(out["user_id"] == "ada" and out["identity"] == "ada" and out["display_name"] == "Ada L.", f"the token's user: {out}")
    check(out["email"] == "ada@example.test" and out["permissions"] == ["threads:write"], f"the token's claims: {out}")
    check(out["leaked"] == [], f"authorization reached configurable: {out}")
    runs = await ada.runs.list(thread["thread_id"])
    cf = runs[0]["kwargs"]["config"]["configurable"]
    check(cf.get("x-team") == "blue" and "authorization" not in cf, f"configurable_headers: {cf}")

    # The Go graph writes in the namespace of its user.
    gthread = await ada.threads.create()
    await ada.runs.wait(gthread["thread_id"], "agent_simple", input={"messages": [{"role": "user", "content": "hi"}]})
    item = await ada.store.get_item(["ada"], "key_one")
    check(item is not None and item["value"] == {"text": "hi"}, f"the Go graph's item in ada's namespace: {item}")


def main_sync() -> None:
    ada = get_sync_client(url=URL, api_key=None, headers={"Authorization": f"Bearer {TOKEN}"})
    parts = [p.event for p in ada.runs.stream(None, "whoami", input={}, stream_mode="values")]
    check(parts[0] == "metadata" and "values" in parts, f"a streamed run with a token: {parts}")


asyncio.run(main())
main_sync()
print("ok")
