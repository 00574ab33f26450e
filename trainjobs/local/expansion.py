"""Kubernetes' ``$(VAR)`` expansion, as the kubelet applies it to env, command and args.

Rules (Kubernetes' ``third_party/forked/golang/expansion``): ``$(NAME)`` is
replaced by the variable's value when it is defined, and left as written when it
is not; ``$$`` is an escaped ``$``; any other ``$`` is kept as it is. In an env
value only variables defined *earlier* in the list are visible; command and args
see the whole env.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

__all__ = ["expand", "lookup_in"]


def lookup_in(env: Mapping[str, str]) -> Callable[[str], str]:
    """A lookup that leaves undefined references as written, as the kubelet does."""

    def lookup(name: str) -> str:
        return env.get(name, f"$({name})")

    return lookup


def expand(text: str, lookup: Callable[[str], str]) -> str:
    """``text`` with every ``$(NAME)`` replaced by ``lookup(NAME)`` and ``$$`` by ``$``."""
    if "$" not in text:
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char != "$" or i + 1 == len(text):
            out.append(char)
            i += 1
            continue
        following = text[i + 1]
        if following == "$":
            out.append("$")
            i += 2
        elif following == "(":
            close = text.find(")", i + 2)
            if close < 0:  # an unterminated reference stays as written
                out.append("$(")
                i += 2
            else:
                out.append(lookup(text[i + 2 : close]))
                i = close + 1
        else:
            out.append("$" + following)
            i += 2
    return "".join(out)
