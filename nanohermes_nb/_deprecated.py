"""Old names kept for one minor version with a warning, so that code written for 0.2 says what to write instead."""

from __future__ import annotations

import warnings
from typing import Any

__all__ = ["renamed"]


def renamed(owner: object, old: str, new: str, since: str = "0.3.0") -> Any:
    """``owner.<new>``, read through its old name ``<old>`` with a ``DeprecationWarning`` naming the new one.

    Used by a property that keeps an old name working (``Totals.requests`` -> ``Totals.n_requests``);
    the warning points at the caller's line.
    """
    kind = type(owner).__name__
    warnings.warn(f"{kind}.{old} is deprecated since {since}; use {kind}.{new}", DeprecationWarning, stacklevel=3)
    return getattr(owner, new)
