"""Plain paths of the corpora (for tests that loop over transcripts themselves, e.g. the peer differentials)."""

from pathlib import Path

from conftest import CORPORA, VENDORED  # noqa: F401  (VENDORED: re-exported for the peer tests)

# whether CI's extended corpus is present: corpus-wide counts scale with it (a user's clone has the vendored 4)
EXTENDED = any(c.name == "extended" for c in CORPORA)


def corpus_files() -> list[Path]:
    """Vendored files first, then the extended corpus's files not already vendored (by name)."""
    seen: set[str] = set()
    out: list[Path] = []
    for corpus in CORPORA:
        for p in corpus.files:
            if p.name not in seen:
                seen.add(p.name)
                out.append(p)
    return out
