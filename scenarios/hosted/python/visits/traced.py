"""A chat graph whose model streams its answer and reports its usage, as a provider's model does:
jetgraph traces the model call into the run's trace (tokens, cost, time to first token)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import LangSmithParams
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGenerationChunk

from visits.chat import chat_graph

USAGE = UsageMetadata(input_tokens=9, output_tokens=4, total_tokens=13)


class MeteredChatModel(GenericFakeChatModel):
    """LangChain's fake chat model (its answer streamed token by token) reporting what a
    provider's model reports: the call's usage on its last chunk, and the model it stands for
    (OpenAI's gpt-4o-mini, which jetgraph's price table knows)."""

    def _stream(
        self, messages: list[BaseMessage], stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        for chunk in super()._stream(messages, stop, run_manager, **kwargs):
            if isinstance(chunk.message, AIMessageChunk) and chunk.message.chunk_position == "last":
                chunk.message.usage_metadata = USAGE
            yield chunk

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> LangSmithParams:
        params = super()._get_ls_params(stop=stop, **kwargs)
        params["ls_provider"], params["ls_model_name"] = "openai", "gpt-4o-mini"
        return params


graph = chat_graph(lambda: MeteredChatModel(messages=iter([AIMessage(content="hello there friend")])))
