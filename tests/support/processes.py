"""Processes below a process, for tests and benchmarks that stop or measure them."""

from __future__ import annotations

import os


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (its children, theirs …), from /proc."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    ppid = int(handle.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            parents.setdefault(ppid, []).append(int(entry))
    found, pending = [], [pid]
    while pending:
        children = parents.get(pending.pop(), [])
        found += children
        pending += children
    return found
