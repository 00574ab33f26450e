"""Writing output without ever losing a file of the user's.

Two ways to write, one rule: trainjobs replaces or removes only what it wrote.

* :func:`write_folder` (``render -o DIR``): one file per object in a folder. The
  folder keeps a list of the files trainjobs wrote there, :data:`WRITTEN_LIST`,
  with each file's SHA-256 (the format of ``sha256sum``). The next render
  replaces those files and removes the ones it no longer writes; any other entry
  (a file of the user's, a folder, a link, a listed file changed since) makes it
  refuse with the names, unless the caller allows other files — then they stay
  untouched, and a name trainjobs wants that is not its own is still refused.
* :func:`write_files` (``graph -o FILE``, ``crds -o DIR``): a few named files. An
  existing file is replaced only when it carries the writer's own mark (a
  comment every file it writes holds) or the caller says to overwrite.

Both are all or nothing: every file is written to a temporary name first and
renamed into place only when all of them are whole, so an error or an
interrupt leaves the folder as it was. Neither follows a symbolic link: the
output folder, or a file to replace, that is a link is refused. Files get the
mode a plain ``open()`` would give (``0666`` less the umask: ``0644`` usually).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import stat
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from trainjobs.errors import TrainjobsError
from trainjobs.output.text import printable

__all__ = [
    "WRITTEN_LIST",
    "OutputError",
    "Written",
    "file_mode",
    "safe_file_name",
    "write_files",
    "write_folder",
]

WRITTEN_LIST = ".trainjobs-written"
"""The file in an output folder naming the files trainjobs wrote there (``sha256sum`` format)."""

_LIST_HEADER = (
    "# The files trainjobs wrote into this folder, with their SHA-256 (sha256sum -c checks them).\n"
    "# trainjobs replaces or removes only these; it refuses to touch anything else here.\n"
)
_STAGING_PREFIX = ".trainjobs-staging."
_SHOWN = 5
"""How many offending names a refusal lists before it says how many more there are."""

_LIST_LINE = re.compile(r"^([0-9a-f]{64})  (.+)$")
_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]")
_MAX_OWNED_BYTES = 256 << 20
"""A listed file larger than this is not hashed (bounded work): it cannot be trainjobs'."""
_MARK_BYTES = 8192
"""How far into an existing file its writer's mark is looked for."""


class OutputError(TrainjobsError):
    """trainjobs refused to write, or could not write, an output (nothing was changed)."""


@dataclass(frozen=True)
class Written:
    """What a write did.

    Attributes:
        written: the names of the files written, in order.
        removed: the names of files an earlier write made that were removed.
        kept: the names of entries trainjobs did not write, left untouched.
    """

    written: tuple[str, ...]
    removed: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()


