"""The needed-later identifiers, read faster (issue 33's speed), are the same identifiers on every real text.

``context/needed.py`` writes its patterns so that the regex engine can skip ahead (a pattern starts with
the character it matches, then looks behind it), and caches a policy's written messages by their text.
Here the original patterns, kept verbatim as the reference, read every text of every corpus (transcripts
and agent logs, vendored and ``../shared``) and must find exactly what the package finds.
"""

from __future__ import annotations

import re
import sys

import pytest
from agentlog_files import agent_logs
from corpus import corpus_files

from nanohermes_nb.context import needed
from nanohermes_nb.context.messages import calls_of, text_of
from nanohermes_nb.context.summarizers import find_paths
from nanohermes_nb.transcripts import TranscriptError, load_transcript

# the patterns as they were written first (plain look-behinds and \b), the reference
_CALL = re.compile(r"(?<![\w.$])((?:[A-Za-z_][A-Za-z0-9_]*\.)*[A-Za-z_][A-Za-z0-9_]*)\(")
_DEF = re.compile(r"\b(?:def|class|function|fn|func)\s+([A-Za-z_][A-Za-z0-9_]*)")
_TEST = re.compile(r"(?<![\w/.-])(test_[A-Za-z0-9_]+|Test[A-Z0-9_][A-Za-z0-9_]*)\b(?![./])")
_ERROR = re.compile(r"\b([A-Z][A-Za-z0-9]*(?:Error|Exception|Warning)|" + needed._ERRNO + r"|[A-Z]{1,4}\d{3,5})\b")
_HEX = re.compile(r"(?<![\w-])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![\w-])")
_UUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
_ISSUE = re.compile(r"(?<![\w&#])#(\d{2,7})\b")


def reference(text: str) -> frozenset:
    """``needed.identifiers`` with the reference patterns (the module docstring's rules, as first written)."""
    if not text:
        return frozenset()
    found: set[str] = set(find_paths(text))
    found.update(u.rstrip(".,;:!?") for u in needed._URL.findall(text))
    for m in _CALL.finditer(text):
        name = needed._RECEIVER.sub("", m.group(1))
        last = name.rsplit(".", 1)[-1]
        if len(last) >= 3 and name not in needed._COMMON_CALLS and last not in needed._COMMON_CALLS:
            found.add(name)
    found.update(n for n in _DEF.findall(text) if n.lower() not in needed._PROSE)
    found.update(_TEST.findall(text))
    found.update(needed._NODE.findall(text))
    found.update(_ERROR.findall(text))
    found.update(_HEX.findall(text))
    found.update(u.lower() for u in _UUID.findall(text))
    found.update("#" + n for n in _ISSUE.findall(text))
    return frozenset(sys.intern(s) for s in found if s)


def _texts(paths) -> list[str]:
    out = []
    for p in paths:
        try:
            messages = load_transcript(p)
        except (TranscriptError, OSError):
            continue
        for m in messages:
            out.append(text_of(m))
            for c in calls_of(m):
                fn = c.get("function") if isinstance(c, dict) else None
                if isinstance(fn, dict):
                    out.append(str(fn.get("arguments", "")))
    return out


EDGES = ["abc1234", "-abc1234", "abc1234-", "xabc1234", "1234567", "abcdefa", "a" * 41 + "1", "deadbeef00 ok",
         "#12 #1 &#123; a#12 ##12 #12345678", "ENOENT EACCESS xENOENT E501 TS2345 ABCDE123 ValueError aValueError",
         "test_x Test1 TestA Testa /test_x .test_x test_x.py test_x/ my_test_x", "def f class C fn g func h "
         "undef x functionx y", "123e4567-e89b-12d3-a456-426614174000 x123e4567-e89b-12d3-a456-426614174000",
         "ébc1234 éENOENT étest_x édef f é#12", "", "a", "#", "E", "t", "d"]


def test_the_fast_patterns_find_what_the_plain_ones_find_on_edge_cases():
    for text in EDGES:
        assert needed.identifiers(text) == reference(text), text


def test_the_fast_patterns_find_what_the_plain_ones_find_on_the_vendored_corpus():
    vendored = [p for p in corpus_files() if "data" in p.parts] + [p for p in agent_logs() if "data" in p.parts]
    texts = _texts(vendored)
    assert len(texts) > 500
    assert [needed.identifiers(t) for t in texts] == [reference(t) for t in texts]


@pytest.mark.slow
def test_the_fast_patterns_find_what_the_plain_ones_find_on_every_corpus():
    texts = _texts(corpus_files() + agent_logs(("claude-code", "codex", "gemini-cli", "copilot-cli", "otel-genai")))
    different = [t[:80] for t in texts if needed.identifiers(t) != reference(t)]
    assert not different, different[:3]


def test_a_written_message_is_read_once_per_text():
    index = needed.IdentifierIndex([{"role": "user", "content": "see src/app.py"}])
    a = {"role": "tool", "tool_call_id": "1", "content": "[cleared] src/app.py"}
    b = dict(a)  # a new object with the same text, as each setting of a sweep writes it
    assert index.of(a) is index.of(b) == frozenset({"src/app.py"})
