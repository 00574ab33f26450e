"""Find the platform resource a reference names."""

from __future__ import annotations

from collections.abc import Sequence

from trainjobs.errors import Finding
from trainjobs.platform.base import Reference
from trainjobs.spec.entry import PlatformEntry

__all__ = ["PlatformIndex"]


class PlatformIndex:
    """The stack's platform resources, looked up by category and name."""

    def __init__(
        self, entries: Sequence[PlatformEntry], unresolved: frozenset[str] = frozenset()
    ) -> None:
        self.entries = tuple(entries)
        self.unresolved = unresolved
        """The stack's values not known yet (``StackSpec.unresolved``), for references."""
        self.resources = tuple(e.resource for e in self.entries)
        # Every job looks its references up here: group once, not per job.
        grouped: dict[str, list[PlatformEntry]] = {}
        for entry in self.entries:
            grouped.setdefault(entry.plugin.category, []).append(entry)
        self._by_category = {k: tuple(v) for k, v in grouped.items()}

    def of_category(self, category: str) -> tuple[PlatformEntry, ...]:
        """The entries of one category (``operator`` …), in input order."""
        return self._by_category.get(category, ())

    def resolve(
        self, ref: Reference, namespace: str | None, source: str = ""
    ) -> tuple[PlatformEntry | None, Finding | None]:
        """The entry ``ref`` names, preferring ``namespace``; or a finding saying why not.

        ``name`` matches a resource's name; ``namespace/name`` its namespace too.
        """
        same = self.of_category(ref.category)
        if "/" in ref.name:
            found = [e for e in same if e.key == ref.name]
        else:
            found = [e for e in same if e.resource.name == ref.name]
            local = [e for e in found if e.plugin.namespace(e.resource) == namespace]
            found = local if len(found) > 1 and len(local) == 1 else found
        if len(found) == 1:
            return found[0], None
        if not found:
            known = sorted(e.key for e in same)
            hint = (
                f"use one of: {', '.join(known)}"
                if known
                else f"declare a {ref.category} named {ref.name!r} in the stack"
            )
            return None, Finding(
                code="ref.unknown",
                path=ref.path,
                message=f"no {ref.category} named {ref.name!r} in this stack",
                value=ref.name,
                hint=hint,
                source=source,
            )
        return None, Finding(
            code="ref.ambiguous",
            path=ref.path,
            message=f"{len(found)} {ref.category}s are named {ref.name!r}",
            value=ref.name,
            hint=f"name one as namespace/name: {', '.join(sorted(e.key for e in found))}",
            source=source,
        )
