"""The cyclic garbage collector, paused around work that allocates much and makes no cycles."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["paused"]


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """No cyclic collection inside the block (reference counting frees as ever); the collector
    is left as found (one already off stays off). For work that allocates many objects without
    reference cycles -- composing a large suite, an import -- where the collections it would
    trigger walk the whole heap again and again and find nothing."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
