from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from trainjobs.k8s.names import (
    dns1035_label_problem,
    dns1123_label_problem,
    dns1123_subdomain_problem,
    label_key_problem,
    label_value_problem,
    labelled_name_problem,
    shorten,
)


def test_dns_rules() -> None:
    assert dns1035_label_problem("mnist-worker-0") is None
    assert dns1035_label_problem("0mnist") is not None
    assert dns1123_label_problem("0mnist") is None
    assert dns1123_label_problem("Mnist") == (
        "must be a DNS-1123 label: lowercase letters, digits and '-', starting and ending "
        "with a letter or digit (e.g. 'mnist')"
    )
    assert dns1123_subdomain_problem("a.b-c") is None
    assert dns1123_subdomain_problem("a..b") is not None
    assert dns1035_label_problem("a" * 64) == "must be at most 63 characters, has 64"


def test_label_rules() -> None:
    assert label_value_problem("") is None
    assert label_value_problem("1") is None
    assert label_value_problem("-x") is not None
    assert label_key_problem("training.kubeflow.org/job-name") is None
    assert (
        label_key_problem("Bad Prefix/x") == "the prefix 'Bad Prefix' must be a DNS-1123 subdomain"
    )


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=200))
def test_shorten_is_deterministic_and_fits(name: str) -> None:
    short = shorten(name)
    assert short == shorten(name)
    assert len(short) <= 63
    if len(name) <= 63:
        assert short == name


@given(
    st.lists(
        st.text(alphabet="ab-", min_size=64, max_size=90), min_size=2, max_size=20, unique=True
    )
)
def test_shorten_never_collides(names: list[str]) -> None:
    assert len({shorten(n) for n in names}) == len(names)


def test_a_labelled_name_is_a_subdomain_that_fits_a_label() -> None:
    assert labelled_name_problem("mnist.v2") is None
    assert labelled_name_problem("a" * 64) == "must be at most 63 characters, has 64"
    assert labelled_name_problem("Mnist") == dns1123_subdomain_problem("Mnist")
