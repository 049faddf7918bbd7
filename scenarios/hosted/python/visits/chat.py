"""A chat graph on LangChain's fake chat model, which streams its answer token by token."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AnyMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.graph.state import CompiledStateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def chat_graph(model: Callable[[], BaseChatModel]) -> CompiledStateGraph[Any, Any, Any, Any]:
    """A graph of one node, `chat`, that answers the messages with a model made for the call."""

    async def chat(state: State) -> dict[str, Any]:
        return {"messages": [await model().ainvoke(state["messages"])]}

    builder = StateGraph(State)
    builder.add_node("chat", chat)
    builder.add_edge(START, "chat")
    builder.add_edge("chat", END)
    return builder.compile()


graph = chat_graph(lambda: GenericFakeChatModel(messages=iter([AIMessage(content="hello there friend")])))
