"""The last render ``trainjobs preview`` saw for each stack, under ``.trainjobs/``.

Layout: ``<root>/.trainjobs/<stack>/last.yaml`` (the render as a YAML
stream, Secret values as fingerprints) and ``key`` (the fingerprint key,
random, readable by its owner only). ``<root>`` is the top of the git work
tree holding the stack's project (the nearest folder above the stack file with
a ``Pulumi.yaml``, else the stack file's folder), where ``.trainjobs/`` is
git-ignored; outside a git work tree, the project folder itself — but never a
folder inside a project's ``examples/``, whose files the tests read (the
enclosing project holds it then). ``<stack>`` is
``demo`` for ``Pulumi.demo.yaml`` (``examples_gke-mpi_demo`` for a project
below the root), else the job file's path below the root without ``.yaml``
(``jobs/mnist.yaml`` → ``jobs_mnist``).

The store never reaches outside its folder: a stack name must be one plain
name (``Pulumi.....yaml`` names the stack ``..`` and is refused), and a
``.trainjobs``, stack folder, ``last.yaml`` or ``key`` that is a symbolic link
is refused rather than followed.

The render is written only after a successful preview, atomically (a
temporary file renamed over the old one), so an interrupted or failed run
leaves the previous render in place.
"""

from __future__ import annotations

import os
import re
import stat
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trainjobs.errors import Finding, SpecError
from trainjobs.k8s.yamlio import YamlSyntaxError, dump_all, load_all
from trainjobs.output import OutputError, file_mode, printable, safe_file_name
from trainjobs.preview.objects import Side, side_from_manifests

__all__ = ["MAX_STORED_BYTES", "STATE_DIR", "Store", "project_root", "stack_name", "state_root"]

STATE_DIR = ".trainjobs"
MAX_STORED_BYTES = 256 << 20
"""The largest ``last.yaml`` a preview reads back (far above any real render's)."""
_STACK_FILE = re.compile(r"^Pulumi\.(.+)\.ya?ml$", re.DOTALL)
_STACK_NAME = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,99}$")
"""A stack name the store accepts: Pulumi's characters, one path component, no leading dot."""
_HEADER = "# The last render `trainjobs preview` saw; Secret values are fingerprints.\n"


def project_root(stack_file: Path) -> Path:
    """The Pulumi project folder of ``stack_file``, else its own folder."""
    folder = stack_file.resolve().parent
    for candidate in (folder, *folder.parents):
        if (candidate / "Pulumi.yaml").is_file():
            return candidate
    return folder


def state_root(stack_file: Path) -> Path:
    """The folder whose ``.trainjobs/`` holds the state of ``stack_file`` (module docstring)."""
    project = project_root(stack_file)
    for candidate in (project, *project.parents):
        if (candidate / ".git").exists():
            return candidate
    lineage = (project, *project.parents)
    for candidate in project.parents:
        # An example of a project (no git here, e.g. an unpacked release): the project's state.
        if candidate / "examples" in lineage and (candidate / "Pulumi.yaml").is_file():
            return candidate
    return project


def stack_name(stack_file: Path, root: Path | None = None) -> str:
    """``demo`` for ``Pulumi.demo.yaml``; for a job file, its path below ``root``.

    A job file ``jobs/mnist.yaml`` gives ``jobs_mnist``: two job files of one
    project never share a store. Raises OutputError for a stack name that is not
    one plain name (``..``, a slash, a control character).
    """
    match = _STACK_FILE.match(stack_file.name)
    if match:
        name = match.group(1)
        if not _STACK_NAME.match(name):
            raise OutputError(
                f"{printable(str(stack_file))}: the stack name {printable(repr(name))} cannot "
                "name a folder of the preview's state: use letters, digits, '-', '_' and "
                "'.', not first; rename the stack file; nothing was written"
            )
        return name
    resolved = stack_file.resolve()
    try:
        relative = resolved.relative_to((root or resolved.parent).resolve())
    except ValueError:
        relative = Path(resolved.name)
    return "_".join(safe_file_name(p) for p in relative.with_suffix("").parts) or "_"


