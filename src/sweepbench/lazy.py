"""Packages whose public names are imported on first use (PEP 562): importing one small module
of the package does not import all of them."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``: each name of ``exports`` (name →
    the module defining it) is imported the first time it is asked for, then kept in the
    package's namespace."""
    namespace = sys.modules[package].__dict__

    def load(name: str) -> object:
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(exports[name]), name)
        namespace[name] = value
        return value

    def listing() -> list[str]:
        return sorted({*namespace, *exports})

    return load, listing
