"""Aider's chat history (``.aider.chat.history.md``) as a transcript, with no usage.

Aider appends what it shows to one Markdown file, as ``aider/io.py`` of aider-chat 0.86.2 writes it:

- each run opens with ``# aider chat started at <local time>`` (``InputOutput.__init__``, io.py:335-336);
- what the user typed, every line prefixed ``#### `` and ended by a Markdown hard break of two spaces
  (``user_input``, io.py:775-789, through ``append_chat_history``, io.py:1117-1136);
- the model's reply as it came, stripped, between blank lines (``ai_output``, io.py:793-795);
- aider's own console lines as ``> `` quotes (``tool_output``/``tool_error``/``tool_warning`` and the
  questions with their answers, io.py:807-999): the command line first (``main.py:749-751``), then the
  announcements (``Model: <name> with <format> edit format``, ``coders/base_coder.py:207-240``), files
  added, errors, and a ``Tokens: 1.8k sent, 653 received.`` line after each reply.

Aider reads the file back itself when started with ``--restore-chat-history`` (``base_coder.py:519-522``),
with ``utils.split_chat_history_markdown`` (``utils.py:145-193``): ``# `` lines skipped, ``> `` lines
dropped, ``#### `` lines the user's, every other line the assistant's. This reader does the same, and:

- only aider's own ``# aider chat started at`` lines are skipped: aider skips every line starting ``# ``,
  which drops a Markdown heading the model wrote in its reply;
- the two spaces aider added to each user line are removed (the model was sent the line without them);
- a reply's reasoning, between ``<thinking-content-…>`` tags (``reasoning_tags.py``: ``REASONING_TAG``) or
  ``<think>`` tags (the models of ``resources/model-settings.yml`` that set ``reasoning_tag: think``),
  becomes the message's ``reasoning_content``: aider removes it before the reply goes back into the chat
  (``base_coder.py:1522``, ``remove_reasoning_content``);
- each run after the first starts on an empty chat, unless its command line says
  ``--restore-chat-history``: a ``ToolCompaction`` with trigger ``"restart"`` marks where, nothing kept
  (a setting in ``.aider.conf.yml`` or the environment cannot be seen in the file);
- every reply is one ``AgentRequest`` with the model the last announcement named, and no usage. The
  ``Tokens:`` lines are no bill: rounded (to a tenth of a thousand, to a thousand from 10k:
  ``format_tokens``, utils.py:276-282), and where the provider sent no usage, aider's own count of the
  messages (``base_coder.py:1994-2030``); no time either: a run's start is local time with no zone.

A file is this format when its first line is aider's header (the content, never the name). Damage is
read past and noted: bytes that are not UTF-8 (aider writes with ``errors="ignore"``, io.py:1131) and NUL
bytes; a history with no message of the user's or the model's is refused in one line.
"""

from __future__ import annotations

import re

from ..base import AgentRequest, Bad, Message, ToolCompaction, Transcript
from .records import Notes

__all__ = ["is_aider_history", "read_aider_history", "AIDER_FORMAT"]

AIDER_FORMAT = "aider-chat-history"
_HEADER = re.compile(rb"\A(?:\xef\xbb\xbf)?[ \t\r\n]*# aider chat started at "
                     rb"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d[ \t]*(?:\r?\n|\Z)")
_RUN = "# aider chat started at "
_MODEL = re.compile(r"^(?:Main model|Model): (\S+) with \S+ edit format")
_THINK = re.compile(r"\A\s*<(thinking-content-[0-9a-f]{8,64}|think)>(.*?)</\1>\s*", re.S)
_RESTORE = "--restore-chat-history"


def is_aider_history(raw: bytes) -> bool:
    """The file opens with aider's ``# aider chat started at YYYY-MM-DD HH:MM:SS`` line."""
    return _HEADER.match(raw[:4096]) is not None


def _text(raw: bytes, notes: Notes) -> str:
    """The file as text: bytes that are not UTF-8 replaced, NUL bytes removed, each noted with its line."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        notes.add("bytes that are not UTF-8, replaced", raw.count(b"\n", 0, exc.start) + 1)
        text = raw.decode("utf-8-sig", errors="replace")
    nul = text.find("\x00")
    if nul >= 0:
        notes.add("NUL bytes, removed", text.count("\n", 0, nul) + 1)
        text = text.replace("\x00", "")
    return text


class _Reader:
    """One pass over the lines, as ``split_chat_history_markdown`` reads them (see the module docstring)."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.requests: list[AgentRequest] = []
        self.restarts: list[ToolCompaction] = []
        self.role = ""
        self.lines: list[str] = []
        self.start = 0
        self.model = ""
        self.run_start = -1  # message index where the current run began (-1: no run yet)
        self.await_command = False

    def flush(self) -> None:
        role, lines, self.role, self.lines = self.role, self.lines, "", []
        if role == "user":
            text = "\n".join(lines)
            if text.strip():
                self.messages.append({"role": "user", "content": text})
        elif role == "assistant":
            self._assistant("\n".join(lines).strip())

    def _assistant(self, text: str) -> None:
        message: Message = {"role": "assistant", "content": text}
        think = _THINK.match(text)
        if think:
            message = {"role": "assistant", "content": text[think.end():].strip(),
                       "reasoning_content": think.group(2).strip()}
        if not message["content"] and not message.get("reasoning_content"):
            return
        self.messages.append(message)
        self.requests.append(AgentRequest(len(self.messages) - 1, f"line-{self.start}", None, self.model, None))

    def line(self, number: int, line: str) -> None:
        if line.startswith(_RUN):
            self.flush()
            self.run_start, self.await_command = len(self.messages), True
            return
        if line.startswith("> "):  # aider's console line, as split_chat_history_markdown tells it
            self.flush()
            self.quote(line[2:])
            return
        role, body = ("user", line[5:]) if line.startswith("#### ") else ("assistant", line)
        if role == "user":
            body = body[:-2] if body.endswith("  ") else body
        if role != self.role:
            self.flush()
            self.role, self.start = role, number
        self.lines.append(body)

    def quote(self, text: str) -> None:
        text = text.rstrip()
        if self.await_command and text:  # a run's first console line is its command line (main.py:749-751)
            self.await_command = False
            if self.run_start > 0 and _RESTORE not in text.split():
                self.restarts.append(ToolCompaction(message=self.run_start, trigger="restart"))
        model = _MODEL.match(text)
        if model:
            self.model = model.group(1)[:200]


def read_aider_history(raw: bytes, path: str) -> Transcript:
    """The chat history as a Transcript (see the module docstring); ``Bad`` when it holds no message."""
    notes = Notes()
    reader = _Reader()
    for number, line in enumerate(_text(raw, notes).splitlines(), start=1):
        reader.line(number, line)
    reader.flush()
    at = {c.message: c for c in reader.restarts if c.message < len(reader.messages)}  # a run with no message
    restarts = list(at.values())  # leaves two restarts at one place: one is enough
    if not reader.messages:
        first = notes.lines()[:1]
        raise Bad("", "an aider chat history with no message of the user's or the model's (only aider's own "
                      "output)" + (f" ({first[0]})" if first else ""))
    return Transcript(reader.messages, path=path, format=AIDER_FORMAT, agent="aider", requests=reader.requests,
                      compactions=restarts, skipped=notes.lines())
