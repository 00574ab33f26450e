"""Secrets never appear in plain text: not in a render, a snapshot, the CLI's output,
Pulumi's log or any registered input that is not a Pulumi secret.

Generic over every example, stack and platform kind (``corpus.platform_documents``
finds the kinds that generate a value, like a RedisBackend with ``password: true``),
so frameworks and kinds merged later are scanned too. Under Pulumi mocks the
generated values are mock strings; the last tests generate a real ECDSA P-521 key
and a real password, push them through the components, ``preview --live`` and
``diff``, and look for them everywhere.
"""

from __future__ import annotations

import base64
import json
import re
import secrets
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pulumi
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from tests.support import pulumi_harness
from tests.support.corpus import platform_documents, platform_variants, stack_of
from tests.support.paths import ROOT, example_job_files, stack_files
from tests.support.pulumi_harness import run_program
from trainjobs.check import run
from trainjobs.cli import main
from trainjobs.components import TrainingJob, TrainingStack
from trainjobs.components.secrets import has_placeholders
from trainjobs.errors import SpecError
from trainjobs.k8s.generated import parse
from trainjobs.k8s.redact import REDACTED, redact
from trainjobs.k8s.yamlio import dump_all
from trainjobs.render import render
from trainjobs.spec import StackSpec, Target, load_path
from trainjobs.spec.entry import TARGETS

KEY_MATERIAL = [
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
    re.compile(r"\b(ssh-rsa|ssh-ed25519|ssh-dss|ecdsa-sha2-nistp\d+) AAAA"),
    # A long base64 run: a key or certificate body.
    re.compile(r"[A-Za-z0-9+/]{100,}={0,2}"),
]
MOCK_VALUES = re.compile(r"mock-(private-key|public-key|password):")
"""What the Pulumi mocks generate (tests.support.pulumi_harness): never in any output."""


def _inputs() -> Iterator[tuple[str, StackSpec]]:
    """Every example, stack and platform kind's variants, as a stack."""
    for path in [*example_job_files(), *stack_files()]:
        yield path.name, load_path(path)
    for doc in platform_variants():
        yield doc["metadata"]["name"], stack_of([doc])


def _input_files(folder: Path) -> list[Path]:
    """The files of :func:`_inputs`: a platform variant each in a file of its own."""
    files = [*example_job_files(), *stack_files()]
    for doc in platform_variants():
        files.append(folder / f"{doc['metadata']['name']}.yaml")
        files[-1].write_text(dump_all([doc]))
    return files


def _renders() -> Iterator[tuple[str, str, list[dict[str, Any]]]]:
    for name, stack in _inputs():
        for target in TARGETS:
            if all(target in e.framework.targets for e in stack.jobs):
                yield name, target, run(stack, target=target).manifests


def _generating() -> Iterator[tuple[str, Target, StackSpec]]:
    """The inputs (and a target) whose render holds a generated value: only there can
    the mocks hand out a real one."""
    for name, stack in _inputs():
        for target in TARGETS:
            renders = all(target in e.framework.targets for e in stack.jobs)
            if renders and has_placeholders(render(stack, target).manifests):
                yield name, target, stack
                break


def _leaks(text: str) -> list[str]:
    found = [p.pattern for p in KEY_MATERIAL if p.search(text)]
    return found + MOCK_VALUES.findall(text)


def test_renders_hold_placeholders_only() -> None:
    kinds_generated: set[str] = set()
    for name, target, manifests in _renders():
        assert not _leaks(dump_all(manifests)), (name, target)
        for secret in (m for m in manifests if m["kind"] == "Secret"):
            values = {**secret.get("data", {}), **secret.get("stringData", {})}
            if not values:
                continue  # an operator's webhook certificate Secret, filled at run time
            parsed = [parse(v) for v in values.values()]
            assert all(parsed), (name, secret["metadata"])
            assert len({p.group for p in parsed if p}) == 1, secret["metadata"]
            assert set(redact(secret)["stringData"].values()) == {REDACTED}
            kinds_generated |= {p.kind for p in parsed if p}
    # Guards the scan against passing because there is nothing to scan.
    assert {"ecdsa-p521-private", "ecdsa-p521-public", "password"} <= kinds_generated


