"""Kubernetes' $(VAR) expansion, case by case as the kubelet applies it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trainjobs.local.expansion import expand, lookup_in

ENV = {"VAR_A": "A", "VAR_B": "B", "EMPTY": ""}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("$(VAR_A)", "A"),
        ("___$(VAR_B)___", "___B___"),
        ("$(VAR_A)-$(VAR_B)", "A-B"),
        ("$(EMPTY)x", "x"),
        ("$(UNDEFINED)", "$(UNDEFINED)"),  # left as written
        ("$$(VAR_A)", "$(VAR_A)"),  # escaped
        ("$$$(VAR_A)", "$A"),
        ("$$", "$"),
        ("$x", "$x"),  # a lone operator is kept with what follows
        ("trailing $", "trailing $"),
        ("$(VAR_A", "$(VAR_A"),  # unterminated
        ("$()", "$()"),  # the empty name is undefined
        ("no dollar", "no dollar"),
    ],
)
def test_kubelet_expansion(text: str, expected: str) -> None:
    assert expand(text, lookup_in(ENV)) == expected


@given(st.text(alphabet=st.characters(blacklist_characters="$")))
def test_text_without_a_dollar_is_unchanged(text: str) -> None:
    assert expand(text, lookup_in(ENV)) == text


@given(st.text())
def test_doubling_every_dollar_escapes_the_text(text: str) -> None:
    assert expand(text.replace("$", "$$"), lookup_in(ENV)) == text
