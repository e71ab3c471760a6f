"""Keep the course notebooks as committed: no outputs, counts, timings, widget state or kernel details.

Two guards, both set up by ``make lab``:

- :func:`pre_save`, JupyterLab's pre-save hook (``--ContentsManager.pre_save_hook``): the notebook is
  cleaned before it is written, so the file on disk stays byte-identical to the committed one unless a
  cell itself changed, and ``git status`` stays clean. (Outputs live on in the open page, not on disk.)
- ``python -m nanohermes_nb.course.strip``, a git clean filter (``git config filter.nbstrip.clean``,
  applied to ``notebooks/*.ipynb`` by ``.gitattributes``) for a notebook saved by anything else: its
  outputs never reach git (``git diff`` is empty; ``git status`` may list the file until ``git add``,
  because git sees its size changed before it runs the filter). Reads stdin, writes the clean notebook.
"""

from __future__ import annotations

import json
import sys
from typing import Any

__all__ = ["clean", "pre_save", "main"]

KERNELSPEC = {"display_name": "Python 3", "language": "python", "name": "python3"}
_CELL_KEYS_DROPPED = ("execution", "scrolled", "collapsed", "trusted")


def clean(notebook: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``notebook`` (nbformat 4 JSON) without outputs, counts, timings and kernel details."""
    nb = json.loads(json.dumps(notebook))
    meta = nb.setdefault("metadata", {})
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
        model["content"] = nbformat.from_dict(clean(model["content"]))


def main() -> int:
    import nbformat

    text = sys.stdin.read()
    try:
        nb = json.loads(text)
    except json.JSONDecodeError:  # not a notebook git should change: pass it through untouched
        sys.stdout.write(text)
        return 0
    sys.stdout.write(nbformat.writes(nbformat.from_dict(clean(nb))) + "\n")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