@dataclass(frozen=True)
class Store:
    """The stored state of one stack.

    Attributes:
        directory: ``.trainjobs/<stack>`` (created on the first save).
        stack: the stack's name.
    """

    directory: Path
    stack: str

    @classmethod
    def for_stack(cls, stack_file: Path, state_dir: Path | None = None) -> Store:
        """The store of ``stack_file``, in ``state_dir`` if given, else the project's."""
        root = state_root(stack_file)
        name = stack_name(stack_file, root)
        project = project_root(stack_file)
        if _STACK_FILE.match(stack_file.name) and project != root:
            # A project below the root (an example): its path keeps its stacks apart.
            below = project.relative_to(root).parts
            name = "_".join([*(safe_file_name(p) for p in below), name])
        base = state_dir if state_dir is not None else root / STATE_DIR
        store = cls(base / name, name)
        store.refuse_links()
        return store

    def refuse_links(self) -> None:
        """Raise OutputError when a folder or file of the store is a symbolic link, or a
        file of it is not a regular file (a FIFO would hang the read) or is too large."""
        for path in (self.directory.parent, self.directory, self.render_file, self.key_file):
            if path.is_symlink():
                raise OutputError(
                    f"{printable(str(path))} is a symbolic link; the preview's state is never "
                    "read or written through a link: remove the link (or pass --state-dir) and "
                    "preview again"
                )
        for path in (self.directory.parent, self.directory):
            if path.exists() and not path.is_dir():
                # Deleting the store inside it, as the damaged-store message says, is
                # impossible there: the file is in the way.
                raise OutputError(
                    f"{printable(str(path))} is a file, where the preview keeps its state in "
                    "a folder: pass --state-dir a folder, or move the file away, and preview "
                    "again; nothing was written"
                )
        for path in (self.render_file, self.key_file):
            try:
                info = path.lstat()
            except OSError:
                continue
            if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_STORED_BYTES:
                raise OutputError(
                    f"{printable(str(path))} is not a stored preview (not a regular file, or "
                    f"over {MAX_STORED_BYTES >> 20} MiB): delete {printable(str(self.directory))} "
                    "and preview again"
                )

    @property
    def render_file(self) -> Path:
        return self.directory / "last.yaml"

    @property
    def key_file(self) -> Path:
        return self.directory / "key"

    def key(self) -> bytes:
        """The fingerprint key; a new random one when none is stored yet (saved by ``save``)."""
        try:
            return bytes.fromhex(self.key_file.read_text(encoding="utf-8").strip())
        except (OSError, ValueError):
            return os.urandom(32)

    def load(self) -> Side | None:
        """The stored render, or None when this stack was never previewed."""
        # refuse_links has already refused a link, a FIFO or an oversized file here.
        try:
            text = self.render_file.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
            raise OutputError(
                f"cannot read the stored preview {printable(str(self.render_file))}: {reason}; "
                f"delete {printable(str(self.directory))} and preview again"
            ) from None
        source = str(self.render_file)
        try:
            docs = load_all(text, source)
        except YamlSyntaxError as exc:
            # Parsed with the same bounds as any input: a damaged or replaced last.yaml
            # must be a finding, never a hang or a crash.
            raise SpecError.from_findings(
                [
                    Finding(
                        code="preview.store",
                        path="",
                        message=f"the stored render is damaged: {exc.problem}",
                        hint=f"delete {self.directory} and preview again",
                        source=source,
                    )
                ]
            ) from None
        try:
            return side_from_manifests(((doc, source) for doc in docs), "the last preview")
        except SpecError as exc:
            # The file is trainjobs' own: the way out is a fresh one, whatever is wrong in it.
            fix = f"the stored render is damaged: delete {self.directory} and preview again"
            raise SpecError.from_findings(
                [
                    Finding(f.code, f.path, f.message, f.value, fix, f.severity, f.source)
                    for f in exc.findings
                ]
            ) from None

    def save(self, manifests: Iterable[Mapping[str, Any]], key: bytes) -> None:
        """Replace the stored render (already fingerprinted under ``key``) atomically."""
        self.refuse_links()
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            if not self.key_file.exists():
                _write_atomic(self.key_file, key.hex() + "\n", mode=0o600)
            _write_atomic(self.render_file, _HEADER + dump_all(manifests), file_mode())
        except OSError as exc:
            raise OutputError(
                f"cannot store the preview in {printable(str(self.directory))}: "
                f"{exc.strerror or exc}; the previous one is unchanged (pass --state-dir to "
                "keep it elsewhere)"
            ) from None


def _write_atomic(path: Path, text: str, mode: int = 0o644) -> None:
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
