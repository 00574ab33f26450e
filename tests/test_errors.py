from __future__ import annotations

from trainjobs.errors import (
    NO_VALUE,
    Finding,
    Rule,
    Severity,
    SpecError,
    format_path,
)


def test_finding_renders_path_value_rule_and_fix() -> None:
    finding = Finding(
        code="x",
        path="spec.tfReplicaSpecs.Worker.replicas",
        message="must be at least 1",
        value=-1,
        hint="set it to 1 or more",
        source="jobs.yaml",
    )
    assert finding.render() == (
        "error: jobs.yaml: spec.tfReplicaSpecs.Worker.replicas: must be at least 1 (got -1); "
        "fix: set it to 1 or more"
    )


def test_located_prefixes_paths() -> None:
    finding = Finding(code="x", path="spec.a", message="m")
    assert finding.located("f.yaml", "jobs[0]").path == "jobs[0].spec.a"
    assert Finding(code="x", path="[1]", message="m").located("", "jobs").path == "jobs[1]"
    assert Finding(code="x", path="", message="m").located("", "jobs[0]").path == "jobs[0]"


def test_spec_error_counts_only_errors() -> None:
    error = SpecError.from_findings(
        [
            Finding(code="a", path="p", message="m"),
            Finding(code="b", path="p", message="m", severity=Severity.WARNING),
        ]
    )
    assert len(error.errors) == 1
    assert str(error).splitlines()[0] == "1 error in the input"


def test_format_path_quotes_odd_keys() -> None:
    assert format_path(["spec", "tfReplicaSpecs", "Worker", "replicas"]) == (
        "spec.tfReplicaSpecs.Worker.replicas"
    )
    assert format_path(["labels", "a.b/c", 0]) == "labels['a.b/c'][0]"


def test_values_of_secret_named_fields_are_never_shown() -> None:
    shown = Finding("x", "backends[0].spec.password", "input should be a valid boolean", "hunter2")
    assert shown.render() == (
        "error: backends[0].spec.password: input should be a valid boolean (got <redacted>)"
    )
    for path in ("a.apiToken", "a.privateKey", "a['client-secret']", "a.credentials[0]"):
        assert "<redacted>" in Finding("x", path, "m", "v").render(), path
    assert "(got 'v')" in Finding("x", "jobs[0].metadata.name", "m", "v").render()


def test_an_env_vars_value_is_never_repeated_in_a_finding() -> None:
    # The path names the entry (env[2]), not the variable: REDIS_PASSWORD's value must
    # not reach a CI log through a finding about it.
    from trainjobs.errors import Finding

    for path in ("spec.containers[0].env[2].value", "spec.containers[0].env[2]", "env[0]"):
        shown = str(Finding("x", path, "bad", "hunter2", "fix it"))
        assert "hunter2" not in shown
        assert "<redacted>" in shown
    assert "img:1" in str(Finding("x", "spec.containers[0].image", "bad", "img:1", "fix it"))


def test_a_rule_fills_its_templates_at_each_place() -> None:
    rule = Rule(
        "x.missing", "the runtime {runtime!r} has no job {name!r}", hint="use one of {known}"
    )
    found = rule.at("spec.a[0].name", "b", runtime="rt", name="b", known="a, c")
    assert found == Finding(
        code="x.missing",
        path="spec.a[0].name",
        message="the runtime 'rt' has no job 'b'",
        value="b",
        hint="use one of a, c",
    )


def test_a_rule_without_a_value_or_hint() -> None:
    found = Rule("x.warn", "only {n} nodes", severity=Severity.WARNING).at("spec", n=2)
    assert found.value is NO_VALUE and found.hint == "" and found.severity is Severity.WARNING
    assert found.message == "only 2 nodes"
