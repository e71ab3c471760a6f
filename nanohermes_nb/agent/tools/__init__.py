"""The agent's tools: ``toolbox`` (running them), ``specs`` (their schemas and caps),
``processes`` (subprocesses that cannot escape) and ``web`` (fetching and reading pages)."""

from ..._lazy import submodule as _submodule


def __getattr__(name: str):
    return _submodule(__name__, name)
