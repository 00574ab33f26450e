"""The render-long memo: work is remembered inside a scope, never outside or after it."""

from __future__ import annotations

from collections.abc import Callable

from trainjobs.plan.memo import Identity, remembered, render_scope


def _counter() -> tuple[list[int], Callable[[], int]]:
    calls: list[int] = []

    def compute() -> int:
        calls.append(1)
        return len(calls)

    return calls, compute


def test_outside_a_scope_every_call_computes() -> None:
    calls, compute = _counter()
    assert [remembered("k", compute) for _ in range(3)] == [1, 2, 3]
    assert len(calls) == 3


def test_inside_a_scope_each_key_computes_once_and_nested_scopes_share_it() -> None:
    calls, compute = _counter()
    with render_scope():
        first = remembered("k", compute)
        with render_scope():
            assert remembered("k", compute) == first
        # The inner scope's end does not end the outer one's memo.
        assert remembered("k", compute) == first
        assert remembered("other", compute) == 2
    assert len(calls) == 2


def test_the_memo_ends_with_the_scope() -> None:
    calls, compute = _counter()
    with render_scope():
        remembered("k", compute)
    with render_scope():
        remembered("k", compute)
    assert len(calls) == 2


def test_an_identity_is_equal_only_to_the_same_object() -> None:
    a, b = {"x": 1}, {"x": 1}
    assert Identity(a) == Identity(a) and hash(Identity(a)) == hash(Identity(a))
    assert Identity(a) != Identity(b)
