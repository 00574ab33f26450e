"""A stack or job file as it was at a git ref, with every file it references.

``git show REF:path`` reads the file and, recursively, each ``file:`` entry it
lists — jobs, backends, node pools, queues, operators — relative to the file
that lists it, as the loader resolves them. The
files are written to a temporary folder in the same layout, loaded and
rendered there; findings and sources then name ``REF:path``, not the
temporary folder. Nothing in the working tree or the repository changes.
"""

from __future__ import annotations

import posixpath
import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from trainjobs import limits
from trainjobs.check import run
from trainjobs.errors import SpecError, TrainjobsError
from trainjobs.k8s.yamlio import YamlSyntaxError, load_all
from trainjobs.preview.objects import Side, side_from_rendering
from trainjobs.spec import load_path
from trainjobs.spec.entry import Target
from trainjobs.spec.load import CONFIG_NAMESPACE, LIST_KEYS

__all__ = ["GitError", "referenced_files", "render_at", "repository_of", "show"]


class GitError(TrainjobsError):
    """git could not answer: not a repository, an unknown ref, git missing."""


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=False)
    except FileNotFoundError:
        raise GitError("git is not installed; --against needs it") from None


def repository_of(path: Path) -> tuple[Path, str]:
    """The repository's top folder and ``path`` relative to it (POSIX form)."""
    folder = path.resolve().parent
    done = _git(folder, "rev-parse", "--show-toplevel")
    if done.returncode != 0:
        raise GitError(f"{path} is not in a git repository, so it has no version at a ref")
    root = Path(done.stdout.decode().strip()).resolve()
    return root, path.resolve().relative_to(root).as_posix()


def _check_ref(root: Path, ref: str) -> None:
    if (
        ref.startswith("-")
        or _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").returncode
    ):
        raise GitError(f"{ref!r} is not a commit, branch or tag of {root}")


def show(root: Path, ref: str, relative: str) -> bytes | None:
    """The bytes of ``relative`` at ``ref``, or None when the file is not there.

    A file over the input size limit is refused before git prints it (held in memory).
    """
    size = _git(root, "cat-file", "-s", f"{ref}:{relative}")
    if size.returncode != 0:
        return None
    if int(size.stdout.strip() or 0) > limits.FILE_BYTES.value():
        raise GitError(
            f"{ref}:{relative} is larger than {limits.FILE_BYTES.value():,} bytes; "
            f"{limits.FILE_BYTES.exceeded()}; fix: {limits.FILE_BYTES.hint()}"
        )
    done = _git(root, "show", f"{ref}:{relative}")
    return done.stdout if done.returncode == 0 else None


def _file_entries(doc: Any) -> Iterator[str]:
    if not isinstance(doc, Mapping):
        return
    if isinstance(doc.get("file"), str):
        yield doc["file"]
    config = doc.get("config")
    if isinstance(config, Mapping) and "apiVersion" not in doc:
        for list_key in LIST_KEYS:
            for key in (f"{CONFIG_NAMESPACE}:{list_key}", list_key):
                entries = config.get(key)
                for entry in entries if isinstance(entries, list) else []:
                    if isinstance(entry, Mapping) and isinstance(entry.get("file"), str):
                        yield entry["file"]


def referenced_files(text: str, relative: str) -> list[str]:
    """The repository paths of the ``file:`` entries in a stack or job file's text."""
    try:
        docs = load_all(text, relative)
    except YamlSyntaxError:
        return []  # the loader reports the syntax error with its place
    base = posixpath.dirname(relative)
    return [
        posixpath.normpath(posixpath.join(base, name))
        for doc in docs
        for name in _file_entries(doc)
    ]


def _materialize(root: Path, ref: str, relative: str, into: Path) -> bool:
    """Write ``relative`` and what it references at ``ref`` under ``into``; False if absent."""
    seen: set[str] = set()
    pending = [relative]
    while pending:
        current = pending.pop()
        if current in seen or current.startswith("../") or posixpath.isabs(current):
            continue  # outside the repository: the loader reports the missing file
        seen.add(current)
        data = show(root, ref, current)
        if data is None:
            if current == relative:
                return False
            continue
        target = into / current
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        pending += referenced_files(data.decode("utf-8", "replace"), current)
    return True


def _relabel(source: str, folder: str, ref: str) -> str:
    """``REF:path`` for a file of the temporary copy; other sources unchanged."""
    if source.startswith(folder + "/"):
        return f"{ref}:{posixpath.normpath(source[len(folder) + 1 :])}"
    return source


def render_at(
    path: Path,
    ref: str,
    *,
    target: Target | None = None,
    k8s_version: str | None = None,
) -> Side:
    """The render of ``path`` as it was at ``ref``; an empty side if the file did not exist.

    Raises GitError for an unknown ref, SpecError (sources ``REF:path``) when
    that version does not render.
    """
    root, relative = repository_of(path)
    _check_ref(root, ref)
    label = f"{ref}:{relative}"
    with tempfile.TemporaryDirectory(prefix="trainjobs-git-") as temp:
        folder = str(Path(temp).resolve())
        if not _materialize(root, ref, relative, Path(folder)):
            return Side(f"{label} (not in {ref})")
        try:
            # The copy is the repository at REF: file: entries may point anywhere in it.
            stack = load_path(Path(folder) / relative, root=Path(folder))
            rendering = run(stack, target=target, k8s_version=k8s_version)
        except SpecError as exc:
            raise SpecError.from_findings(
                replace(f, source=_relabel(f.source, folder, ref)) for f in exc.findings
            ) from None
        return side_from_rendering(rendering, label, relabel=lambda s: _relabel(s, folder, ref))
