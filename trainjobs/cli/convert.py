"""``trainjobs convert``: Kubeflow v1 jobs as Trainer v2 TrainJobs."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from trainjobs.cli.common import EXIT_OK, print_findings
from trainjobs.errors import Severity, SpecError

__all__ = ["cmd_convert", "convert_options"]


def convert_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help="a file of jobs or a stack config")
    p.add_argument(
        "--strict",
        action="store_true",
        help="a field the TrainJob cannot carry is an error (exit 2), not a warning",
    )
    p.add_argument(
        "--write",
        action="store_true",
        help="rewrite FILE (and the files a stack's file: entries name) in place; "
        "the diff is printed",
    )


def _write(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` at once (a temporary file renamed over it)."""
    mode = path.stat().st_mode & 0o777
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def cmd_convert(args: argparse.Namespace) -> int:
    """convert Kubeflow v1 jobs to Trainer v2 TrainJobs

    Write the TrainJob (and the TrainingRuntime it needs where no runtime Trainer ships
    fits) for each PyTorchJob, MPIJob (v1, v2beta1), JAXJob and XGBoostJob of FILE; other
    documents are kept. Every field the TrainJob cannot carry is listed (path, value,
    why); --strict makes them errors. A file of jobs is printed converted; a stack
    config (and any file of jobs) is rewritten in place only with --write, its diff
    printed. Kinds no Trainer runtime can run (TFJob, PaddleJob, MXJob, the seed kinds)
    are refused with what to do instead (exit 2, nothing written).
    """
    # Imported here: `trainjobs --help` loads no framework or YAML machinery.
    from trainjobs.convert import convert_text
    from trainjobs.convert.files import diff
    from trainjobs.k8s.yamlio import dump_all, read_bounded
    from trainjobs.spec.load import read_documents

    path = Path(args.file)
    read_documents(path)  # bounded, and a file that is no YAML is a finding
    text = read_bounded(path)
    result = convert_text(text, str(path), path.parent)
    findings = result.findings
    if args.strict:
        findings = [
            f if f.severity is Severity.ERROR else replace(f, severity=Severity.ERROR)
            for f in findings
        ]
    if any(f.severity is Severity.ERROR for f in findings):
        raise SpecError.from_findings(findings)
    print_findings(findings, sys.stderr)
    if not result.converted:
        print("no job to convert (PyTorchJob, MPIJob, JAXJob, XGBoostJob)", file=sys.stderr)
        return EXIT_OK
    if args.write or result.stack:
        for changed, (old, new) in result.texts.items():
            sys.stdout.write(diff(changed, old, new))
        if args.write:
            for changed, (_, new) in result.texts.items():
                _write(changed, new)
        else:
            print("not written: run again with --write to rewrite in place", file=sys.stderr)
        return EXIT_OK
    sys.stdout.write(dump_all(result.objects))
    return EXIT_OK
