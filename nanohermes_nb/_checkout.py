"""The repository the package runs from, when it runs from one; from a wheel, what needs it says so in one line.

Everything the package reads at run time ships inside it (``nanohermes_nb/resources``). A few tools
work on the repository itself, not on a user's logs: the course build and the translation tool
(``notebooks/``, ``docs/``, ``data/``), the peers' agreement table over the vendored transcripts, the
local model's summaries of them, and ``make local-model``'s ``.cache/``. Installed from a wheel there
is no repository: ``require_checkout`` then raises ``NeedsCheckout`` with one line saying where to get
one, instead of a ``FileNotFoundError`` on a path inside ``site-packages``.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["checkout_root", "require_checkout", "missing_checkout", "NeedsCheckout"]

_ROOT = Path(__file__).resolve().parent.parent
_MARKERS = ("pyproject.toml", "notebooks", "data", "nanohermes_nb")


class NeedsCheckout(RuntimeError):
    """A tool that works on the repository was run from an installed wheel (one line)."""


def checkout_root() -> Path | None:
    """The repository's folder when the package is imported from a checkout (or an unpacked sdist), else None."""
    return _ROOT if all((_ROOT / marker).exists() for marker in _MARKERS) else None


def require_checkout(what: str) -> Path:
    """The repository's folder, or ``NeedsCheckout`` naming ``what`` needs it and how to get one."""
    root = checkout_root()
    if root is None:
        raise NeedsCheckout(f"{what} works on a checkout of nanohermes_nb (its notebooks/, docs/ and data/), and "
                            f"this one is installed from a wheel ({_ROOT}): clone the repository, or unpack the "
                            "sdist, and run it there")
    return root


def missing_checkout(what: str) -> str | None:
    """None in a checkout; from a wheel, the one line a command prints before it exits 2."""
    try:
        require_checkout(what)
    except NeedsCheckout as exc:
        return f"{what}: {exc}"
    return None
