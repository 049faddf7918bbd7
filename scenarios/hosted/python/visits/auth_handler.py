"""A langgraph_sdk.Auth whose @auth.authenticate handler knows users by their bearer token:
ada (a dict with a display name, permissions and an email), bob (a bare identity string),
a banned user (403), and a token that makes the handler fail (a 500 that tells nothing). Each
user it authenticates is a line of its log: with auth.cache, one per token."""

from __future__ import annotations

import sys
from typing import Any

from langgraph_sdk import Auth

auth = Auth()

USERS: dict[str, Any] = {
    "tok-ada": {"identity": "ada", "display_name": "Ada L.", "permissions": ["threads:write"],
                "email": "ada@example.test"},
    "tok-bob": "bob",
}


@auth.authenticate
async def authenticate(authorization: str | None, headers: dict[bytes, bytes], path: str, method: str) -> Any:
    if not path.startswith("/") or not method:
        raise Auth.exceptions.HTTPException(status_code=400, detail="no path or method")
    if headers.get(b"authorization") != (authorization.encode() if authorization else None):
        raise RuntimeError("authorization and headers disagree")
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not token:
        raise Auth.exceptions.HTTPException(status_code=401, detail="Missing bearer token")
    if token == "tok-banned":
        raise Auth.exceptions.HTTPException(status_code=403, detail="This user is banned")
    if token == "tok-boom":
        raise RuntimeError("secret-internal-detail")
    if token not in USERS:
        raise Auth.exceptions.HTTPException(status_code=401, detail="Unknown token")
    print(f"auth_handler: authenticated {token.removeprefix('tok-')}", file=sys.stderr)  # counted by the test
    return USERS[token]


@auth.on.threads.create
async def owner(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> None:
    """Each thread is marked as its creator's."""
    value.setdefault("metadata", {})["owner"] = ctx.user.identity
