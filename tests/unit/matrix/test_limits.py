"""Issue 28 item 8 (trial M01): a workflow GitHub would not run is refused naming the limit,
and an axis value given twice is refused rather than becoming a second identical job."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from torchsmith.errors import SpecError
from torchsmith.matrix import combinations, load_matrix, render
from torchsmith.matrix.github import MAX_WORKFLOW_BYTES, check_size
from torchsmith.spec_sources import resolve_spec


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "matrix.toml"
    path.write_text('name = "m"\n[base]\ntorch = "2.5.1"\naccelerator = "cpu"\n' + text)
    return path


@pytest.mark.parametrize(
    ("axes", "said"),
    [
        ('python = ["3.11", "3.10", "3.11"]', 'python: "3.11"'),
        ('gpus = [["8.6"], ["9.0"], ["8.6"]]', 'gpus: ["8.6"]'),
    ],
)
def test_a_value_given_twice_is_refused(tmp_path: Path, axes: str, said: str) -> None:
    with pytest.raises(SpecError, match="lists a value twice") as caught:
        load_matrix(_write(tmp_path, f"[axes]\n{axes}\n"))
    assert said in str(caught.value)


def test_distinct_values_give_one_job_each(tmp_path: Path) -> None:
    path = _write(tmp_path, '[axes]\npython = ["3.11", "3.10"]\n')
    combos = combinations(load_matrix(path), path)
    assert len({c.id for c in combos}) == len(combos) == 2


def test_a_workflow_over_githubs_limit_is_refused_naming_it() -> None:
    with pytest.raises(SpecError, match="GitHub does not run a workflow file over 500 KB") as c:
        check_size(2_300_000, 2100)  # M01: 2,100 jobs, 2.3 MB
    assert "about 456 jobs per file" in str(c.value)
    check_size(MAX_WORKFLOW_BYTES, 10)  # at the limit: written


def test_render_checks_the_size(tmp_path: Path) -> None:
    path = _write(tmp_path, '[axes]\npython = ["3.11"]\nmax_jobs = [1, 2]\n')
    matrix = load_matrix(path)
    combos = combinations(matrix, path)
    assert render(matrix, combos, "github-actions").startswith("# generated")
    with pytest.raises(SpecError, match="500 KB"):
        many = [dataclasses.replace(combos[0], id=f"job-{i}") for i in range(1200)]
        render(matrix, many, "github-actions")


def test_an_unset_ci_variable_reaches_a_job_as_none_not_blank() -> None:
    """GitHub renders an unset vars.X as ''; TORCHSMITH_X='' is refused as blank (item 4)."""
    examples = Path(__file__).parents[3] / "examples" / "matrix-seed-002.toml"
    matrix = load_matrix(examples)
    combos = combinations(matrix, examples)
    text = render(matrix, combos, "github-actions")
    assert "${{ vars.TORCHSMITH_CACHE_LOCATION || 'none' }}" in text
    assert "${{ secrets.SCCACHE_AWS_ACCESS_KEY_ID }}" in text  # not a spec variable: as is
    env = {**combos[0].env, "TORCHSMITH_CACHE_LOCATION": "none"}
    assert resolve_spec(env=env).spec.cache.location is None
    bake = render(matrix, combos, "bake")
    assert 'variable "TORCHSMITH_CACHE_LOCATION" {\n  default = "none"' in bake
