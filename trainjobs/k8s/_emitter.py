"""A fast, deterministic YAML emitter for JSON-shaped data (dicts, lists, scalars).

PyYAML's dumper spends most of its time building and analysing a node graph in
Python even with the C emitter. Manifests are only ever mappings, lists,
strings, ints, floats, booleans and nulls, so this writes them directly, in
PyYAML's block style (lists not indented under their key). Whether a string can
stand unquoted is decided by PyYAML's own resolver and scalar analysis, cached
per string, so the output always loads back as exactly the same data.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import yaml
from yaml.emitter import Emitter
from yaml.resolver import Resolver

__all__ = ["emit"]

_RESOLVER = Resolver()
_STR_TAG = "tag:yaml.org,2002:str"


class _Analyser(Emitter):
    """Only ``analyze_scalar`` is used; it reads no stream."""

    def __init__(self) -> None:  # no stream, no state: analysis only
        self.allow_unicode = True


_ANALYSER = _Analyser()
_SHORT_ESCAPES: dict[str, str] = dict(Emitter.ESCAPE_REPLACEMENTS)


# PyYAML's analyze_scalar walks a string one character at a time in Python: 95% of the
# time of a render whose pods carry long unique strings (a 1,024-worker TF_CONFIG). For
# the usual string, printable ASCII on one line, its verdict reduces to these regular
# expressions, run in C. The rest still goes through analyze_scalar.
_PRINTABLE_ASCII = re.compile(r"[\x20-\x7e]*")
# Exactly the cases in which analyze_scalar forbids a plain block scalar for such a
# string: a document marker or an indicator first; "?", ":" or "-" first and then a space
# (or nothing); ": " or a final ":" later; " #"; a leading or trailing space.
_NOT_PLAIN = re.compile(r"---|\.\.\.|[#,\[\]{}&*!|>'\"%@`]|[?:-](?: |$)|.*(?::(?: |$)| #)| |.* $")


def _analysis(text: str) -> tuple[bool, bool]:
    """(plain allowed, single-quoted allowed) on one line, as PyYAML's emitter decides."""
    if _PRINTABLE_ASCII.fullmatch(text):
        # One line, nothing to escape: single quotes always hold it.
        return _NOT_PLAIN.match(text) is None, True
    analysis = _ANALYSER.analyze_scalar(text)
    if analysis.multiline:
        return False, False
    return analysis.allow_block_plain, analysis.allow_single_quoted


# Strings longer than this are written without caching their quoted form: a cache
# entry per pod's TF_CONFIG (every host of the job, unique per pod) would keep a second
# copy of the whole output alive until the process ends.
_CACHED_LENGTH = 256


def _scalar(text: str) -> str:
    """``text`` as a YAML scalar (see ``_scalar_text``); short strings from a cache."""
    return _scalar_cached(text) if len(text) <= _CACHED_LENGTH else _scalar_text(text)


def _scalar_text(text: str) -> str:
    """``text`` as a YAML scalar on one line, or as a literal block header + body marker."""
    resolved = _RESOLVER.resolve(yaml.ScalarNode, text, (True, False))  # type: ignore[no-untyped-call]
    if not text.isascii() and _BIDI.intersection(text):
        return _double_quoted(text)
    if text and resolved == _STR_TAG:
        plain, single_quoted = _analysis(text)
        if plain:
            return text
        if single_quoted:
            return "'" + text.replace("'", "''") + "'"
    elif not text:
        return "''"
    elif "\n" not in text:
        return "'" + text.replace("'", "''") + "'"
    return _double_quoted(text)


