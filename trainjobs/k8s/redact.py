"""Keep secret values out of everything trainjobs prints or writes.

Secrets are found by where they sit, not by what they look like:

* every value of a ``Secret``'s ``data`` and ``stringData`` — also of a malformed one
  (no or another ``apiVersion``, a list or a string where a map belongs, a number as a
  value): a broken Secret still holds a real password;
* the literal ``value`` of a container env var whose name says it is secret
  (:func:`secret_env_name`: ``auth``, ``requirepass``, ``*_PASSWORD``, ``*_TOKEN``,
  ``*_SECRET``, ``*_KEY`` …); a ``valueFrom.secretKeyRef`` holds no value and stays;
* the word after a password option in a container's ``command`` or ``args``
  (``--requirepass X``, ``--password=X``; :data:`SECRET_OPTIONS`).

In env vars and options, a reference such as ``$(REDIS_PASSWORD)``, a
``<generated:…>`` placeholder and an already redacted value are not secrets and pass
through unchanged; a Secret's values all go to the caller's ``hide``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = [
    "REDACTED",
    "SECRET_OPTIONS",
    "is_secret_kind",
    "map_secrets",
    "redact",
    "secret_env_name",
    "secret_words",
]

REDACTED = "<redacted>"
"""What a secret value is replaced by; ``render --show-secrets`` prints the real value."""

_SECRET_ENV = re.compile(
    r"^(?:auth|requirepass|masterauth|password|passwd|passphrase|token|secret|credentials?"
    r"|api_?key|private_?key|access_?key|secret_?key"
    r"|.*[_.-](?:password|passwd|passphrase|token|secret|key|credentials?|auth|apikey))$",
    re.IGNORECASE,
)

SECRET_OPTIONS = frozenset(
    {
        "--requirepass",
        "--masterauth",
        "--password",
        "--passwd",
        "--pass",
        "--auth",
        "--token",
        "--secret",
        "--api-key",
        "--access-key",
        "--secret-key",
    }
)
"""Command-line options whose value is a secret (the next word, or after ``=``)."""

_REFERENCE = re.compile(r"^\$\([A-Za-z_][A-Za-z0-9_.-]*\)$")

Hide = Callable[[str, Any], Any]
"""Replaces one secret value: called with the field it sits in (``data``, ``stringData``,
``value`` for an env var, ``args`` for an option's value) and the value."""


def secret_env_name(name: str) -> bool:
    """Whether an env var (or option) of this name holds a secret by its name."""
    return bool(_SECRET_ENV.match(name.strip()))


def is_secret_kind(manifest: Mapping[str, Any]) -> bool:
    """Whether ``manifest`` is a Secret, however malformed its apiVersion (any case)."""
    kind = manifest.get("kind")
    return isinstance(kind, str) and kind.strip().lower() == "secret"


def _passes(value: Any) -> bool:
    """A value that is no secret itself: a reference, a placeholder, already redacted."""
    return isinstance(value, str) and (
        value == REDACTED
        or value.startswith("<redacted:")
        or value.startswith("<generated:")
        or bool(_REFERENCE.match(value))
    )


def _hide(field: str, value: Any, hide: Hide) -> Any:
    return value if _passes(value) else hide(field, value)


def _env(entries: list[Any], hide: Hide) -> list[Any]:
    """``entries`` with the literal value of each secret-named env var hidden: the same
    list when none is, else a new one (entries changed are new dicts)."""
    out: list[Any] | None = None
    for index, entry in enumerate(entries):
        if (
            isinstance(entry, dict)
            and isinstance(entry.get("name"), str)
            and "value" in entry
            and secret_env_name(entry["name"])
        ):
            hidden = _hide("value", entry["value"], hide)
            if hidden is not entry["value"]:
                out = out if out is not None else list(entries)
                out[index] = {**entry, "value": hidden}
    return entries if out is None else out


def _words(words: list[Any], hide: Hide) -> list[Any]:
    """``words`` with each password option's value hidden: the same list when there is
    none, else a new one."""
    out: list[Any] | None = None
    after_option = False
    for index, word in enumerate(words):
        if not isinstance(word, str):
            after_option = False
            continue
        replacement = word
        if after_option:
            replacement = _hide("args", word, hide)
            after_option = False
        else:
            option, equals, value = word.partition("=")
            if option.lower() in SECRET_OPTIONS:
                if equals:
                    replacement = f"{option}={_hide('args', value, hide)}"
                else:
                    after_option = True
        if replacement != word:
            out = out if out is not None else list(words)
            out[index] = replacement
    return words if out is None else out


def _walk(node: Any, hide: Hide) -> Any:
    """``node`` with its secrets hidden. Copy on write: a dict or list that holds no
    secret is returned as it is, shared with the input, so redacting a pod of a large
    job copies nothing but the path down to a secret (render output is never mutated
    after this, only written)."""
    if isinstance(node, dict):
        out: dict[str, Any] | None = None
        for key, value in node.items():
            changed = value
            if key == "env" and isinstance(value, list):
                changed = _env(value, hide)
            elif key in ("command", "args") and isinstance(value, list):
                changed = _words(value, hide)
            changed = _walk(changed, hide)
            if changed is not value:
                out = out if out is not None else dict(node)
                out[key] = changed
        return node if out is None else out
    if isinstance(node, list):
        items: list[Any] | None = None
        for index, item in enumerate(node):
            changed = _walk(item, hide)
            if changed is not item:
                items = items if items is not None else list(node)
                items[index] = changed
        return node if items is None else items
    return node


def map_secrets(manifest: Mapping[str, Any], hide: Hide) -> dict[str, Any]:
    """``manifest`` with every secret value (module docstring) replaced by
    ``hide(field, value)``: a new top-level dict; parts that hold no secret are shared
    with ``manifest``, not copied, so neither may be changed in place afterwards."""
    out = dict(manifest)
    if is_secret_kind(out):
        for field in ("data", "stringData"):
            if field not in out:
                continue
            values = out[field]
            if isinstance(values, dict):
                out[field] = {str(k): hide(field, v) for k, v in values.items()}
            elif values is not None:
                out[field] = hide(field, values)
    walked = _walk(out, hide)
    return dict(walked) if walked is out else walked


def secret_words(words: Sequence[str]) -> list[str]:
    """The values of password options in a command line (``--requirepass X`` gives X)."""
    found: list[str] = []

    def keep(_field: str, value: Any) -> Any:
        found.append(str(value))
        return value

    _words(list(words), keep)
    return found


def redact(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``manifest`` with every secret value replaced by ``REDACTED``."""
    return map_secrets(manifest, lambda _field, _value: REDACTED)
