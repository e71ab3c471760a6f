"""Claude Code sub-agents, attributed to the session that started them.

A sub-agent (the Task tool) is a conversation of its own: its requests are billed like the parent's, and
the log keeps them apart. Three places hold them, by Claude Code version: records marked
``isSidechain`` in the session's own file (read by ``claude_code`` into ``Transcript.sidechains``), the
sub-agent's messages streamed into the parent's file as ``agent_progress`` records (also read there,
each a sidechain whose path ends ``#agent-<agentId>``), and the sub-agent's own file
``<project>/<sessionId>/subagents/agent-<agentId>.jsonl``. ``attach`` moves each such file under its
parent (the session ``<project>/<sessionId>.jsonl`` read alongside it), where it replaces the streamed
copy of the same agent (the file is complete: the stream misses the last response). A sub-agent file
whose parent was not read stays a session of its own.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ..base import Transcript

__all__ = ["attach", "is_subagent_file", "agent_id"]


def is_subagent_file(path: str) -> bool:
    """``.../<sessionId>/subagents/agent-<id>.jsonl``."""
    p = Path(path.split("#", 1)[0])
    return p.parent.name == "subagents" and p.name.startswith("agent-")


def agent_id(t: Transcript) -> str:
    """The sub-agent's id: from ``#agent-<id>`` (streamed) or the file name ``agent-<id>.jsonl``."""
    path = str(t.path)
    if "#agent-" in path:
        return path.rsplit("#agent-", 1)[1]
    return Path(path).stem.removeprefix("agent-")


def attach(transcripts: Iterable[Transcript]) -> list[Transcript]:
    """The transcripts with each sub-agent file moved into its parent's ``sidechains`` (see the module)."""
    items = list(transcripts)
    parents = {Path(str(t.path)).stem: t for t in items
               if t.agent == "claude_code" and not is_subagent_file(str(t.path))}
    out = []
    for t in items:
        path = str(t.path)
        parent = parents.get(Path(path).parent.parent.name) if is_subagent_file(path) else None
        if parent is None:
            out.append(t)
            continue
        me = agent_id(t)
        kept = [s for s in parent.sidechains if agent_id(s) != me]
        parent.sidechains = (*kept, t)
    return out