_BIDI = frozenset("\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
"""Bidirectional controls: YAML may hold them raw, but raw they reorder what a terminal or a
code review shows ("Trojan Source"), so they are always written escaped (PyYAML would not)."""


_scalar_cached = lru_cache(maxsize=65536)(_scalar_text)


def _double_quoted(text: str) -> str:
    """Double-quoted, escaped exactly as PyYAML escapes (with ``allow_unicode``): the
    characters YAML cannot hold raw, in PyYAML's short forms (``\\n``, ``\\t`` …) where
    it has one."""
    out = ['"']
    for char in text:
        if char in '"\\\x85\u2028\u2029\ufeff' or char in _BIDI or not _yaml_printable(char):
            short = _SHORT_ESCAPES.get(char)
            code = ord(char)
            out.append(
                "\\" + short
                if short
                else f"\\x{code:02X}"
                if code <= 0xFF
                else f"\\u{code:04X}"
                if code <= 0xFFFF
                else f"\\U{code:08X}"
            )
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def _yaml_printable(char: str) -> bool:
    """libyaml's test (PyYAML's C emitter) for a character it writes raw."""
    return (
        "\x20" <= char <= "\x7e" or "\xa0" <= char <= "\ud7ff" or "\ue000" <= char <= "\ufffd"
    ) and char != "\ufeff"


def _literal_ok(text: str) -> bool:
    """A multi-line string that reads best as a ``|`` block and loads back unchanged."""
    if "\n" not in text or text[0] in " \n" or text.endswith("\n\n"):
        return False
    if any(line != line.rstrip(" ") for line in text.split("\n")):
        return False
    return all(c == "\n" or (c.isprintable() and c != "\t") for c in text)


@lru_cache(maxsize=1024)
def _float(value: float) -> str:
    return yaml.safe_dump(value).split("\n", 1)[0]


def _inline(value: Any) -> str | None:
    """The one-line form of a scalar or empty collection, None for anything else."""
    if isinstance(value, str):
        return None if "\n" in value else _scalar(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, Mapping) and not value:
        return "{}"
    if isinstance(value, list) and not value:
        return "[]"
    return None


@lru_cache(maxsize=4096)
def _block(value: str, indent: str) -> str:
    """What follows ``key:`` for a string with line breaks: a ``|`` block or a quoted line."""
    if _literal_ok(value):
        header = "|" if value.endswith("\n") else "|-"
        body = value[:-1] if value.endswith("\n") else value
        child = indent + "  "
        lines = "".join(f"{child}{line}\n" if line else "\n" for line in body.split("\n"))
        return f" {header}\n{lines}"
    return f" {_double_quoted(value)}\n"


def _emit_value(value: Any, indent: str, out: list[str]) -> None:
    """Emit what follows ``key:`` or ``- `` (the caller wrote that prefix)."""
    inline = _inline(value)
    if inline is not None:
        out.append(f" {inline}\n")
    elif isinstance(value, str):
        out.append(_block(value, indent))
    elif isinstance(value, Mapping):
        out.append("\n")
        _emit_mapping(value, indent + "  ", out)
    elif isinstance(value, list):
        out.append("\n")
        _emit_list(value, indent, out)
    else:
        raise TypeError(f"cannot write {type(value).__name__} as YAML")


@lru_cache(maxsize=65536)
def _key(indent: str, key: str) -> str:
    return f"{indent}{_scalar(key)}:"


def _emit_mapping(
    mapping: Mapping[str, Any], indent: str, out: list[str], first: str | None = None
) -> None:
    """The mapping's entries at ``indent``; the first line starts with ``first`` instead
    when given (``"  - "`` for a mapping that is a list item)."""
    append = out.append
    for key, value in mapping.items():
        if first is None:
            head = _key(indent, str(key))
        else:
            head = first + _key("", str(key))
            first = None
        # The common JSON types by exact type first: this runs for every field.
        kind = type(value)
        if kind is str:
            if "\n" in value:
                append(head + _block(value, indent))
            else:
                append(f"{head} {_scalar(value)}\n")
        elif kind is int:
            append(f"{head} {value}\n")
        elif kind is dict and value:
            append(head + "\n")
            _emit_mapping(value, indent + "  ", out)
        elif kind is list and value:
            append(head + "\n")
            _emit_list(value, indent, out)
        else:
            append(head)
            if isinstance(value, list) and value:
                append("\n")
                _emit_list(value, indent, out)
            else:
                _emit_value(value, indent, out)


def _emit_list(items: list[Any], indent: str, out: list[str]) -> None:
    dash = f"{indent}- "
    for item in items:
        kind = type(item)
        if kind is str and "\n" not in item:
            out.append(f"{dash}{_scalar(item)}\n")
        elif (kind is dict or isinstance(item, Mapping)) and item:
            # The first key shares the line with the dash; the rest line up under it.
            _emit_mapping(item, indent + "  ", out, dash)
        elif isinstance(item, list) and item:
            out.append(f"{indent}-\n")
            _emit_list(item, indent + "  ", out)
        else:
            out.append(f"{indent}-")
            _emit_value(item, indent, out)


def emit(document: Mapping[str, Any]) -> str:
    """One mapping as a YAML document (no ``---``)."""
    if not document:
        return "{}\n"
    out: list[str] = []
    _emit_mapping(document, "", out)
    return "".join(out)
