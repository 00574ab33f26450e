"""Run every output command of ``trainjobs`` over a set of inputs in one interpreter, and
record a digest of everything it writes: ``python -m tests.support.determinism OUT
[--prefix PREFIX] [--render-only] INPUT...``.

tests/test_determinism.py starts this under different environments (hash seed, locale,
time zone, umask, working folder, path form, HOME, terminal width) and compares the
records. One interpreter per environment keeps that fast; stdout and stderr are caught
at the file descriptor, so the interpreter's own streams (their encoding, whether they
are a terminal) are what the commands write to, as in a real run. Under
``PYTHONWARNDEFAULTENCODING=1``, trainjobs opening a file in the locale's encoding is an
error of the command that does it.

Per input (given as PREFIX + INPUT): ``render`` to stdout and ``-o DIR``, ``check
--output json``, ``graph`` (Mermaid on stdout, ``-o FILE.dot``), ``diff --json`` of its
render folder against the previous input's; then ``crds`` and ``crds -o DIR`` once
(``--render-only``: the two renders and ``check``).
``OUT/record.json`` maps a key (``render/INPUT``, ``render-o/INPUT/FILE``) to the exit code
and the SHA-256 of stdout (or of a written file, with its mode). OUT and PREFIX are cut
out of what is hashed: a message may name the paths as they were given, so the records
of two path forms compare equal exactly when nothing else differs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

from trainjobs.cli import main as cli

__all__ = ["main"]


def _run(argv: list[str], cut: list[str]) -> tuple[object, bytes, bytes]:
    """``trainjobs ARGV``'s exit code, stdout and stderr, with each string of ``cut``
    removed from both."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        try:
            code: object = cli(argv)
        except SystemExit as exc:  # argparse refusing the command line
            code = exc.code
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
        out.seek(0)
        err.seek(0)
        texts = out.read(), err.read()
    for text in cut:
        texts = tuple(t.replace(text.encode(), b"") for t in texts)  # type: ignore[assignment]
    return code, texts[0], texts[1]


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.support.determinism")
    parser.add_argument("out", help="a folder for the outputs and record.json")
    parser.add_argument("inputs", nargs="+", metavar="INPUT")
    parser.add_argument("--prefix", default="", help="put before each INPUT (a path form)")
    parser.add_argument(
        "--render-only", action="store_true", help="render (stdout, -o) and check only"
    )
    args = parser.parse_args(argv)
    out, prefix, inputs = args.out, args.prefix, args.inputs
    # With PYTHONWARNDEFAULTENCODING=1, a file trainjobs opens in the locale's encoding
    # (no encoding=) fails the command it happens in, and so the comparison.
    warnings.filterwarnings("error", category=EncodingWarning, module=r"trainjobs(\.|$)")
    root = Path(out).resolve()
    root.mkdir(parents=True, exist_ok=True)
    # Longest first: the OUT folder may itself lie below PREFIX.
    cut = sorted({f"{root}/", *([prefix] if prefix else [])}, key=len, reverse=True)
    record: dict[str, Any] = {}

    def run(key: str, command: list[str]) -> object:
        code, stdout, stderr = _run(command, cut)
        record[key] = {"exit": code, "stdout": _digest(stdout), "stderr": stderr.decode()}
        return code

    def files(key: str, path: Path) -> None:
        found = sorted(path.rglob("*")) if path.is_dir() else [path]
        for file in found:
            info = file.lstat()
            name = file.relative_to(path).as_posix() if path.is_dir() else file.name
            data = file.read_bytes() if file.is_file() else b""
            for text in cut:
                data = data.replace(text.encode(), b"")
            record[f"{key}/{name}"] = {"mode": oct(info.st_mode), "sha256": _digest(data)}

    previous: Path | None = None
    for index, name in enumerate(inputs):
        path = prefix + name
        folder = root / f"render-{index}"
        run(f"render/{name}", ["render", path])
        if run(f"render-o/{name}", ["render", path, "-o", str(folder)]) == 0:
            files(f"render-o/{name}", folder)
            if previous is not None:
                run(f"diff/{name}", ["diff", "--json", str(previous), str(folder)])
            previous = folder
        run(f"check/{name}", ["check", "--output", "json", path])
        if args.render_only:
            continue
        run(f"graph/{name}", ["graph", path])
        dot = root / f"graph-{index}.dot"
        if run(f"graph-dot/{name}", ["graph", path, "-o", str(dot)]) == 0:
            files(f"graph-dot/{name}", dot)
    if not args.render_only:
        run("crds", ["crds"])
        if run("crds-o", ["crds", "-o", str(root / "crds")]) == 0:
            files("crds-o", root / "crds")
    (root / "record.json").write_text(
        json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
