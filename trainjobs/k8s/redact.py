"""Keep secret values out of everything trainjobs prints or writes."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

__all__ = ["REDACTED", "redact"]

REDACTED = "<redacted>"
"""What a secret value is replaced by; ``render --show-secrets`` prints the real value."""


def redact(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``manifest`` with every Secret value replaced by ``REDACTED``."""
    out = copy.deepcopy(dict(manifest))
    if out.get("kind") == "Secret" and out.get("apiVersion") == "v1":
        for key in ("data", "stringData"):
            if isinstance(out.get(key), dict):
                out[key] = {k: REDACTED for k in out[key]}
    return out
