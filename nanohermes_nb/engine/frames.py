"""Tables of text from real logs, built so that any text fits.

Since pandas 3, string columns are stored in Arrow when pyarrow is installed,
and Arrow rejects strings that are not valid Unicode, such as the lone
surrogates real agent logs sometimes carry. ``frame`` builds a DataFrame whose
text columns keep Python strings (pandas' ``str`` dtype with Python storage),
so a hostile log can be tabulated and shown like any other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["frame"]


def frame(rows: Sequence[Mapping[str, Any]] | Mapping[str, Sequence[Any]], columns: Sequence[str] | None = None):
    """A DataFrame from row dicts or a column dict; text columns use Python string storage."""
    import numpy as np
    import pandas as pd

    if isinstance(rows, Mapping):  # a column that is already an array (e.g. pandas' nullable Int64) keeps its dtype
        data = {c: v if hasattr(v, "dtype") else list(v) for c, v in rows.items()}
        names = list(columns) if columns is not None else list(data)
    else:
        names = list(columns) if columns is not None else list(dict.fromkeys(k for r in rows for k in r))
        data = {c: [r.get(c) for r in rows] for c in names}
    text = pd.StringDtype("python", na_value=np.nan)
    series = {}
    for c in names:
        values = data.get(c, [])
        dtype = None
        if not isinstance(values, list):
            series[c] = pd.Series(values)
            continue
        if any(isinstance(v, str) for v in values):
            dtype = text if all(v is None or isinstance(v, str) for v in values) else object
        series[c] = pd.Series(values, dtype=dtype)
    return pd.DataFrame(series, columns=names)
