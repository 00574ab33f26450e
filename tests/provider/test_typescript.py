"""tsc type-checks examples/typescript-platform against the SDK generated from the schema.

The schema's types reach a TypeScript user: the example compiles, and a misspelt field
deep in a job or a value outside an enum is refused by ``tsc`` with its place.
"""

from __future__ import annotations

from pathlib import Path

from tests.provider.typescript import compile_copy, copy_example


def test_the_example_compiles(tmp_path: Path) -> None:
    example = copy_example(tmp_path)
    proc = compile_copy(example)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (example / "bin" / "examples" / "typescript-platform" / "automation.js").is_file()


def _broken(tmp_path: Path, old: str, new: str) -> str:
    example = copy_example(tmp_path)
    program = example / "platform.ts"
    text = program.read_text()
    assert text.count(old) == 1, old
    program.write_text(text.replace(old, new))
    proc = compile_copy(example)
    assert proc.returncode != 0, "tsc accepted the broken program"
    return proc.stdout + proc.stderr


def test_a_misspelt_field_is_a_type_error(tmp_path: Path) -> None:
    out = _broken(tmp_path, "Worker: { replicas: 2,", "Worker: { replica: 2,")
    assert "platform.ts(" in out and "'replica'" in out, out


def test_a_value_outside_an_enum_is_a_type_error(tmp_path: Path) -> None:
    out = _broken(tmp_path, 'restartPolicy: "OnFailure"', 'restartPolicy: "OnFailures"')
    assert "platform.ts(" in out and '"OnFailures"' in out, out
