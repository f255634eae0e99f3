"""`torchsmith matrix`: combinations of a matrix spec, each validated as its CI job will read
it, and the GitHub Actions workflow / docker-bake.hcl written from them (validated by the real
tools in tests/integration/test_matrix_validate.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from torchsmith.errors import SpecError
from torchsmith.matrix import combinations, load_matrix, render
from torchsmith.matrix.bake import hcl_string
from torchsmith.matrix.combinations import _lossy
from torchsmith.spec_sources import resolve_spec

EXAMPLES = Path(__file__).parents[3] / "examples"
SEED_002 = EXAMPLES / "matrix-seed-002.toml"


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "matrix.toml"
    path.write_text(text)
    return path


def test_seed_002_gives_one_combination_per_arch_set() -> None:
    combos = combinations(load_matrix(SEED_002), SEED_002)
    assert [c.id for c in combos] == ["seed-002-8-6", "seed-002-7-5-8-6"]
    assert [c.spec.spec.gpus for c in combos] == [("8.6",), ("7.5", "8.6")]
    # the seed's own file is the base: torch 1.9.1, as its Makefile example
    assert {c.spec.spec.torch for c in combos} == {"1.9.1"}
    assert {c.spec.spec.backend for c in combos} == {"local"}


def test_the_job_environment_reads_back_as_the_same_spec() -> None:
    for combo in combinations(load_matrix(SEED_002), SEED_002):
        assert resolve_spec(env=combo.env).spec == combo.spec.spec


def test_the_workflow_has_one_job_per_combination_and_only_references() -> None:
    matrix = load_matrix(SEED_002)
    combos = combinations(matrix, SEED_002)
    text = render(matrix, combos, "github-actions")
    flow = yaml.safe_load(text)
    assert list(flow["jobs"]) == [c.id for c in combos]
    job = flow["jobs"]["seed-002-7-5-8-6"]
    assert job["env"]["TORCHSMITH_GPUS"] == "7.5,8.6"
    location = "${{ vars.TORCHSMITH_CACHE_LOCATION || 'none' }}"  # unset: 'none', not ''
    assert job["env"]["TORCHSMITH_CACHE_LOCATION"] == location
    # secrets: in the build step only (not while pip installs or plan runs)
    assert "AWS_SECRET_ACCESS_KEY" not in job["env"]
    with_secrets = [s for s in job["steps"] if "AWS_SECRET_ACCESS_KEY" in s.get("env", {})]
    assert [s["name"] for s in with_secrets] == ["build"]
    assert with_secrets[0]["env"]["AWS_SECRET_ACCESS_KEY"] == (
        "${{ secrets.SCCACHE_AWS_SECRET_ACCESS_KEY }}"
    )
    # torchsmith from the checked-out repository, not an unpinned name from an index
    assert job["steps"][0]["uses"] == "actions/checkout@v4"
    assert job["steps"][1]["run"] == "python -m pip install ."
    uploads = [s for s in job["steps"] if s.get("uses", "").startswith("actions/upload-artifact")]
    assert [u["with"]["path"] for u in uploads] == [
        "dist/seed-002-7-5-8-6",
        ".torchsmith-cache/builds/*/report/",
    ]


def test_the_bake_file_mounts_secrets_and_never_passes_them_as_args() -> None:
    matrix = load_matrix(SEED_002)
    text = render(matrix, combinations(matrix, SEED_002), "bake")
    assert 'target "seed-002-8-6" {' in text
    assert '"id=AWS_SECRET_ACCESS_KEY,env=SCCACHE_AWS_SECRET_ACCESS_KEY"' in text
    assert "AWS_SECRET_ACCESS_KEY =" not in text  # not a build arg (kept in image history)
    assert "--mount=type=secret,id=AWS_SECRET_ACCESS_KEY,env=AWS_SECRET_ACCESS_KEY" in text
    assert 'variable "TORCHSMITH_CACHE_LOCATION"' in text
    assert "COPY . /src/torchsmith" in text  # torchsmith from the build context (this checkout)


@pytest.mark.parametrize(
    "ref", ["s3://bucket", "hunter2", "secrets.A B", "${{ secrets.X }}", "env.X"]
)
def test_a_cache_value_that_is_no_reference_is_refused(tmp_path: Path, ref: str) -> None:
    path = _write(
        tmp_path,
        f'[axes]\npython = ["3.11"]\n[cache.env]\nAWS_SECRET_ACCESS_KEY = {json.dumps(ref)}\n',
    )
    with pytest.raises(SpecError, match="give a reference"):
        load_matrix(path)


def test_a_value_holding_a_ci_expression_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, '[axes]\ntorch = ["2.5.1", "${{ secrets.PYPI_TOKEN }}"]\n')
    with pytest.raises(SpecError, match="CI expression"):
        combinations(load_matrix(path), path)


def test_unknown_axes_and_bad_values_are_all_named(tmp_path: Path) -> None:
    path = _write(tmp_path, '[axes]\npyhton = ["3.11"]\n[cache.env]\nTORCHSMITH_NOPE = "vars.X"\n')
    with pytest.raises(SpecError) as err:
        combinations(load_matrix(path), path)
    text = str(err.value)
    assert "'pyhton' in [axes] is not a build-spec key" in text
    assert "TORCHSMITH_NOPE is no build-spec variable" in text


def test_a_combination_the_spec_refuses_names_itself(tmp_path: Path) -> None:
    path = _write(tmp_path, '[axes]\nptx = ["asked", "sometimes"]\n')
    with pytest.raises(SpecError, match="combination torchsmith-sometimes"):
        combinations(load_matrix(path), path)


def test_hcl_strings_cannot_interpolate() -> None:
    assert hcl_string('a"${b}%{c}') == '"a\\"$${b}%%{c}"'


def test_a_table_in_the_base_is_refused_not_dropped(tmp_path: Path) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text('torch = "2.5.1"\n[[companions]]\nname = "torchvision"\n')
    path = _write(tmp_path, 'spec = "spec.toml"\n[axes]\npython = ["3.11"]\n')
    with pytest.raises(SpecError, match="'companions' is a table"):
        combinations(load_matrix(path), path)


@pytest.mark.parametrize(
    ("requirement", "ok"),
    [
        (".", True),
        ("torchsmith==0.1.0", True),
        ("torchsmith @ https://example.org/t-0.1.0.tar.gz#sha256=" + "a" * 64, True),
        ("git+https://example.org/torchsmith@" + "b" * 40, True),
        ("torchsmith", False),
        ("torchsmith>=0.1", False),
        ("git+https://example.org/torchsmith@main", False),
    ],
)
def test_torchsmith_is_installed_pinned_or_from_the_checkout(
    tmp_path: Path, requirement: str, ok: bool
) -> None:
    path = _write(tmp_path, f'torchsmith = "{requirement}"\n[axes]\npython = ["3.11"]\n')
    if ok:
        assert load_matrix(path).torchsmith == requirement
        return
    with pytest.raises(SpecError, match="is not pinned"):
        load_matrix(path)


def test_a_pinned_requirement_is_installed_in_the_job_and_the_image(tmp_path: Path) -> None:
    path = _write(tmp_path, 'torchsmith = "torchsmith==0.1.0"\n[axes]\npython = ["3.11"]\n')
    matrix = load_matrix(path)
    combos = combinations(matrix, path)
    job = next(iter(yaml.safe_load(render(matrix, combos, "github-actions"))["jobs"].values()))
    assert job["env"]["INSTALL_TORCHSMITH"] == "torchsmith==0.1.0"
    assert "actions/checkout@v4" not in [s.get("uses") for s in job["steps"]]
    assert "ARG INSTALL_TORCHSMITH=torchsmith==0.1.0" in render(matrix, combos, "bake")


def test_a_value_the_job_would_split_is_refused_not_split(tmp_path: Path) -> None:
    path = _write(tmp_path, '[axes]\ntargets = [["c10", "torch_cpu,torch_python"]]\n')
    with pytest.raises(SpecError, match="torch_cpu,torch_python"):
        combinations(load_matrix(path), path)


def test_what_the_job_reads_is_compared_with_what_was_asked() -> None:
    asked = {"torch": "2.5.1", "gpus": ["8.6", "9.0"]}
    read = resolve_spec(env={"TORCHSMITH_TORCH": "2.5.1", "TORCHSMITH_GPUS": "8.6"})
    assert [p.field or p.what.split(":")[0] for p in _lossy(read, asked)] == ["gpus"]
    assert (
        _lossy(resolve_spec(env={"TORCHSMITH_TORCH": "2.5.1", "TORCHSMITH_GPUS": "8.6,9.0"}), asked)
        == []
    )


def test_a_missing_or_unreadable_matrix_spec_says_which(tmp_path: Path) -> None:
    with pytest.raises(SpecError) as missing:
        load_matrix(tmp_path / "nope.toml")
    assert missing.value.problems[0].fix == "check the path given to --spec"
    assert "does not exist" in missing.value.problems[0].what
    with pytest.raises(SpecError, match="is not a file"):
        load_matrix(tmp_path)
    with pytest.raises(SpecError) as bad:
        load_matrix(_write(tmp_path, "not toml"))
    assert bad.value.problems[0].fix == "give a TOML file"
