"""A langgraph_sdk.Auth where each user owns what they create: tokens name users, create adds
metadata.owner, every other operation on threads and crons is filtered to the user's own, the
store is split by user (the namespace prefixed with the identity), and some rules refuse: a
thread is deleted only with the threads:delete permission, a guest (is_authenticated false)
may not search threads, assistants are never updated, and an assistant's delete rule answers
what is no filter. owners_auth.ts is the same handler in TypeScript: both hosts answer alike."""

from __future__ import annotations

from typing import Any

from langgraph_sdk import Auth

auth = Auth()

USERS: dict[str, Any] = {
    "tok-ada": {"identity": "ada", "display_name": "Ada L.", "permissions": ["threads:delete"]},
    "tok-bob": "bob",
    "tok-guest": {"identity": "guest", "is_authenticated": False},
}


@auth.authenticate
async def authenticate(authorization: str | None) -> Any:
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not token:
        raise Auth.exceptions.HTTPException(status_code=401, detail="Missing bearer token")
    if token not in USERS:
        raise Auth.exceptions.HTTPException(status_code=401, detail="Unknown token")
    return USERS[token]


def own(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> None:
    """Marks what the user creates as theirs."""
    metadata = value.get("metadata")
    if metadata is None:
        metadata = value["metadata"] = {}
    metadata["owner"] = ctx.user.identity


@auth.on.threads.create
async def thread_create(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> None:
    own(ctx, value)


@auth.on.threads.delete
async def thread_delete(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> dict[str, Any]:
    if "threads:delete" not in ctx.permissions:
        raise Auth.exceptions.HTTPException(status_code=403, detail=f"{ctx.user.identity} may not delete threads")
    return {"owner": ctx.user.identity}


@auth.on.threads.search
async def thread_search(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> dict[str, Any]:
    assert ctx.user.is_authenticated, "guests may not search threads"
    return {"owner": ctx.user["identity"]}


@auth.on.threads
async def threads(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> dict[str, Any]:
    if ctx.action == "create_run":
        own(ctx, value)
    return {"owner": ctx.user.identity}


@auth.on.assistants.create
async def assistant_create(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> None:
    own(ctx, value)


@auth.on.assistants.update
async def assistant_update(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> bool:
    return False


@auth.on.assistants.delete
async def assistant_delete(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> Any:
    return "yes"


@auth.on.crons.create
async def cron_create(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> None:
    own(ctx, value)


@auth.on.crons
async def crons(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> dict[str, Any]:
    return {"owner": ctx.user.identity}


@auth.on.store
async def store(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> None:
    namespace = value.get("namespace") or ()
    if not isinstance(namespace, tuple):
        raise TypeError(f"a store namespace came as {type(namespace).__name__}, not a tuple")
    value["namespace"] = (ctx.user.identity, *namespace)
