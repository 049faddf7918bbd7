"""The value codec of jetgraph's Python graph host (engine/hosting/PROTOCOL.md, "Values").

Stored values (channel values, pending writes, metadata) cross as JSON that revives to the same
objects (encode, decode); API answers take the shape the reference servers serve (to_api).
Standard library only, besides the user's `langchain_core` and `langgraph`.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime
import decimal
import enum
import importlib
import uuid
from typing import Any

from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    ChatMessage,
    ChatMessageChunk,
    FunctionMessage,
    FunctionMessageChunk,
    HumanMessage,
    HumanMessageChunk,
    RemoveMessage,
    SystemMessage,
    SystemMessageChunk,
    ToolMessage,
    ToolMessageChunk,
)
from langgraph.types import Interrupt, Send

ENVELOPE = "__jg__"

MESSAGE_CLASSES: dict[str, type[BaseMessage]] = {
    "human": HumanMessage,
    "ai": AIMessage,
    "system": SystemMessage,
    "tool": ToolMessage,
    "function": FunctionMessage,
    "chat": ChatMessage,
    "remove": RemoveMessage,
    "HumanMessageChunk": HumanMessageChunk,
    "AIMessageChunk": AIMessageChunk,
    "SystemMessageChunk": SystemMessageChunk,
    "ToolMessageChunk": ToolMessageChunk,
    "FunctionMessageChunk": FunctionMessageChunk,
    "ChatMessageChunk": ChatMessageChunk,
}


class HostedError(Exception):
    """An exception revived from a checkpoint's error write: its class name and message."""

    def __init__(self, cls: str, message: str) -> None:
        super().__init__(message)
        self.cls = cls


def _class_path(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _import_class(path: str) -> Any:
    module, _, qual = path.partition(":")
    obj: Any = importlib.import_module(module)
    for part in qual.split("."):
        obj = getattr(obj, part)
    return obj


def encode(v: Any) -> Any:
    """The value codec for stored values: JSON that revives to the same objects (decode)."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, dict):
        if all(isinstance(k, str) for k in v):
            return {k: encode(x) for k, x in v.items()}
        return {ENVELOPE: "dict", "items": [[encode(k), encode(x)] for k, x in v.items()]}
    if isinstance(v, list):
        return [encode(x) for x in v]
    if isinstance(v, BaseMessage):
        return {k: encode(x) for k, x in v.model_dump().items()}
    if isinstance(v, Interrupt):
        return {ENVELOPE: "interrupt", "value": encode(v.value), "id": v.id}
    if isinstance(v, Send):
        return {ENVELOPE: "send", "node": v.node, "arg": encode(v.arg)}
    if isinstance(v, tuple):
        return {ENVELOPE: "tuple", "value": [encode(x) for x in v]}
    if isinstance(v, (set, frozenset)):
        return {ENVELOPE: "set", "value": [encode(x) for x in v]}
    if isinstance(v, (bytes, bytearray)):
        return {ENVELOPE: "bytes", "value": base64.b64encode(bytes(v)).decode()}
    if isinstance(v, datetime.datetime):
        return {ENVELOPE: "datetime", "value": v.isoformat()}
    if isinstance(v, datetime.date):
        return {ENVELOPE: "date", "value": v.isoformat()}
    if isinstance(v, datetime.time):
        return {ENVELOPE: "time", "value": v.isoformat()}
    if isinstance(v, uuid.UUID):
        return {ENVELOPE: "uuid", "value": str(v)}
    if isinstance(v, decimal.Decimal):
        return {ENVELOPE: "decimal", "value": str(v)}
    if isinstance(v, enum.Enum):
        return {ENVELOPE: "enum", "cls": _class_path(type(v)), "value": encode(v.value)}
    if isinstance(v, BaseException):
        return {ENVELOPE: "error", "class": getattr(v, "cls", type(v).__name__), "message": str(v)}
    if hasattr(v, "model_dump") and callable(v.model_dump):
        return {ENVELOPE: "pydantic", "cls": _class_path(type(v)), "value": encode(v.model_dump())}
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        fields = {f.name: encode(getattr(v, f.name)) for f in dataclasses.fields(v)}
        return {ENVELOPE: "dataclass", "cls": _class_path(type(v)), "value": fields}
    raise TypeError(f"jetgraph cannot store a value of type {type(v).__qualname__}")


def decode(v: Any) -> Any:
    """Revives what encode stored."""
    if isinstance(v, list):
        return [decode(x) for x in v]
    if not isinstance(v, dict):
        return v
    kind = v.get(ENVELOPE)
    if kind is None:
        cls = MESSAGE_CLASSES.get(v.get("type", "")) if "content" in v else None
        if cls is not None:
            return cls.model_validate(v)
        return {k: decode(x) for k, x in v.items()}
    val: Any = v.get("value")
    if kind == "dict":
        return {decode(k): decode(x) for k, x in v["items"]}
    if kind == "interrupt":
        return Interrupt(value=decode(val), id=v["id"])
    if kind == "send":
        return Send(v["node"], decode(v["arg"]))
    if kind == "tuple":
        return tuple(decode(x) for x in val)
    if kind == "set":
        return {decode(x) for x in val}
    if kind == "bytes":
        return base64.b64decode(val)
    if kind == "datetime":
        return datetime.datetime.fromisoformat(val)
    if kind == "date":
        return datetime.date.fromisoformat(val)
    if kind == "time":
        return datetime.time.fromisoformat(val)
    if kind == "uuid":
        return uuid.UUID(val)
    if kind == "decimal":
        return decimal.Decimal(val)
    if kind == "enum":
        return _import_class(v["cls"])(decode(val))
    if kind == "error":
        return HostedError(v["class"], v["message"])
    if kind == "pydantic":
        return _import_class(v["cls"]).model_validate(decode(val))
    if kind == "dataclass":
        return _import_class(v["cls"])(**{k: decode(x) for k, x in val.items()})
    raise ValueError(f"unknown stored value kind {kind!r}")


def to_api(v: Any) -> Any:
    """A value in the shape the API serves: messages and models as their dicts."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, dict):
        return {str(k): to_api(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, set, frozenset)):
        return [to_api(x) for x in v]
    if isinstance(v, Interrupt):
        return {"value": to_api(v.value), "id": v.id}
    if isinstance(v, Send):
        return {"node": v.node, "arg": to_api(v.arg)}
    if isinstance(v, BaseException):
        return {"error": getattr(v, "cls", type(v).__name__), "message": str(v)}
    if hasattr(v, "model_dump") and callable(v.model_dump):
        return to_api(v.model_dump())
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return to_api(dataclasses.asdict(v))
    if isinstance(v, enum.Enum):
        return to_api(v.value)
    if isinstance(v, (datetime.datetime, datetime.date, datetime.time)):
        return v.isoformat()
    return str(v)
