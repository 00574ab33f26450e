"""The last render ``trainjobs preview`` saw for each stack, under ``.trainjobs/``.

Layout: ``<project>/.trainjobs/<stack>/last.yaml`` (the render as a YAML
stream, Secret values as fingerprints) and ``key`` (the fingerprint key,
random, readable by its owner only). ``<project>`` is the nearest folder above
the stack file holding a ``Pulumi.yaml``, else the stack file's folder;
``.trainjobs/`` is git-ignored. ``<stack>`` is ``demo`` for
``Pulumi.demo.yaml``, else the job file's path in the project without
``.yaml`` (``jobs/mnist.yaml`` → ``jobs_mnist``).

The render is written only after a successful preview, atomically (a
temporary file renamed over the old one), so an interrupted or failed run
leaves the previous render in place.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trainjobs.errors import Finding, SpecError
from trainjobs.k8s.yamlio import InputError, YamlSyntaxError, dump_all, load_all, read_bounded
from trainjobs.preview.objects import Side, side_from_manifests

__all__ = ["STATE_DIR", "Store", "project_root", "stack_name"]

STATE_DIR = ".trainjobs"
_STACK_FILE = re.compile(r"^Pulumi\.(.+)\.ya?ml$")
_HEADER = "# The last render `trainjobs preview` saw; Secret values are fingerprints.\n"


def project_root(stack_file: Path) -> Path:
    """The Pulumi project folder of ``stack_file``, else its own folder."""
    folder = stack_file.resolve().parent
    for candidate in (folder, *folder.parents):
        if (candidate / "Pulumi.yaml").is_file():
            return candidate
    return folder


def stack_name(stack_file: Path, root: Path | None = None) -> str:
    """``demo`` for ``Pulumi.demo.yaml``; for a job file, its path below ``root``.

    A job file ``jobs/mnist.yaml`` gives ``jobs_mnist``: two job files of one
    project never share a store.
    """
    match = _STACK_FILE.match(stack_file.name)
    if match:
        return match.group(1)
    resolved = stack_file.resolve()
    try:
        relative = resolved.relative_to((root or resolved.parent).resolve())
    except ValueError:
        relative = Path(resolved.name)
    return "_".join(relative.with_suffix("").parts) or resolved.name


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
        root = project_root(stack_file)
        name = stack_name(stack_file, root)
        base = state_dir if state_dir is not None else root / STATE_DIR
        return cls(base / name, name)

    @property
    def render_file(self) -> Path:
        return self.directory / "last.yaml"

    @property
    def key_file(self) -> Path:
        return self.directory / "key"

    def key(self) -> bytes:
        """The fingerprint key; a new random one when none is stored yet (saved by ``save``)."""
        try:
            return bytes.fromhex(self.key_file.read_text().strip())
        except (OSError, ValueError):
            return os.urandom(32)

    def load(self) -> Side | None:
        """The stored render, or None when this stack was never previewed."""
        if not self.render_file.exists() and not self.render_file.is_symlink():
            return None
        source = str(self.render_file)
        try:
            docs = load_all(read_bounded(self.render_file), source)
        except (InputError, YamlSyntaxError) as exc:
            # Read with the same bounds as any input: a damaged, huge or replaced
            # last.yaml must be a finding, never a hang or a crash.
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
            # Its hints are for a render output a user passed; this one trainjobs wrote.
            raise SpecError.from_findings(
                Finding(
                    code="preview.store",
                    path=f.path,
                    message=f"the stored render is damaged: {f.message}",
                    hint=f"delete {self.directory} and preview again",
                    source=source,
                )
                for f in exc.errors
            ) from None

    def save(self, manifests: Iterable[Mapping[str, Any]], key: bytes) -> None:
        """Replace the stored render (already fingerprinted under ``key``) atomically."""
        self.directory.mkdir(parents=True, exist_ok=True)
        if not self.key_file.exists():
            _write_atomic(self.key_file, key.hex() + "\n", mode=0o600)
        _write_atomic(self.render_file, _HEADER + dump_all(manifests))


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
