"""Work a render would otherwise repeat, remembered for as long as the render runs.

A render defaults and plans every job before it expands any (the stack-wide pod
guard), then validates and expands each: a framework whose plan is costly to derive
(a TrainJob's JobSet) is asked for the same thing several times, far apart. Inside
``render_scope()`` such work is computed once per key; outside one it is computed at
each call. The memo ends with the outermost scope, so nothing outlives the render
that made it, and every caller gets its own copy of what is returned.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = ["Identity", "remembered", "render_scope"]

T = TypeVar("T")

_MEMO: ContextVar[dict[Hashable, Any] | None] = ContextVar("trainjobs_render_memo", default=None)


@contextmanager
def render_scope() -> Iterator[None]:
    """Remember ``remembered`` work until the outermost scope ends (scopes nest)."""
    if _MEMO.get() is not None:
        yield
        return
    token = _MEMO.set({})
    try:
        yield
    finally:
        _MEMO.reset(token)


def remembered(key: Hashable, compute: Callable[[], T]) -> T:
    """``compute()``, once per ``key`` within a render scope; every call outside one."""
    memo = _MEMO.get()
    if memo is None:
        return compute()
    if key not in memo:
        memo[key] = compute()
    value: T = memo[key]
    return value


@dataclass(frozen=True, eq=False)
class Identity:
    """A key part equal only to the very same object (a model with dict fields has no
    hash of its own); the memo holds it, so its id is not reused while it is there."""

    value: Any

    def __hash__(self) -> int:
        return id(self.value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Identity) and other.value is self.value