def file_mode() -> int:
    """The mode of a new file under the current umask (``0644`` under the usual ``022``)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def safe_file_name(text: str) -> str:
    """``text`` as one plain file name: characters other than ``A-Za-z0-9._-`` become ``_``."""
    name = _SAFE_NAME.sub("_", text).lstrip(".")
    return name or "_"


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _shown(path: Path | str) -> str:
    return printable(str(path))


def _names(names: Sequence[str]) -> str:
    shown = ", ".join(printable(n) for n in names[:_SHOWN])
    more = len(names) - _SHOWN
    return shown + (f" and {more} more" if more > 0 else "")


def _read_list(listing: Path) -> dict[str, set[str]]:
    """The written list: name → the digests trainjobs wrote under it."""
    info = listing.lstat()
    if not stat.S_ISREG(info.st_mode) or info.st_size > 1 << 24:
        raise OutputError(
            f"{_shown(listing)} is not the list of files trainjobs wrote (a link, a folder or "
            "too large); nothing was written. Remove it, or choose another output folder"
        )
    owned: dict[str, set[str]] = {}
    for number, line in enumerate(
        listing.read_text(encoding="utf-8", errors="replace").splitlines(), 1
    ):
        if not line or line.startswith("#"):
            continue
        match = _LIST_LINE.match(line)
        if match is None or "/" in match.group(2) or match.group(2) in (".", ".."):
            raise OutputError(
                f"{_shown(listing)}: line {number} is not '<sha256>  <file name>'; nothing was "
                "written. Restore the list, or remove the folder's rendered files and the list"
            )
        owned.setdefault(match.group(2), set()).add(match.group(1))
    return owned


def _list_text(entries: Mapping[str, set[str]]) -> bytes:
    lines = [f"{d}  {name}\n" for name in sorted(entries) for d in sorted(entries[name])]
    return (_LIST_HEADER + "".join(lines)).encode()


def _lstat(path: Path) -> os.stat_result | None:
    """What is at ``path`` itself (a link not followed), None when nothing is; any other
    failure to look refuses the write."""
    try:
        return path.lstat()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise OutputError(
            f"cannot write {_shown(path)}: {exc.strerror or exc}; nothing was written"
        ) from None


def _exists_as(path: Path, is_type: Callable[[int], bool], what: str, on_link: str) -> bool:
    """Whether ``path`` exists; refused when it is a link (``on_link`` says what to do
    instead) or not ``what`` (``is_type`` tests its mode)."""
    info = _lstat(path)
    if info is None:
        return False
    if stat.S_ISLNK(info.st_mode):
        raise OutputError(f"{_shown(path)} is a symbolic link; {on_link}; nothing was written")
    if not is_type(info.st_mode):
        raise OutputError(
            f"{_shown(path)} is not {what}; nothing was written. Name another path, or move "
            "what is there away"
        )
    return True


def _check_folder(directory: Path) -> bool:
    """Whether ``directory`` exists; refused when it is a link or not a folder."""
    return _exists_as(
        directory,
        stat.S_ISDIR,
        "a directory",
        "trainjobs writes only into a real folder, never through a link: give the folder "
        "itself as the output",
    )


@contextlib.contextmanager
def _new_folders(folder: Path) -> Iterator[None]:
    """Make ``folder`` and its missing parents; remove the ones made if the block fails."""
    made: list[Path] = []
    for parent in [*reversed(folder.parents), folder]:
        if not parent.exists() and not parent.is_symlink():
            try:
                parent.mkdir()
            except OSError as exc:
                for done in reversed(made):
                    with contextlib.suppress(OSError):
                        done.rmdir()
                raise OutputError(
                    f"cannot write {_shown(folder)}: {exc.strerror or exc}; nothing was written"
                ) from None
            made.append(parent)
    try:
        yield
    except BaseException:
        for done in reversed(made):
            with contextlib.suppress(OSError):
                done.rmdir()  # only if empty: never anything but what was just made
        raise


def _stage(folder: Path, name: str, data: bytes, mode: int) -> Path:
    """``data`` in a new hidden file beside ``folder/name`` (the caller renames or removes it)."""
    handle, staging = tempfile.mkstemp(prefix=f"{_STAGING_PREFIX}{name}.", dir=folder)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.chmod(staging, mode)
    except BaseException:
        Path(staging).unlink(missing_ok=True)
        raise
    return Path(staging)


def _classify(
    directory: Path, owned: Mapping[str, set[str]]
) -> tuple[dict[str, set[str]], list[str], list[str]]:
    """Split the folder's entries into trainjobs' own (name → digests), others and changed."""
    mine: dict[str, set[str]] = {}
    others: list[str] = []
    changed: list[str] = []
    with os.scandir(directory) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            if entry.name == WRITTEN_LIST:
                continue
            if entry.name not in owned or not entry.is_file(follow_symlinks=False):
                others.append(entry.name)
                continue
            if entry.stat(follow_symlinks=False).st_size > _MAX_OWNED_BYTES:
                changed.append(entry.name)  # larger than anything a render writes
                continue
            with open(entry.path, "rb") as handle:
                digest = hashlib.file_digest(handle, "sha256").hexdigest()  # in chunks
            if digest in owned[entry.name]:
                mine[entry.name] = {digest}
            else:
                changed.append(entry.name)
    return mine, others, changed


def write_folder(
    directory: Path,
    files: Mapping[str, str],
    *,
    allow_other_files: bool = False,
    flag: str = "--allow-other-files",
) -> Written:
    """Write ``files`` (name → text) into ``directory``; see the module docstring.

    ``flag`` names the option that sets ``allow_other_files`` in refusals.
    Raises OutputError (nothing changed) when the folder is refused or cannot be written.
    """
    for name in files:
        if name != safe_file_name(name) or name == WRITTEN_LIST:
            raise OutputError(f"{printable(name)!r} is not a plain file name; nothing was written")
    exists = _check_folder(directory)
    owned: dict[str, set[str]] = {}
    mine: dict[str, set[str]] = {}
    others: list[str] = []
    if exists:
        listing = directory / WRITTEN_LIST
        try:
            if listing.exists() or listing.is_symlink():
                owned = _read_list(listing)
            mine, others, changed = _classify(directory, owned)
        except OSError as exc:
            raise OutputError(
                f"cannot read {_shown(directory)}: {exc.strerror or exc}; nothing was written"
            ) from None
        if changed and not allow_other_files:
            raise OutputError(
                f"{_shown(directory)} holds files trainjobs wrote that were changed since: "
                f"{_names(changed)}; nothing was written. Keep your changes elsewhere and "
                f"delete these files, or pass {flag} to leave them untouched"
            )
        others += changed
        if others and not allow_other_files:
            leftovers = [n for n in others if n.startswith(_STAGING_PREFIX)]
            note = (
                f" ({_names(leftovers)}: left by an interrupted run; delete them)"
                if leftovers
                else ""
            )
            raise OutputError(
                f"{_shown(directory)} holds files trainjobs did not write: {_names(others)}; "
                "nothing was written, nothing deleted. Render into an empty or new folder, or "
                f"pass {flag} to write beside them (they stay untouched){note}"
            )
        clashes = [n for n in others if n in files]
        if clashes:
            raise OutputError(
                f"{_shown(directory)} already holds {_names(clashes)}, which trainjobs did not "
                "write and would have to replace; nothing was written. Move them away or "
                "render into another folder"
            )
    mode = file_mode()
    encoded = {name: text.encode() for name, text in files.items()}
    staged: dict[str, Path] = {}
    with _new_folders(directory):
        prepared = False
        try:
            for name, data in encoded.items():
                staged[name] = _stage(directory, name, data, mode)
            # The list first names old and new files alike: whatever happens next, every
            # file of trainjobs' in the folder is on it.
            interim = {n: set(d) for n, d in mine.items()}
            for name, data in encoded.items():
                interim.setdefault(name, set()).add(_digest(data))
            _replace(directory / WRITTEN_LIST, _list_text(interim), mode)
            prepared = True
        except OSError as exc:
            raise OutputError(
                f"cannot write {_shown(directory)}: {exc.strerror or exc}; nothing was written"
            ) from None
        finally:
            if not prepared:
                for path in staged.values():
                    path.unlink(missing_ok=True)
    removed = sorted(n for n in mine if n not in encoded)
    try:
        for name, path in staged.items():
            os.replace(path, directory / name)
        for name in removed:
            (directory / name).unlink(missing_ok=True)
        final = {name: {_digest(data)} for name, data in encoded.items()}
        _replace(directory / WRITTEN_LIST, _list_text(final), mode)
    except BaseException as exc:
        for path in staged.values():
            path.unlink(missing_ok=True)
        if not isinstance(exc, OSError):
            raise
        raise OutputError(
            f"cannot finish writing {_shown(directory)}: {exc.strerror or exc}. Every file of "
            f"trainjobs' there is named in {WRITTEN_LIST}: render again"
        ) from None
    return Written(tuple(encoded), tuple(removed), tuple(others))


def _replace(path: Path, data: bytes, mode: int) -> None:
    """Write ``data`` to ``path`` whole: a hidden file beside it, then a rename."""
    staging = _stage(path.parent, path.name, data, mode)
    try:
        os.replace(staging, path)
    except BaseException:
        staging.unlink(missing_ok=True)
        raise


def _owned_by_mark(path: Path, mark: str) -> bool:
    with open(path, "rb") as handle:
        return mark.encode() in handle.read(_MARK_BYTES)


def write_files(
    files: Mapping[Path, str],
    *,
    mark: str,
    overwrite: bool = False,
    flag: str = "--overwrite",
    remove: Callable[[Path], bool] | None = None,
    stale_in: Path | None = None,
) -> Written:
    """Write each ``path → text`` whole, replacing only files that hold ``mark``.

    Every text written must hold ``mark`` itself (so the next run knows the file).
    With ``stale_in``: files directly in that folder that hold ``mark`` but are not
    written now are removed (a generator's outputs that it no longer makes);
    ``remove`` may narrow which (default: every ``*.yaml``). ``overwrite`` (the
    option ``flag``) replaces files without the mark too. Raises OutputError,
    nothing changed, when a file is refused or cannot be written.
    """
    for path, text in files.items():
        if mark not in text[: _MARK_BYTES // 2]:
            raise ValueError(f"{path}: the text does not hold its writer's mark {mark!r}")
    for path in files:
        _check_target(path, mark, overwrite, flag)
    stale: list[Path] = []
    if stale_in is not None and _check_folder(stale_in):
        wanted = {p.resolve() for p in files}
        keep = remove or (lambda p: p.suffix == ".yaml")
        for candidate in sorted(stale_in.iterdir()):
            if (
                candidate.resolve() not in wanted
                and keep(candidate)
                and candidate.is_file()
                and not candidate.is_symlink()
                and _owned_by_mark(candidate, mark)
            ):
                stale.append(candidate)
    mode = file_mode()
    staged: dict[Path, Path] = {}
    folders = sorted({p.parent for p in files}, key=lambda p: len(p.parts))
    with contextlib.ExitStack() as stack:
        for folder in folders:
            stack.enter_context(_new_folders(folder))
        done = False
        try:
            for path, text in files.items():
                staged[path] = _stage(path.parent, path.name, text.encode(), mode)
            for path, temp in staged.items():
                os.replace(temp, path)
            done = True
        except OSError as exc:
            raise OutputError(
                f"cannot write {_shown(next(iter(files), ''))}: {exc.strerror or exc}; "
                "nothing was written"
            ) from None
        finally:
            if not done:
                for temp in staged.values():
                    temp.unlink(missing_ok=True)
    for path in stale:
        path.unlink(missing_ok=True)
    return Written(tuple(str(p) for p in files), tuple(str(p) for p in stale), ())


def _check_target(path: Path, mark: str, overwrite: bool, flag: str) -> None:
    """Refuse to write ``path`` when it is a link, a folder, or a file without ``mark``."""
    if path.parent.is_symlink():
        raise OutputError(
            f"{_shown(path.parent)} is a symbolic link; trainjobs writes only into real "
            "folders, never through a link; nothing was written"
        )
    on_link = "trainjobs never writes through a link: remove it or name another file"
    if not _exists_as(path, stat.S_ISREG, "a regular file", on_link) or overwrite:
        return
    try:
        own = _owned_by_mark(path, mark)
    except OSError as exc:
        raise OutputError(
            f"cannot read {_shown(path)}: {exc.strerror or exc}; nothing was written"
        ) from None
    if not own:
        raise OutputError(
            f"{_shown(path)} exists and trainjobs did not write it (it lacks the line "
            f"{mark!r}); nothing was written. Name another file, delete it, or pass {flag} "
            "to replace it"
        )
