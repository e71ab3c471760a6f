"""Your own context layer: the functions you wrote in the course's early exercises, in one module.

The later notebooks can run on these instead of the package's. Set ``MY_CODE = True`` in the
parameters cell at the top of notebooks 12, 13, 21, 22, 25 or 26 and run it: every ``clamp``,
``find_cut``, ``compact`` and ``replay`` there goes through the functions below
(``nanohermes_nb.course.mine`` does the plumbing). If one of yours is wrong, the notebook's own
closing assertions will say so.

This file starts out with the course's worked solutions, so that both ways run. Replace each body
with the function you wrote, exercise by exercise (the exercise is named above each function);
keep the names and the arguments. Each depends only on the ones above it and on the standard
library, except ``compact``, which asks a summarizer for the summary (by default the course's
offline one).
"""

from __future__ import annotations

import json

# ---------------------------------------------------------------- exercise 1.4 (notebook 01): the size of a message


def message_size(message: dict) -> int:
    """UTF-8 bytes of the message's compact JSON, as the session budget counts them."""
    return len(json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


# ---------------------------------------------------------------- exercise 7.1 (notebook 07): clamp


def clamp(text: str, max_bytes: int = 20_000) -> str:
    """NanoHermes's clamp: a byte cap, a step back to a character boundary, a note."""
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text
    end = max_bytes
    while end > 0 and (data[end] & 0b1100_0000) == 0b1000_0000:
        end -= 1  # a continuation byte (10xxxxxx): inside a character
    omitted = len(data) - end  # bytes cut off, although the note says "chars"
    return data[:end].decode("utf-8") + f"\n… output truncated ({omitted} chars omitted)"


# ---------------------------------------------------------------- exercise 10.1 (notebook 10): the cut


def find_cut(messages: list, keep_recent: int = 10) -> int:
    """The first message compaction keeps: len - keep_recent, moved forward past tool results."""
    start = max(len(messages) - keep_recent, 0)
    while start < len(messages) and messages[start].get("role") == "tool":
        start += 1
    return start


# ---------------------------------------------------------------- exercise 10.2 (notebook 10): compact

SUMMARY_HEADER = "[Earlier conversation summary]"
PLACEHOLDER = "[Earlier conversation was omitted to keep the context small]"


def excerpt(dropped: list) -> str:
    """One 'role: text' line per dropped message that carries text (the starter of exercise 10.2 gives it)."""
    lines = []
    for m in dropped:
        role = m.get("role") if isinstance(m.get("role"), str) else "?"
        content = m.get("content")
        if isinstance(content, list):
            content = " ".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
        text = content.strip() if isinstance(content, str) else ""
        if text:
            lines.append(f"{role}: {text}\n")
    return "".join(lines)


def note(dropped: list, summarizer) -> str:
    """The summary message's content: the summary, or the placeholder when there is none."""
    text = excerpt(dropped)
    if not text:
        return PLACEHOLDER
    try:
        summary = summarizer(text)
    except Exception:
        return PLACEHOLDER
    if not isinstance(summary, str) or not summary.strip():
        return PLACEHOLDER
    return f"{SUMMARY_HEADER}\n{summary.strip()}"


def compact(messages: list, budget: int = 120_000, keep_recent: int = 10, summarizer=None, force: bool = False):
    """NanoHermes's compaction: (new messages, cut, dropped, note); cut and note are None when nothing happens.

    ``summarizer`` None is the course's offline summarizer (``nanohermes_nb.ExtractiveSummarizer``).
    """
    if summarizer is None:
        from nanohermes_nb import ExtractiveSummarizer

        summarizer = ExtractiveSummarizer()
    messages = list(messages)
    if not force and (sum(message_size(m) for m in messages) <= budget or len(messages) <= keep_recent + 1):
        return messages, None, [], None
    cut = find_cut(messages, keep_recent)
    if cut <= 1:
        return messages, None, [], None
    dropped = messages[1:cut]
    text = note(dropped, summarizer)
    return [messages[0], {"role": "system", "content": text}, *messages[cut:]], cut, dropped, text
