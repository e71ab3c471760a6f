"""HTML tables of messages tell MathJax to leave them alone: "$5 and $10" is money, not math.

Jupyter and nbconvert's HTML run MathJax over the page; without ``tex2jax_ignore``
(MathJax 2) and ``mathjax_ignore`` (MathJax 3) on an enclosing element, the text
between two dollar signs in a message preview is typeset as a formula. Every piece
of text with a dollar sign in every HTML table must sit inside such an element.
"""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from builders import session

from nanohermes_nb import compact
from nanohermes_nb.context import display
from nanohermes_nb.views import compaction_table, message_table
from nanohermes_nb.views.tables import message_frame, style_frame

MONEY = "It costs $5 and $10; in LaTeX $x^2$ and $$y$$"


class _Dollars(HTMLParser):
    """Every text chunk with a '$', and whether an enclosing element skips math."""

    VOID = frozenset({"br", "img", "hr", "meta", "input", "col", "link"})

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[set[str]] = []
        self.found: list[tuple[str, bool]] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag not in self.VOID:
            self.stack.append(set((dict(attrs).get("class") or "").split()))

    def handle_endtag(self, tag: str) -> None:
        if tag not in self.VOID and self.stack:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        if "$" in data:
            skipped = any({"tex2jax_ignore", "mathjax_ignore"} <= classes for classes in self.stack)
            self.found.append((data, skipped))


def _dollars(markup: str) -> list[tuple[str, bool]]:
    parser = _Dollars()
    parser.feed(markup)
    return parser.found


def _messages() -> list[dict]:
    msgs = session(8)
    return msgs[:2] + [{"role": "user", "content": MONEY}] + msgs[2:]


def _tables() -> dict[str, str]:
    msgs = _messages()
    result = compact(msgs, force=True, keep_recent=3)
    return {
        "message_table": message_table(msgs).to_html(),
        "compaction_table": compaction_table(result).to_html(),
        "style_frame": style_frame(message_frame(msgs), caption="costs $5 and $10").to_html(),
        "display.html_table": display.html_table(display.message_rows(msgs)),
        "display.compaction_html": display.compaction_html(result),
        "CompactionResult._repr_html_": result._repr_html_(),
    }


@pytest.mark.parametrize("name", list(_tables()))
def test_text_with_dollars_sits_inside_an_element_mathjax_skips(name: str) -> None:
    found = _dollars(_tables()[name])
    assert found, f"{name}: the dollar text is not in the table at all"
    assert any("$5 and $10" in text for text, _ in found)
    assert all(skipped for _, skipped in found), [text for text, skipped in found if not skipped]


def test_the_check_itself_sees_an_unprotected_table() -> None:
    assert _dollars(f"<table><tr><td>{MONEY}</td></tr></table>") == [(MONEY, False)]
    assert _dollars(f'<table class="{display.NO_MATH}"><tr><td>{MONEY}</td></tr></table>') == [(MONEY, True)]
