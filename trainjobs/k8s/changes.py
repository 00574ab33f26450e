"""Field-level differences between two versions of one object.

Maps are compared key by key and lists item by item (by index, as a JSON
merge patch and the Pulumi Kubernetes provider see them), down to the first
place where the two sides differ: a value changed, a field or item added or
removed, or a value of another type.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from trainjobs.errors import NO_VALUE, format_path

__all__ = ["FieldChange", "Path", "Same", "align_keys", "field_changes", "same_value"]

Path = tuple[str | int, ...]
Same = Callable[[Path, Any, Any], bool]
"""Whether two leaf values at a path count as equal."""


@dataclass(frozen=True)
class FieldChange:
    """One place where two versions of an object differ.

    Attributes:
        path: the field, as keys and list indexes (``("spec", "containers", 0, "image")``).
        change: ``add`` (only the new side has it), ``remove`` (only the old side), ``update``.
        old: the old value, or ``NO_VALUE``.
        new: the new value, or ``NO_VALUE``.
    """

    path: Path
    change: Literal["add", "remove", "update"]
    old: Any = NO_VALUE
    new: Any = NO_VALUE

    @property
    def text(self) -> str:
        """The path as users write it: ``spec.containers[0].image``."""
        return format_path(self.path)


def same_value(path: Path, old: Any, new: Any) -> bool:
    """Plain equality, except that ``True`` is not ``1`` (YAML tells them apart)."""
    if isinstance(old, bool) or isinstance(new, bool):
        return type(old) is type(new) and old == new
    return bool(old == new)


def field_changes(
    old: Any, new: Any, same: Same = same_value, path: Path = ()
) -> list[FieldChange]:
    """Every place where ``old`` and ``new`` differ, in document order."""
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        out: list[FieldChange] = []
        keys = [*old, *(k for k in new if k not in old)]
        for key in keys:
            where = (*path, key)
            if key not in new:
                out.append(FieldChange(where, "remove", old=old[key]))
            elif key not in old:
                out.append(FieldChange(where, "add", new=new[key]))
            else:
                out += field_changes(old[key], new[key], same, where)
        return out
    if isinstance(old, list) and isinstance(new, list):
        out = []
        for i in range(max(len(old), len(new))):
            if i >= len(new):
                out.append(FieldChange((*path, i), "remove", old=old[i]))
            elif i >= len(old):
                out.append(FieldChange((*path, i), "add", new=new[i]))
            else:
                out += field_changes(old[i], new[i], same, (*path, i))
        return out
    if isinstance(old, Mapping | list) or isinstance(new, Mapping | list):
        return [FieldChange(path, "update", old, new)]
    return [] if same(path, old, new) else [FieldChange(path, "update", old, new)]


def align_keys(old: Any, new: Any) -> Any:
    """``old`` with its map keys in ``new``'s order where both have them (old-only keys last).

    Lets a line diff of the two as YAML show what changed, not the order keys
    were written in.
    """
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        keys = [*(k for k in new if k in old), *(k for k in old if k not in new)]
        return {k: align_keys(old[k], new.get(k)) for k in keys}
    if isinstance(old, list) and isinstance(new, list):
        return [align_keys(o, new[i] if i < len(new) else None) for i, o in enumerate(old)]
    return old