def test_snapshots_hold_no_secrets() -> None:
    snapshots = [p for p in (ROOT / "tests").rglob("__snapshots__/**/*") if p.is_file()]
    assert snapshots
    for snapshot in snapshots:
        assert not _leaks(snapshot.read_text(errors="replace")), snapshot


def _cli(*args: str) -> tuple[int, str]:
    """Run the CLI, returning its exit code and everything it printed."""
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue() + err.getvalue()


def test_cli_output_holds_no_secrets(tmp_path: Path) -> None:
    for path in map(str, _input_files(tmp_path)):
        for args in (
            ["render", path, "--show-secrets"],
            ["render", path, "-o", str(tmp_path / "out")],
            ["check", path],
            ["preview", path, "--state-dir", str(tmp_path / "state"), "--json"],
        ):
            code, printed = _cli(*args)
            assert code in (0, 1), (args, printed)
            assert not _leaks(printed), args
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert written
    for file in written:
        assert not _leaks(file.read_text(errors="replace")), file


def test_show_secrets_prints_placeholders() -> None:
    path = next(p for p in example_job_files() if p.parent.name == "pytorch-horovod")
    code, printed = _cli("render", str(path), "--target", "pods", "--show-secrets")
    assert code == 0
    assert "ssh-privatekey: <generated:ecdsa-p521-private:training/pytorch-horovod-ssh>" in printed
    code, printed = _cli("render", str(path), "--target", "pods")
    assert "ssh-privatekey: <redacted>" in printed and "<generated:" not in printed


def test_the_mpi_key_pair_is_generated_once_and_applied_as_a_secret() -> None:
    path = next(p for p in example_job_files() if p.parent.name == "pytorch-horovod")
    (entry,) = load_path(path).jobs
    resources = run_program(lambda: TrainingJob("pytorch-horovod", entry.job, target="pods"))
    keys = [r for r in resources if r.type == "pulumi-python:dynamic/trainjobs:GeneratedKeyPair"]
    assert [(k.name, k.inputs["algorithm"]) for k in keys] == [
        ("training/pytorch-horovod-ssh", "ECDSA-P521")
    ]
    assert keys[0].options["secret_outputs"] == ["private_key_pem", "public_key_openssh"]
    (secret,) = [r for r in resources if r.type == "kubernetes:core/v1:Secret"]
    assert secret.options["secret_inputs"] == ["stringData"]
    assert secret.inputs["stringData"] == {
        "ssh-privatekey": "mock-private-key:training/pytorch-horovod-ssh",
        "ssh-publickey": "mock-public-key:training/pytorch-horovod-ssh",
    }


# ----- real secrets ---------------------------------------------------------


class RealSecrets:
    """A real ECDSA P-521 key pair and a real password, and every text they show as."""

    def __init__(self) -> None:
        key = ec.generate_private_key(ec.SECP521R1())
        self.private = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        ).decode()
        self.public = (
            key.public_key()
            .public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
            .decode()
        )
        self.password = secrets.token_urlsafe(24)

    def fragments(self) -> list[str]:
        """The values, their base64, and pieces long enough to identify them."""
        values = [self.private, self.public, self.password]
        found = [*values, *(base64.b64encode(v.encode()).decode() for v in values)]
        found += [line for line in self.private.splitlines() if len(line) > 40]
        found.append(self.public.split()[1][:40])
        return found

    def in_(self, text: str) -> list[str]:
        return [f[:24] for f in self.fragments() if f in text]


@pytest.fixture
def real(monkeypatch: pytest.MonkeyPatch) -> RealSecrets:
    """Real values, which the Pulumi mocks hand out instead of mock strings."""
    values = RealSecrets()
    monkeypatch.setitem(
        pulumi_harness._GENERATED,
        "pulumi-python:dynamic/trainjobs:GeneratedKeyPair",
        {"private_key_pem": values.private, "public_key_openssh": values.public},
    )
    monkeypatch.setitem(
        pulumi_harness._GENERATED,
        "pulumi-python:dynamic/trainjobs:GeneratedPassword",
        {"result": values.password},
    )
    return values


