"""A graph that tells who ran it: the user the server authenticated, as the reference's graphs
read it from config["configurable"] (langgraph_auth_user by key and by attribute,
langgraph_auth_user_id, langgraph_auth_permissions), and which credential headers reached it."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict, total=False):
    user_id: str | None
    identity: str | None
    display_name: str | None
    permissions: list[str]
    email: str | None
    leaked: list[str]


def whoami(state: State, config: RunnableConfig) -> dict[str, Any]:
    cf = config.get("configurable") or {}
    user = cf.get("langgraph_auth_user")
    return {
        "user_id": cf.get("langgraph_auth_user_id"),
        "identity": user.identity if user is not None else None,  # attribute access, as on ProxyUser
        "display_name": user["display_name"] if user is not None else None,
        "permissions": list(cf.get("langgraph_auth_permissions") or []),
        "email": user.get("email") if user is not None else None,
        "leaked": sorted(k for k in cf if k.lower() in ("x-api-key", "authorization")),
    }


builder = StateGraph(State)
builder.add_node("whoami", whoami)
builder.add_edge(START, "whoami")
builder.add_edge("whoami", END)
graph = builder.compile()
