"""The course: ``build`` executes the notebooks into ``build/course/``; ``map`` is the
course map (which notebook teaches what). ``python -m nanohermes_nb.course`` builds it."""

from .._lazy import submodule as _submodule


def __getattr__(name: str):
    return _submodule(__name__, name)