def test_real_generated_values_stay_pulumi_secrets(
    real: RealSecrets, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    published: list[Any] = []
    real_register_outputs = pulumi.ComponentResource.register_outputs

    def recording(self: pulumi.ComponentResource, outputs: Any) -> None:
        published.append(outputs)
        real_register_outputs(self, outputs)

    monkeypatch.setattr(pulumi.ComponentResource, "register_outputs", recording)
    carried = set()
    for name, target, stack in _generating():
        for resource in run_program(partial(TrainingStack, stack, target)):
            for field, value in resource.inputs.items():
                if not real.in_(json.dumps(value)):
                    continue
                assert resource.type == "kubernetes:core/v1:Secret", (name, resource.name)
                assert field in resource.options["secret_inputs"], (name, resource.name)
                carried.add(resource.name)
    assert carried, "no real value reached a Secret: nothing was tested"
    assert not real.in_(json.dumps(published, default=str))
    printed = capfd.readouterr()
    assert not real.in_(printed.out + printed.err)


def _live_secret(manifest: dict[str, Any], real: RealSecrets) -> dict[str, Any]:
    """The Secret as a cluster holds it: real values as base64 ``data``, and the
    last-applied annotation ``kubectl apply`` leaves, which repeats them."""
    names = list({**manifest.get("data", {}), **manifest.get("stringData", {})})
    values = [real.private, real.public, real.password]
    data = {n: base64.b64encode(values[i % 3].encode()).decode() for i, n in enumerate(names)}
    applied = {**manifest, "data": data}
    applied.pop("stringData", None)
    meta = dict(manifest["metadata"])
    meta["annotations"] = {
        "kubectl.kubernetes.io/last-applied-configuration": json.dumps(applied),
    }
    meta["uid"] = "0b1c7a52-0000-4000-8000-000000000000"
    return {"apiVersion": "v1", "kind": "Secret", "metadata": meta, "type": "Opaque", "data": data}


def test_live_preview_never_prints_the_clusters_secrets(
    real: RealSecrets, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trainjobs.preview import live

    served: list[str] = []

    def get(self: live.Kubectl, manifest: dict[str, Any]) -> dict[str, Any] | None:
        if manifest.get("kind") != "Secret":
            return dict(manifest)  # the cluster holds what was rendered
        served.append(manifest["metadata"]["name"])
        return _live_secret(manifest, real)

    monkeypatch.setattr(live.Kubectl, "get", get)
    files = {p.name: p for p in _input_files(tmp_path)}
    for name, target, _ in _generating():
        path = files.get(name) or files[f"{name}.yaml"]
        for extra in ([], ["--json"]):
            state = str(tmp_path / "state")
            args = ["preview", str(path), "--live", "--state-dir", state, "--target", target]
            code, printed = _cli(*args, *extra)
            assert code in (0, 1), printed
            assert not real.in_(printed), (path, extra)
    assert served, "no Secret was read from the cluster: nothing was tested"
    for stored in (tmp_path / "state").rglob("*"):
        if stored.is_file():
            assert not real.in_(stored.read_text(errors="replace")), stored


def test_diff_of_exports_never_prints_their_secrets(real: RealSecrets, tmp_path: Path) -> None:
    found = {
        (m["metadata"]["namespace"], m["metadata"]["name"]): m
        for _, _, manifests in _renders()
        for m in manifests
        if m["kind"] == "Secret"
    }
    rendered = list(found.values())
    assert rendered
    old = [_live_secret(m, real) for m in rendered]
    other = RealSecrets()
    new = [_live_secret(m, other) for m in rendered]
    (tmp_path / "old.yaml").write_text(dump_all(old))
    (tmp_path / "new.yaml").write_text(dump_all(new))
    for extra in ([], ["--json"]):
        code, printed = _cli("diff", str(tmp_path / "old.yaml"), str(tmp_path / "new.yaml"), *extra)
        assert code == 1, printed  # the values changed, and the diff says so
        assert not real.in_(printed) and not other.in_(printed)


def test_a_password_written_into_the_spec_is_not_echoed(real: RealSecrets, tmp_path: Path) -> None:
    redis = next(d for d in platform_documents() if d["kind"] == "RedisBackend")
    wrong = {**redis, "spec": {**redis.get("spec", {}), "password": real.password}}
    path = tmp_path / "backend.yaml"
    path.write_text(dump_all([wrong]))
    code, printed = _cli("check", str(path))
    assert code == 2
    assert "backends[0].spec.password" in printed and "<redacted>" in printed
    assert not real.in_(printed)
    with pytest.raises(SpecError) as err:
        load_path(path)
    assert not real.in_(str(err.value))
