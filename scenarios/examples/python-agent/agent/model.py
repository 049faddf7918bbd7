"""The chat model: an offline one that streams its answer token by token and calls the tool.

ScriptedChatModel is a LangChain chat model (a BaseChatModel), so LangGraph streams its tokens
and reads its tool calls as it would a hosted model's. It understands one kind of question, about
the weather, in a city it names or in the city the system prompt says the user lives in.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.language_models.chat_models import generate_from_stream
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages.tool import tool_call_chunk
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

_CITY_ASKED = re.compile(r"\bin ([A-Z][\w-]*(?: [A-Z][\w-]*)*)")
_CITY_KNOWN = re.compile(r"lives in ([^.]+)\.")


class ScriptedChatModel(BaseChatModel):
    """An offline chat model for the example: no key, the same answers every time."""

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return generate_from_stream(self._stream(messages, stop, run_manager, **kwargs))

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        tools = {t["function"]["name"] for t in kwargs.get("tools", [])}
        city = _city(messages)
        last = messages[-1] if messages else None
        if isinstance(last, ToolMessage):
            text = f"In {city} it is {last.content}." if last.status == "success" else "Alright, I did not look it up."
        elif "get_weather" in tools and city and _asks_weather(messages):
            args = json.dumps({"city": city})
            chunk = tool_call_chunk(name="get_weather", args=args, id=f"call_{uuid.uuid4().hex[:12]}", index=0)
            yield ChatGenerationChunk(message=AIMessageChunk(content="", tool_call_chunks=[chunk]))
            return
        elif _asks_weather(messages):
            text = "Which city? Tell me where you are and I will look it up."
        else:
            text = "I can tell you the weather: ask me about it, in a city or where you live."
        for i, word in enumerate(text.split(" ")):
            yield ChatGenerationChunk(message=AIMessageChunk(content=word if i == 0 else " " + word))


def _last_question(messages: list[BaseMessage]) -> str:
    for m in reversed(messages):
        if isinstance(m, HumanMessage):
            return m.text
    return ""


def _asks_weather(messages: list[BaseMessage]) -> bool:
    return "weather" in _last_question(messages).lower()


def _city(messages: list[BaseMessage]) -> str | None:
    """The city asked about: named in the question, else the one the system prompt knows."""
    if m := _CITY_ASKED.search(_last_question(messages)):
        return m.group(1)
    for msg in messages:
        if isinstance(msg, SystemMessage) and (m := _CITY_KNOWN.search(msg.text)):
            return m.group(1)
    return None


def make_model() -> BaseChatModel:
    """The model the agent talks to. For a real one, see the README (langchain-openai)."""
    return ScriptedChatModel()
