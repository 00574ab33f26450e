"""Secret values in a preview: compared by a keyed fingerprint, never shown.

Before two sides are compared, every value of a v1 Secret's ``data`` and
``stringData`` becomes ``<redacted:XXXXXXXXXXXX>``, an HMAC-SHA256 of the
value under a key that never leaves this machine (a random key per run, or
the store's own key so a stored render compares with the next one). Equal
values give equal fingerprints, so a changed secret shows as changed; the
value cannot be read back from the text, and a short password cannot be
guessed from it without the key.

Values that are not secret pass through: ``<redacted>`` (a render made
without ``--show-secrets``: nothing to compare) and ``<generated:…>``
placeholders (the value is made at apply time, see ``k8s.generated``).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
from collections.abc import Callable, Mapping
from typing import Any

from trainjobs.k8s import generated
from trainjobs.k8s.redact import REDACTED, is_secret_kind, map_secrets

__all__ = [
    "FINGERPRINT_PREFIX",
    "SecretNumbers",
    "fingerprint",
    "is_secret",
    "mask_secrets",
    "secret_bytes",
]

FINGERPRINT_PREFIX = "<redacted:"


def is_secret(manifest: Mapping[str, Any]) -> bool:
    """True for a Secret, even a malformed one (its values are secret all the same)."""
    return is_secret_kind(manifest)


def _opaque(value: Any) -> bool:
    return (
        not isinstance(value, str)
        or value == REDACTED
        or value.startswith(FINGERPRINT_PREFIX)
        or generated.parse(value) is not None
    )


def fingerprint(value: bytes, key: bytes) -> str:
    """``<redacted:…>``: 12 hex digits of HMAC-SHA256(key, value)."""
    return f"{FINGERPRINT_PREFIX}{hmac.new(key, value, hashlib.sha256).hexdigest()[:12]}>"


def secret_bytes(field: str, value: str) -> bytes:
    """The bytes a Secret value stands for: ``data`` is base64, ``stringData`` plain text."""
    if field == "data":
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            return value.encode()
    return value.encode()


def mask_secrets(manifest: Mapping[str, Any], key: bytes) -> dict[str, Any]:
    """A copy of ``manifest`` with each secret value replaced by its fingerprint.

    Secret values are found by structure (:mod:`trainjobs.k8s.redact`): a Secret's
    ``data`` and ``stringData`` — also of a malformed Secret, whose numbers, lists or
    strings are fingerprinted whole — the literal value of an env var with a secret's
    name, and the value of a password option in ``command``/``args``. A ``data``
    value and a ``stringData`` value for the same bytes get the same fingerprint, so
    a render's ``stringData`` compares with a cluster's ``data``.
    """

    return map_secrets(manifest, _hider(lambda value: fingerprint(value, key)))


def _hider(name: Callable[[bytes], str]) -> Callable[[str, Any], Any]:
    """A ``hide`` for :func:`map_secrets` that puts ``name(the value's bytes)`` in its place."""

    def hide(field: str, value: Any) -> Any:
        if isinstance(value, str):
            return value if _opaque(value) else name(secret_bytes(field, value))
        # Not what a Secret may hold, but still what the user wrote as a secret.
        return name(json.dumps(value, sort_keys=True, default=str).encode())

    return hide


class SecretNumbers:
    """Stand-ins for secret values that read the same on every run: ``<redacted:#1>``,
    ``<redacted:#2>`` … numbered in the order the values are first met.

    For a comparison made and shown at once (``trainjobs diff``), where no stored
    render needs a fingerprint to match: a fingerprint under a fresh random key would
    print other text on each run of the same diff, and CI snapshot-tests that output.
    Equal values get equal numbers, so a changed secret still shows as changed; the
    number says nothing about the value.
    """

    def __init__(self) -> None:
        self._key = os.urandom(32)
        self._numbers: dict[str, str] = {}

    def name(self, value: bytes) -> str:
        """The stand-in for ``value``: its number, given on first sight."""
        digest = fingerprint(value, self._key)
        if digest not in self._numbers:
            self._numbers[digest] = f"{FINGERPRINT_PREFIX}#{len(self._numbers) + 1}>"
        return self._numbers[digest]

    def mask(self, manifest: Mapping[str, Any]) -> dict[str, Any]:
        """A copy of ``manifest`` with each secret value (as :func:`mask_secrets` finds them)
        replaced by its number."""
        return map_secrets(manifest, _hider(self.name))
