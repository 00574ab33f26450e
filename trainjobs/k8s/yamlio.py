"""Deterministic YAML in and out.

Output: keys in the order they were built (Kubernetes order: apiVersion, kind,
metadata, spec), block style, multi-line strings as ``|`` literals, ints as
ints, no aliases, no line wrapping. The same objects always give the same bytes.

Input: YAML 1.1 through the safe loader, keeping the line of every mapping so
findings can point into the file.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import yaml

from trainjobs.k8s._emitter import emit

__all__ = ["YamlSyntaxError", "dump_all", "dump_one", "dump_one_pyyaml", "load_all"]

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
    """The text is not valid YAML; the message names the line and column."""


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


def load_all(text: str, source: str = "<input>") -> list[Any]:
    """Every document of a YAML stream, empty documents dropped."""
    try:
        docs = list(yaml.load_all(text, Loader=_BaseLoader))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "unknown place"
        raise YamlSyntaxError(f"{source}: invalid YAML at {where}: {exc.problem}") from None
    except yaml.YAMLError as exc:
        raise YamlSyntaxError(f"{source}: invalid YAML: {exc}") from None
    return [doc for doc in docs if doc is not None]
