"""Keep the course notebooks as committed: no outputs, counts, timings, widget state or kernel details.

Two guards, both set up by ``make lab``:

- :func:`pre_save`, JupyterLab's pre-save hook (``--ContentsManager.pre_save_hook``): the notebook is
  cleaned before it is written, so the file on disk stays byte-identical to the committed one unless a
  cell itself changed, and ``git status`` stays clean. (Outputs live on in the open page, not on disk.)
- ``python -m nanohermes_nb.course.strip``, a git clean filter (``git config filter.nbstrip.clean``,
  applied to ``notebooks/*.ipynb`` by ``.gitattributes``) for a notebook saved by anything else: its
  outputs never reach git (``git diff`` is empty; ``git status`` may list the file until ``git add``,
  because git sees its size changed before it runs the filter). Reads stdin, writes the clean notebook.
  A clean filter must never lose what it is given: anything it does not understand (bytes that are
  not UTF-8, JSON that is not a notebook, malformed cells, nesting too deep to parse) goes through
  byte for byte, and it never fails.
"""

from __future__ import annotations

import json
import sys
from typing import Any

__all__ = ["clean", "cleaned", "pre_save", "main", "NotANotebook"]

KERNELSPEC = {"display_name": "Python 3", "language": "python", "name": "python3"}
_CELL_KEYS_DROPPED = ("execution", "scrolled", "collapsed", "trusted")


class NotANotebook(ValueError):
    """What the clean filter passes through untouched: not an nbformat 4 notebook it can clean."""


def clean(notebook: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``notebook`` (nbformat 4 JSON) without outputs, counts, timings and kernel details.

    ``NotANotebook`` when it is not one: not an object, cells that are not a list of objects, metadata
    that is not an object.
    """
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells", []), list):
        raise NotANotebook("not an nbformat 4 notebook")
    nb = json.loads(json.dumps(notebook))
    meta = nb.setdefault("metadata", {})
    if not isinstance(meta, dict) or any(not isinstance(c, dict) or not isinstance(c.get("metadata", {}), dict)
                                         for c in nb.get("cells", [])):
        raise NotANotebook("malformed metadata or cells")
    meta.pop("widgets", None)
    if "kernelspec" in meta:
        meta["kernelspec"] = dict(KERNELSPEC)
    if "language_info" in meta:
        meta["language_info"] = {"name": "python"}
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
        cmeta = cell.get("metadata", {})
        for key in _CELL_KEYS_DROPPED:
            cmeta.pop(key, None)
        if isinstance(cmeta.get("jupyter"), dict):
            cmeta["jupyter"].pop("outputs_hidden", None)
            if not cmeta["jupyter"]:
                del cmeta["jupyter"]
    return nb


def pre_save(model: dict[str, Any], **_: Any) -> None:
    """JupyterLab's pre-save hook: clean a notebook model in place before the server writes it."""
    import nbformat

    if model.get("type") == "notebook" and isinstance(model.get("content"), dict):
        try:
            model["content"] = nbformat.from_dict(clean(model["content"]))
        except NotANotebook:  # saved as it is: a save never fails for the filter's sake
            pass


def cleaned(raw: bytes) -> bytes:
    """The clean notebook for the bytes of one, or the very same bytes when they are anything else."""
    import nbformat

    try:
        nb = json.loads(raw.decode("utf-8"))
        if not isinstance(nb, dict) or nb.get("nbformat") != 4:
            return raw
        return (nbformat.writes(nbformat.from_dict(clean(nb))) + "\n").encode("utf-8")
    except (ValueError, RecursionError, TypeError, AttributeError, KeyError):  # NotANotebook, bad JSON or UTF-8
        return raw
    except Exception:  # whatever nbformat raises on a notebook it cannot write: git keeps the file as it is
        return raw


def main() -> int:
    """The git clean filter: stdin's bytes to stdout, cleaned when they are a notebook; never fails."""
    raw = sys.stdin.buffer.read()
    sys.stdout.buffer.write(cleaned(raw))
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
