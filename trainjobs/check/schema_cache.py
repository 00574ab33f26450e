"""What the checks read of large schema files, kept on disk as JSON between runs.

A shipped CRD is up to 800 KB of YAML (about 60 ms to parse), and a Kubernetes kind's
schema refers into a 1.3 MB file of every definition; ``trainjobs check`` of one job
needs a small part of them. That part is built once from the source, written under
the user's cache directory as JSON, and read back by later runs in a few
milliseconds.

An entry's name is a hash of the trainjobs version, :data:`FORMAT`, what the entry
is (``what``) and its source: a file's bytes, or for a file too large to read on
every run its path, size and modification time. A changed CRD, another
kubernetes-validate or another trainjobs never reads an old entry. The cache only
saves time: when it cannot be read (missing, corrupt, another entry's content) the
part is built from the source, and when it cannot be written (read-only home, no
home) nothing is kept. Nothing is ever fetched.

Where: ``$XDG_CACHE_HOME/trainjobs/schemas``, else ``~/.cache/trainjobs/schemas``;
``TRAINJOBS_NO_CACHE=1`` turns it off.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

__all__ = ["FORMAT", "cache_dir", "cached"]

FORMAT = 2
"""The layout of the entries; raise it when what an entry holds changes."""


@cache
def _trainjobs_version() -> str:
    """The installed trainjobs' version, read from its METADATA's ``Version:`` line:
    ``importlib.metadata.version`` parses the whole file as e-mail, 5 ms of start-up."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        text = distribution("trainjobs").read_text("METADATA") or ""
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"
    found = re.search(r"^Version: *(\S+)", text, re.M)
    return found.group(1) if found else "unknown"


def cache_dir() -> Path | None:
    """Where entries are kept; None when caching is off or there is no home."""
    if os.environ.get("TRAINJOBS_NO_CACHE", "") not in ("", "0"):
        return None
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):  # the XDG rule: a relative path is ignored
        try:
            base = str(Path.home() / ".cache")
        except RuntimeError:  # no home directory to find
            return None
    return Path(base) / "trainjobs" / "schemas"


def _read(path: Path, key: str) -> Any:
    """The value of the entry at ``path`` if it is ``key``'s; raises on anything else."""
    with path.open("rb") as handle:
        entry = json.load(handle)
    if not isinstance(entry, dict) or entry.get("key") != key or "value" not in entry:
        raise ValueError(f"{path} is not the entry {key}")
    return entry["value"]


def _write(folder: Path, path: Path, key: str, value: Any) -> None:
    """Write the entry whole or not at all: a reader never sees half of one."""
    folder.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump({"key": key, "value": value}, out, separators=(",", ":"))
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def cached(what: str, source: bytes, build: Callable[[bytes], Any]) -> Any:
    """``build(source)``, from the cache when an earlier run kept it.

    ``what`` names the part built (e.g. ``crd-versions``), so two parts of one source
    are two entries; ``build`` must return plain JSON data, and ``source`` must
    identify everything it reads (the bytes themselves, or a file's path, size and
    modification time).
    """
    digest = hashlib.sha256()
    for part in (_trainjobs_version(), str(FORMAT), what):
        digest.update(part.encode() + b"\0")
    digest.update(source)
    key = digest.hexdigest()
    folder = cache_dir()
    path = folder / f"{key}.json" if folder is not None else None
    if path is not None:
        try:
            return _read(path, key)
        except (OSError, ValueError):
            pass  # not kept yet, or unreadable: build it
    value = build(source)
    if folder is not None and path is not None:
        # A read-only or full disk (OSError), or a value JSON cannot hold (TypeError,
        # ValueError): nothing is kept and the next run builds it again.
        with contextlib.suppress(OSError, TypeError, ValueError):
            _write(folder, path, key, value)
    return value
