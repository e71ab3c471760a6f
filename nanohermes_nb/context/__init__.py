"""The context layer, as the article states it: what one request holds and how it is kept small.

``budgets`` (the caps), ``messages`` and ``sizing`` (what a message is and how big),
``clamp`` (the 20,000-byte cut of a tool result), ``compaction`` (trigger, cut, excerpt,
summary or placeholder), ``summarizers``, ``history`` (what a provider accepts),
``metrics`` and ``needed`` (what a compaction kept). Nothing here talks to the network.
"""

from .._lazy import submodule as _submodule


def __getattr__(name: str):
    return _submodule(__name__, name)
