"""Hostile sizes (issue 34): one tool result of tens of megabytes without spaces must not take gigabytes.

``ledger`` on a Claude Code log holding one 100 MB base64 tool result passed 2 GB (measured: 1.95 GB,
30 MB: 668 MB): counting its tokens built a Python list of every token (about 36 bytes each) to take its
length. The count is now taken a chunk at a time, cut only where both BPE pre-tokenizers always split, so
it stays exact (the differential tests here) and holds one chunk's tokens at a time (the spy encoder).
"""

from __future__ import annotations

import base64
import json
import random
from pathlib import Path

import pytest
from hostile_limits import isolated

from nanohermes_nb.context import sizing
from nanohermes_nb.context.sizing import _bpe_count, _encoding, count_tokens

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parents[1]
CLAUDE_LOG = ROOT / "data" / "agentlogs" / "claude-code" / "entire-cli_opus45_small_5d755497c182.jsonl"
PIECES = list("abcXYZ0123456789 \n\n\t/+=-_.,'\"é東😀\r[](){}:;!?`~@#$%^&*<>|\\") + \
    ["'s", "'ll", "'S", "  ", "\n/", "\nA", "12345", "\u0663", "\u00b2", "e\u0301", "中文", "上下文", "，", "。",
     "「", "」", "、", "\u3000", "\u3005", "\u3007", "！", "：", "１２", "\uff07", "\u2019s", "İ", "ǅ", "ß"]


@pytest.mark.parametrize("unit", ["cl100k", "o200k"])
def test_a_count_by_chunks_equals_the_whole_count(unit):
    enc = _encoding(unit)
    rnd = random.Random(34)
    for _ in range(400):
        text = "".join(rnd.choice(PIECES) for _ in range(rnd.randint(0, 80)))
        whole = len(enc.encode_ordinary(text))
        assert [_bpe_count(enc, text, chunk) for chunk in (1, 2, 5, 17)] == [whole] * 4, repr(text)


def test_base64_is_counted_exactly_and_a_chunk_at_a_time():
    text = base64.b64encode(random.Random(1).randbytes(300_000)).decode()
    enc = _encoding("cl100k")
    seen: list[int] = []

    class Spy:
        def encode_ordinary(self, piece: str) -> list[int]:
            seen.append(len(piece))
            return enc.encode_ordinary(piece)

    assert _bpe_count(Spy(), text, 4096) == len(enc.encode_ordinary(text))
    assert len(seen) > 50 and max(seen) < 4096 + 64  # a cut comes within a few characters in base64


def test_a_text_with_no_place_to_cut_is_counted_whole():
    text = "a" * 5000  # one pre-token: cutting it would change the count, so it is not cut
    assert _bpe_count(_encoding("o200k"), text, 100) == count_tokens(text, "o200k")


def _log_with_blob(folder: Path, size: int) -> Path:
    """The vendored Claude Code log with its first tool result replaced by ``size`` characters of base64."""
    blob = base64.b64encode(random.Random(2).randbytes(size * 3 // 4)).decode()
    out, done = [], False
    for line in CLAUDE_LOG.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        content = (record.get("message") or {}).get("content")
        for part in content if isinstance(content, list) and not done else []:
            if isinstance(part, dict) and part.get("type") == "tool_result":
                part["content"], done = blob, True
                break
        out.append(json.dumps(record))
    assert done
    path = folder / "blob.jsonl"
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


@pytest.mark.slow
def test_ledger_on_a_20_mb_base64_tool_result_stays_within_300_mb(tmp_path):
    path = _log_with_blob(tmp_path, 20_000_000)

    def run() -> int:
        import contextlib
        import io

        from nanohermes_nb.cli import main

        with contextlib.redirect_stdout(io.StringIO()):
            return main(["ledger", str(path)])

    outcome = isolated(run, timeout=110, memory_mb=1500)
    assert outcome.value == 0 and not outcome.hung, outcome
    assert outcome.peak_mb < 300, outcome  # before: 500 MB and more (30 MB took 668 MB)
    assert sizing.COUNT_CHUNK <= 1 << 20
