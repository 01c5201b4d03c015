"""The typed events a run yields; the renderer in `bot` turns them into platform operations."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field, TypeAdapter

from core.types import OutgoingFile, Usage


class Status(BaseModel):
    type: Literal["status"] = "status"
    text: str


class Thinking(BaseModel):
    type: Literal["thinking"] = "thinking"
    source: str = "agent"
    text: str


class TextDelta(BaseModel):
    type: Literal["text_delta"] = "text_delta"
    text: str


class ToolStarted(BaseModel):
    type: Literal["tool_started"] = "tool_started"
    call_id: str
    name: str
    arguments: dict[str, object] = Field(default_factory=dict)
    label: str = ""


class ToolFinished(BaseModel):
    type: Literal["tool_finished"] = "tool_finished"
    call_id: str
    name: str
    ok: bool
    summary: str = ""
    elapsed_s: float = 0.0


class File(BaseModel):
    type: Literal["file"] = "file"
    file: OutgoingFile
    path: str = ""


class Done(BaseModel):
    type: Literal["done"] = "done"
    text: str
    usage: list[Usage] = Field(default_factory=list)
    label: str = ""  # e.g. "offline analyst"


class Failed(BaseModel):
    type: Literal["failed"] = "failed"
    error: str
    # error | cancelled | timeout | input | budget | llm | internal (an unexpected exception:
    # `error` is for the record, the user is told only that the answer failed)
    kind: str = "error"


Event = Annotated[
    Status | Thinking | TextDelta | ToolStarted | ToolFinished | File | Done | Failed,
    Field(discriminator="type"),
]
EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)
