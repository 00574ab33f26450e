"""Deterministic YAML in and out.

Output: keys in the order they were built (Kubernetes order: apiVersion, kind,
metadata, spec), block style, multi-line strings as ``|`` literals, ints as
ints, no aliases, no line wrapping. The same objects always give the same bytes.

Input: YAML 1.1 through the safe loader, held to the limits of :mod:`trainjobs.limits`
before anything is built from it: a document is composed into nodes first (aliases are
shared nodes there, so nothing has expanded yet), its size with every alias expanded
and its depth are measured, and duplicate keys are refused — kubectl refuses them, and
"last one wins" would hide an earlier ``privileged: true``. Only then are Python
objects built. :func:`read_bounded` reads a file or stdin with a size cap and refuses
what is not a regular file (a FIFO, ``/dev/zero``) before reading a byte.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from trainjobs import limits
from trainjobs.k8s._emitter import emit

__all__ = [
    "InputError",
    "YamlSyntaxError",
    "dump_all",
    "dump_one",
    "dump_one_pyyaml",
    "load_all",
    "read_bounded",
]

try:  # the C dumper/loader when libyaml is there; identical output, several times faster
    _BaseDumper: type[yaml.SafeDumper] = yaml.CSafeDumper  # type: ignore[assignment]
    _BaseLoader: type[yaml.SafeLoader] = yaml.CSafeLoader  # type: ignore[assignment]
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _BaseDumper = yaml.SafeDumper
    _BaseLoader = yaml.SafeLoader


class _Dumper(_BaseDumper):  # type: ignore[misc, valid-type]
    def ignore_aliases(self, data: Any) -> bool:
        return True


def _str_representer(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    if "\n" in data and not any(c in data for c in "\t\r") and data == data.rstrip(" "):
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


_Dumper.add_representer(str, _str_representer)


class YamlSyntaxError(ValueError):
    """The text is not valid YAML, or goes beyond a limit; the message names the place.

    Attributes:
        problem: what is wrong, without the source name.
        hint: how to fix it; default "fix the YAML syntax at that place".
    """

    def __init__(self, source: str, problem: str, hint: str = "") -> None:
        super().__init__(f"{source}: {problem}")
        self.problem = problem
        self.hint = hint or "fix the YAML syntax at that place"


class InputError(ValueError):
    """A file or stream cannot be read as YAML text: missing, unreadable, not a regular
    file, too big, binary or not UTF-8. ``problem`` and ``hint`` as in YamlSyntaxError."""

    def __init__(self, source: str, problem: str, hint: str) -> None:
        super().__init__(f"{source}: {problem}")
        self.problem = problem
        self.hint = hint


def dump_one(obj: Mapping[str, Any]) -> str:
    """One object as YAML text (the fast emitter; same style as PyYAML's block output)."""
    return emit(obj)


def dump_one_pyyaml(obj: Mapping[str, Any]) -> str:
    """One object through PyYAML's dumper: the reference the fast emitter is tested against."""
    return yaml.dump(
        obj,
        Dumper=_Dumper,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
        width=1 << 30,
    )


def dump_all(objs: Iterable[Mapping[str, Any]]) -> str:
    """Several objects as one multi-document stream, each starting with ``---``."""
    return "".join(f"---\n{dump_one(obj)}" for obj in objs)


def _tab_at(text: str, mark: Any) -> bool:
    """Whether the character at ``mark`` (a parser's problem mark) is a tab."""
    if mark is None:
        return False
    lines = text.split("\n")
    line = lines[mark.line] if 0 <= mark.line < len(lines) else ""
    return line[mark.column : mark.column + 1] == "\t"


def _where(mark: Any) -> str:
    return f"line {mark.line + 1}, column {mark.column + 1}" if mark else "an unknown place"


_MERGE_TAG = "tag:yaml.org,2002:merge"
# A long scalar weighs more than a short one: an alias repeating a 1 MB string a
# thousand times is as much work downstream as a million small values.
_CHARS_PER_NODE = 100


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _duplicate_key(node: yaml.MappingNode, source: str) -> YamlSyntaxError | None:
    seen: dict[tuple[str, str], Any] = {}
    for key, _ in node.value:
        if not isinstance(key, yaml.ScalarNode) or key.tag == _MERGE_TAG:
            continue
        first = seen.setdefault((key.tag, key.value), key.start_mark)
        if first is not key.start_mark:
            shown = key.value if len(key.value) <= 40 else key.value[:37] + "..."
            return YamlSyntaxError(
                source,
                f"duplicate key {shown!r} at {_where(key.start_mark)} "
                f"(first at {_where(first)}); Kubernetes refuses a mapping with a key twice",
                "keep one of them: YAML would silently use the last one",
            )
    return None


def _check_tree(root: yaml.Node, source: str, budget: int) -> int:
    """``_check_node`` for a document without anchors, so without aliases: a plain tree,
    walked once (several times faster; most input has no anchors)."""
    max_depth = limits.YAML_DEPTH.value()
    used = 0
    stack: list[tuple[yaml.Node, int]] = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        value = node.value
        if isinstance(value, str):
            used += 1 + len(value) // _CHARS_PER_NODE
            continue
        used += 1
        if depth > max_depth:
            raise YamlSyntaxError(
                source,
                f"the value at {_where(node.start_mark)} nests more than {max_depth} "
                f"levels deep; {limits.YAML_DEPTH.exceeded()}",
                limits.YAML_DEPTH.hint(),
            )
        if isinstance(node, yaml.MappingNode):
            duplicate = _duplicate_key(node, source)
            if duplicate is not None:
                raise duplicate
            # Reversed onto the stack, so the file is read top to bottom and the first
            # problem in it is the one reported.
            for key, item in reversed(value):
                stack.append((item, depth + 1))
                stack.append((key, depth + 1))
        else:
            stack.extend([(item, depth + 1) for item in reversed(value)])
    if used > budget:
        raise _too_many_values(root, source, budget)
    return budget - used


def _too_many_values(node: yaml.Node, source: str, budget: int) -> YamlSyntaxError:
    return YamlSyntaxError(
        source,
        f"the value at {_where(node.start_mark)} holds more than {budget:,} "
        f"values once its aliases are expanded; {limits.YAML_NODES.exceeded()}",
        "write the values out instead of repeating aliases; " + limits.YAML_NODES.hint(),
    )


def _check_node(root: yaml.Node, source: str, budget: int) -> int:
    """Refuse a document beyond the limits before any of it is built; the weight left.

    One pass over the composed nodes, each shared (aliased) node visited once, its
    expanded weight and height remembered; a node that contains itself is refused
    (an alias inside its own anchor).
    """
    max_depth = limits.YAML_DEPTH.value()
    weight: dict[int, int] = {}
    height: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            kids = _children(node)
            own = 1 + (len(node.value) // _CHARS_PER_NODE if isinstance(node.value, str) else 0)
            weight[key] = own + sum(weight[id(k)] for k in kids)
            height[key] = 1 + max((height[id(k)] for k in kids), default=0)
            open_nodes.discard(key)
            if height[key] > max_depth:
                raise YamlSyntaxError(
                    source,
                    f"the value at {_where(node.start_mark)} nests more than {max_depth} "
                    f"levels deep; {limits.YAML_DEPTH.exceeded()}",
                    limits.YAML_DEPTH.hint(),
                )
            if weight[key] > budget:
                raise _too_many_values(node, source, budget)
            continue
        if key in weight:
            continue
        if key in open_nodes:
            raise YamlSyntaxError(
                source,
                f"the alias at {_where(node.start_mark)} names a value that contains it",
                "an alias (*name) may only repeat a value defined before it, outside it",
            )
        if isinstance(node, yaml.MappingNode):
            duplicate = _duplicate_key(node, source)
            if duplicate is not None:
                raise duplicate
        open_nodes.add(key)
        stack.append((node, True))
        stack += [(kid, False) for kid in reversed(_children(node)) if id(kid) not in weight]
    return budget - weight[id(root)]


# A single- or double-quoted YAML scalar ('' and backslash escapes inside); one left
# open runs to the end of the text. Every match ends at a closing quote or the end, so
# the scan is linear whatever the text. An apostrophe in a plain scalar may pair with a
# later one and hide what lies between from the count below; the node budget, enforced
# while composing, still holds such a file.
_QUOTED = re.compile(r"'(?:[^']++|'')*+(?:'|\Z)|\"(?:[^\"\\]++|\\(?:.|\Z))*+(?:\"|\Z)", re.DOTALL)


def load_all(text: str, source: str = "<input>") -> list[Any]:
    """Every document of a YAML stream, empty documents dropped.

    Raises YamlSyntaxError for invalid YAML, a duplicate key, or a stream beyond the
    limits on nesting and on values with aliases expanded (:mod:`trainjobs.limits`).
    """
    budget = limits.YAML_NODES.value()
    # Composing costs microseconds per value, so a file of tiny values ("- 1" lines,
    # "[1,1,1,…]", empty documents) is refused from a count of its separators before
    # it is parsed: every value but the first few of a line or flow ends one. Commas
    # and line breaks inside quoted strings end no value (a pod's TF_CONFIG holds a
    # comma per host of the job), so quoted strings are left out of the count.
    unquoted = _QUOTED.sub("", text) if ("'" in text or '"' in text) else text
    separators = unquoted.count("\n") + unquoted.count(",")
    if separators * 6 > budget:
        raise YamlSyntaxError(
            source,
            f"it holds {separators:,} lines and commas, too many values to read; "
            f"{limits.YAML_NODES.exceeded()} (a line or comma counts as six)",
            limits.YAML_NODES.hint(),
        )
    check = _check_node if "&" in text else _check_tree
    loader = _BaseLoader(text)
    docs: list[Any] = []
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:  # check_node said there is one; never None in practice
                break
            budget = check(node, source, budget)
            docs.append(loader.construct_document(node))
    except yaml.MarkedYAMLError as exc:
        problem = str(exc.problem)
        if "maximum nesting depth" in problem:
            # libyaml's own bound (1000) can come before ours when the nesting is deep.
            raise YamlSyntaxError(
                source,
                f"the value at {_where(exc.problem_mark)} nests too deep; "
                f"{limits.YAML_DEPTH.exceeded()}",
                limits.YAML_DEPTH.hint(),
            ) from None
        if _tab_at(text, exc.problem_mark):
            # libyaml says "found character that cannot start any token": a tab in the
            # indentation, invisible in most editors.
            raise YamlSyntaxError(
                source,
                f"invalid YAML at {_where(exc.problem_mark)}: a tab, and YAML indents with "
                "spaces only",
                "replace the tab with spaces",
            ) from None
        raise YamlSyntaxError(
            source, f"invalid YAML at {_where(exc.problem_mark)}: {problem}"
        ) from None
    except yaml.YAMLError as exc:
        raise YamlSyntaxError(source, f"invalid YAML: {exc}") from None
    except YamlSyntaxError:
        raise  # a limit above: already worded
    except ValueError as exc:
        # Python refuses to convert an integer of more than 4300 digits (a guard
        # against quadratic work); no quantity or count has that many.
        problem = str(exc).split(";")[0]
        raise YamlSyntaxError(
            source, f"a value cannot be read: {problem}", "write a number of a few dozen digits"
        ) from None
    except RecursionError:
        # The pure-Python parser (no libyaml) recurses once per level.
        raise YamlSyntaxError(
            source,
            f"the YAML nests too deep; {limits.YAML_DEPTH.exceeded()}",
            limits.YAML_DEPTH.hint(),
        ) from None
    finally:
        loader.dispose()
    return [doc for doc in docs if doc is not None]


def read_bounded(path: Path | str, limit: limits.Limit = limits.FILE_BYTES) -> str:
    """The UTF-8 text of a regular file, or of stdin for ``-``, read with the size cap
    ``limit`` (default: an input file's).

    A FIFO, a device (``/dev/zero``), a socket or a directory is refused before a byte is
    read; opening never blocks (``O_NONBLOCK``). Raises InputError with a message that
    never quotes the content.
    """
    cap = limit.value()
    source = str(path)
    too_big = InputError(
        source,
        f"it is larger than {cap:,} bytes; {limit.exceeded()}",
        ("split the jobs over several files; " if limit is limits.FILE_BYTES else "")
        + limit.hint(),
    )
    if source == "-":
        data = sys.stdin.buffer.read(cap + 1)
        if len(data) > cap:
            raise too_big
    else:
        if "\0" in source:
            raise InputError(
                source.replace("\0", "\\0"),
                "the path holds a NUL character, which no file name can",
                "check the path",
            )
        try:
            fd = os.open(source, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        except OSError as exc:
            raise InputError(source, f"cannot read the file: {exc.strerror}", _fix(exc)) from None
        try:
            info = os.fstat(fd)
            if stat.S_ISDIR(info.st_mode):
                raise InputError(source, "is a directory, not a YAML file", _NAME_A_FILE)
            if not stat.S_ISREG(info.st_mode):
                raise InputError(
                    source,
                    "is not a regular file (a pipe, device or socket); trainjobs reads "
                    "only files, which cannot hang it or be endless",
                    _NAME_A_FILE + ", or save the stream to a file first",
                )
            if info.st_size > cap:
                raise too_big
            chunks: list[bytes] = []
            size = 0
            while size <= cap:
                chunk = os.read(fd, min(1 << 20, cap + 1 - size))
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
            if size > cap:  # the file grew, or is a /proc file that reports no size
                raise too_big
            data = b"".join(chunks)
        except OSError as exc:
            raise InputError(source, f"cannot read the file: {exc.strerror}", _fix(exc)) from None
        finally:
            os.close(fd)
    if b"\0" in data:
        raise InputError(source, "is a binary file, not YAML", _NAME_A_FILE)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(source, "is not UTF-8 text", "save the file as UTF-8") from None


_NAME_A_FILE = "name a stack or job YAML file"


def _fix(exc: OSError) -> str:
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "make the file readable (chmod u+r) or name another one"
    if exc.errno == errno.ENOENT:
        return "check the path"
    if exc.errno == errno.ELOOP:
        return "the path is a symbolic link loop; name the file itself"
    return "check the file and the disk it is on, then run again"
