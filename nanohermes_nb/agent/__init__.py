"""The live agent: the loop, the model it talks to, and what it puts in front of the model.

``loop`` (the article's agent loop, run live), ``models`` and ``transport`` (an
OpenAI-compatible endpoint, safely), ``prompt`` (the system message and project docs),
``skills``, ``memory`` (the 2,400-character memory block) and ``tools/`` (the tools and
the caps where their output is produced).
"""

from .._lazy import submodule as _submodule


def __getattr__(name: str):
    return _submodule(__name__, name)
