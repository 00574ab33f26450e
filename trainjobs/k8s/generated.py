"""Values generated at apply time — SSH key pairs, passwords — never at render time.

A render must be deterministic and must never hold a secret, so a manifest
carries a *placeholder* where such a value goes. The Pulumi components replace
each placeholder with a value generated once per stack and held as a Pulumi
secret. Placeholders that share a ``group`` belong together (the private and
public half of one key pair).

Format: ``<generated:KIND:GROUP>``, e.g. ``<generated:ecdsa-p521-private:training/pi-ssh>``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["KINDS", "Generated", "parse", "placeholder"]

KINDS = ("ecdsa-p521-private", "ecdsa-p521-public", "password")
"""What can be generated: the two halves of an ECDSA P-521 key pair, and a password."""

_PATTERN = re.compile(r"^<generated:([a-z0-9-]+):([^>]+)>$")


@dataclass(frozen=True)
class Generated:
    """A parsed placeholder: what to generate, and which values belong together."""

    kind: str
    group: str


def placeholder(kind: str, group: str) -> str:
    """The placeholder text for a value of ``kind`` in ``group``."""
    if kind not in KINDS:
        raise ValueError(f"cannot generate {kind!r}; one of {', '.join(KINDS)}")
    return f"<generated:{kind}:{group}>"


def parse(value: object) -> Generated | None:
    """The placeholder in ``value``, or None when it is an ordinary value."""
    if not isinstance(value, str):
        return None
    match = _PATTERN.match(value)
    if not match or match.group(1) not in KINDS:
        return None
    return Generated(match.group(1), match.group(2))
