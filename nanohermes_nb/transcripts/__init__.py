"""Load recorded agent transcripts, whatever agent wrote them, as OpenAI chat messages.

The replay (SPEC section 5) measures every message exactly as given, so a file that is
already a list of OpenAI chat-completions messages is only validated, never rewritten:
same dicts, same key order. Other shapes real agents leave behind are converted to that
form: JSONL, legacy OpenAI ``function_call``, Anthropic content blocks, mini-swe-agent
``.traj.json``, SWE-agent ``.traj``, OpenHands V1 SDK events and LangChain/LangGraph
dumps. The format is detected from the content, never from the file name.

A malformed file raises ``TranscriptError``: one line naming the file and where it broke
(``line 7``, ``byte 12``, ``message 3: tool_calls[0]``). Message and event indices are
0-based list indices, as ``check_history`` reports them; lines are 1-based. Problems of
the history itself (orphan tool results, unanswered calls, reused ids) are not this
package's business: real logs have them, and ``check_history`` reports them.

Layout: ``reading`` (bytes to JSON, serde_json's rules), ``base`` (the error, the
result type, the field checks), one module per format family (``openai`` with the
legacy form, ``anthropic``, ``swe_agent`` for mini-swe-agent and SWE-agent,
``openhands``, ``langchain``), ``agentlogs`` (the logs coding agents write to disk:
Claude Code, Codex CLI, Gemini CLI, Copilot CLI, any-agent; read leniently, with the
requests, usage and compactions they report, see docs/agentlogs.md), ``loader``
(detection and the entry points) and ``session`` (``Session``: a transcript as the engine
takes it, a frozen value with every field typed).
"""

from .base import OPENAI_ROLES, TEXT_JOINER, AgentRequest, ReportedUsage, ToolCompaction, Transcript, TranscriptError
from .loader import (
    FORMATS,
    SKIPPED_NAMES,
    TRANSCRIPT_SUFFIXES,
    iter_transcript_paths,
    load_transcript,
    load_transcripts,
)
from .session import Session, SessionLike

__all__ = [
    "Transcript",
    "Session",
    "SessionLike",
    "AgentRequest",
    "ReportedUsage",
    "ToolCompaction",
    "TranscriptError",
    "load_transcript",
    "load_transcripts",
    "iter_transcript_paths",
    "FORMATS",
    "OPENAI_ROLES",
    "TRANSCRIPT_SUFFIXES",
    "SKIPPED_NAMES",
    "TEXT_JOINER",
]
