"""Accepted means done: what the pipeline cannot carry out yet is refused at plan time, one
test per kind (backend, output, companion, step, spec key), never dropped."""

from __future__ import annotations

from pathlib import Path
from typing import Any, get_args

import pytest

from tests.unit.planner.kb import ci_host, mini_kb
from torchsmith import kb
from torchsmith.backends import EXECUTORS
from torchsmith.errors import PlanError
from torchsmith.host.model import HostFacts
from torchsmith.plan_model import BuildPlan, SourcePlan, StepName
from torchsmith.planner import resolve
from torchsmith.planner.support import KNOWLEDGE_ONLY, PIPELINE
from torchsmith.spec import Output, TrainingImage
from torchsmith.spec_sources import resolve_spec

ROOT = Path(__file__).resolve().parents[3]
HOST = ROOT / "tests" / "fixtures" / "plan" / "host-ci.json"


def plan(**cli: Any) -> BuildPlan:
    return resolve(resolve_spec(cli=cli), mini_kb(), ci_host())


def refusal(**cli: Any) -> str:
    with pytest.raises(PlanError) as info:
        plan(**cli)
    return info.value.render()


def test_the_pipeline_capabilities_are_the_real_registries() -> None:
    assert PIPELINE.backends == set(EXECUTORS)
    assert PIPELINE.steps == set(get_args(StepName))
    assert PIPELINE.outputs <= set(get_args(Output))


def test_backend_the_pipeline_cannot_run_is_refused() -> None:
    text = refusal(torch="2.5.1", accelerator="cpu", backend="docker")
    assert "backend 'docker': `torchsmith build` runs on this machine" in text
    assert "`torchsmith image` runs the build in a container" in text  # no loop with `plan`
    assert "--backend local" in text
    text = refusal(torch="2.5.1", accelerator="cpu", backend="apptainer")
    assert "backend 'apptainer'" in text and "not carried out yet" in text
    assert "torchsmith image" not in text


@pytest.mark.parametrize(
    ("key", "value", "flag"),
    [("engine", "buildah", "--engine"), ("base_image", "debian:12", "--base-image")],
)
def test_container_keys_on_a_local_build_are_refused(key: str, value: str, flag: str) -> None:
    text = refusal(torch="2.5.1", accelerator="cpu", **{key: value})
    assert f"{key} ({flag}) applies to container builds" in text and "ignored" in text
    assert "torchsmith image" in text


def test_training_images_on_a_local_build_are_refused() -> None:
    text = refusal(torch="2.5.1", accelerator="cpu", images=(TrainingImage(name="train"),))
    assert "images ([[images]]) applies to container builds" in text


def test_output_the_pipeline_cannot_make_is_refused() -> None:
    text = refusal(torch="2.5.1", accelerator="cpu", outputs=("wheel", "docker-image"))
    assert "outputs docker-image: only wheels, conda packages and installs are produced" in text
    assert "--output wheel" in text


def test_install_output_needs_an_interpreter() -> None:
    text = refusal(torch="2.5.1", accelerator="cpu", outputs=("wheel", "install"))
    assert "output install: no interpreter" in text and "--install-python" in text


def test_install_output_plans_an_install_step_after_publish() -> None:
    p = plan(torch="2.5.1", accelerator="cpu", outputs=("install",), install_python="/v/bin/python")
    assert [s.name for s in p.steps][-5:] == ["repair", "verify", "publish", "install", "attest"]
    assert "/v/bin/python" in p.steps[-2].what and p.install_python == "/v/bin/python"
    assert p.plan_hash() == plan(torch="2.5.1", accelerator="cpu").plan_hash()  # same build


def test_install_output_of_a_partial_build_is_refused() -> None:
    text = refusal(torch="2.5.1", accelerator="cpu", outputs=("install",),
                   install_python="/v/bin/python", targets=("c10",))  # fmt: skip
    assert "partial build makes no wheel" in text


def test_every_wheel_build_is_repaired_a_partial_build_is_not() -> None:
    names = [s.name for s in plan(torch="2.5.1", accelerator="cpu").steps]
    assert names.index("package") + 1 == names.index("repair") == names.index("verify") - 1
    partial = plan(torch="2.5.1", accelerator="cpu", targets=("c10",))
    assert "repair" not in [s.name for s in partial.steps]


def test_companions_of_a_torch_build_from_git_come_from_git_too() -> None:
    """Issue 24: `plan --torch 2.0.0 --cpu --with torchvision` (default --source git) plans
    torchvision 0.15.1 from pytorch/vision's tag v0.15.1 (it looped between sources before)."""
    cli = {"torch": "2.0.0", "accelerator": "cpu", "companions": ("torchvision",)}
    p = resolve(resolve_spec(cli=cli), kb.load(), ci_host())
    assert p.companion_build is not None
    [vision] = p.companion_build.builds
    assert vision.version == "0.15.1" and vision.source is not None
    assert (vision.source.kind, vision.source.ref) == ("git", "v0.15.1")


VISION_STEPS = [
    "torchvision-environment",
    "torchvision-fetch",
    "torchvision-compile",
    "torchvision-repair",
    "torchvision-verify",
    "torchvision-publish",
]


def real_plan(**cli: Any) -> BuildPlan:
    host = HostFacts.model_validate_json(HOST.read_text())
    return resolve(resolve_spec(cli=cli), kb.load(), host)


def test_torch_and_its_companions_in_one_run() -> None:
    p = real_plan(torch="1.13.1", accelerator="cpu", source="debian", companions=("torchvision",))
    labels = [s.label for s in p.steps]
    assert labels[labels.index("publish") + 1 :] == [*VISION_STEPS, "attest"]
    build = p.companion_build
    assert build is not None and build.torch.kind == "build" and build.torch.location == ""
    assert (build.torch.version, build.torch.python) == ("1.13.1", p.python.value)
    assert [(b.name, b.version, b.suite) for b in build.builds] == [
        ("torchvision", "0.14.1", "bookworm")
    ]
    env = {v.name: v.value for v in build.builds[0].env}
    assert env["PYTORCH_VERSION"] == "1.13.1" and env["FORCE_CUDA"] == "0"


def test_debian_tree_for_the_suites_python_uses_the_system_python3() -> None:
    p = real_plan(torch="1.13.1", accelerator="cpu", source="debian")
    assert p.python.value == "3.11" and p.source.system_python
    assert "numpy-below-2" not in {f.id for f in p.fixes}
    same = real_plan(torch="1.13.1", accelerator="cpu", source="debian", python="3.11")
    assert same.source.system_python


def test_debian_tree_for_another_python_fills_a_venv_from_pypi() -> None:
    p = real_plan(torch="1.13.1", accelerator="cpu", source="debian", python="3.10")
    assert (p.python.value, p.python.origin, p.source.system_python) == ("3.10", "user", False)
    assert "from PyPI" in p.python.reason
    assert "numpy-below-2" in {f.id for f in p.fixes}  # 1.13 does not build against NumPy 2


def test_debian_tree_for_a_python_the_build_machine_lacks_is_refused() -> None:
    host = HostFacts.model_validate_json(HOST.read_text())
    host = host.model_copy(update={"pythons": [p for p in host.pythons if p.minor != "3.10"]})
    spec = resolve_spec(cli={"torch": "1.13.1", "accelerator": "cpu", "source": "debian",
                             "python": "3.10"})  # fmt: skip
    with pytest.raises(PlanError) as info:
        resolve(spec, kb.load(), host)
    text = info.value.render()
    assert "the build machine has none (Pythons there: 3.6, 3.7, 3.8, 3.9, 3.11" in text
    assert "pyenv install 3.10" in text and "drop --python" in text


def test_debian_tree_for_another_python_in_a_container_is_refused() -> None:
    """build --backend docker: the torchsmith inside builds with the image's own python3
    (bookworm's 3.11); `torchsmith image` would install Python 3.10 with uv instead."""
    from torchsmith.container import routes
    from torchsmith.container.images import load_images

    rs = resolve_spec(cli={"torch": "1.13.1", "accelerator": "cpu", "source": "debian",
                           "python": "3.10", "backend": "docker"})  # fmt: skip
    with pytest.raises(PlanError) as info:
        routes.for_working_container(rs, kb.load(), load_images(), ci_host())
    text = info.value.render()
    assert "builds with the image's own python3" in text and "torchsmith image" in text


def test_debian_tree_for_a_python_the_release_does_not_support_is_refused() -> None:
    with pytest.raises(PlanError) as info:
        real_plan(torch="1.13.1", accelerator="cpu", source="debian", python="3.12")
    assert "3.12" in info.value.render()


def test_plans_written_before_system_python_keep_debians_python3() -> None:
    data = {"kind": "debian", "location": "pytorch", "ref": "1.13.1+dfsg-4", "reason": "r"}
    assert SourcePlan.model_validate(data).system_python
    assert not SourcePlan.model_validate({**data, "kind": "git"}).system_python


def test_one_run_companions_with_cuda_get_the_torchs_toolkit_and_archs() -> None:
    one = {"torch": "1.13.1", "source": "debian", "companions": ("torchvision",)}
    p = real_plan(accelerator="11.8", gpus=("8.6",), **one)
    labels = [s.label for s in p.steps]
    assert labels.index("toolchain") < labels.index("torchvision-compile")
    assert labels[-len(VISION_STEPS) - 1 : -1] == VISION_STEPS and labels.count("toolchain") == 1
    build = p.companion_build
    assert build is not None and (build.cuda, build.arch_list) == ("11.8", p.arch_list)
    assert build.torch.cuda == "11.8"
    env = {v.name: v.value for v in build.builds[0].env}
    assert env["FORCE_CUDA"] == "1" and env["TORCH_CUDA_ARCH_LIST"] == p.arch_list


def test_one_run_companions_are_refused_with_a_partial_build() -> None:
    one = {"torch": "1.13.1", "source": "debian", "companions": ("torchvision",)}
    with pytest.raises(PlanError, match="a partial build makes no torch wheel"):
        real_plan(accelerator="cpu", targets=("c10",), **one)


def test_pip_deps_is_refused_where_the_kb_records_no_nvidia_wheel_versions() -> None:
    text = refusal(torch="2.5.1", accelerator="12.4", gpus=("8.6",), **{"linking.cuda": "pip-deps"})
    assert "linking.cuda" in text and "no official nvidia-* pins are recorded" in text
    assert "--link cuda=dynamic" in text
    for lib in ("cudnn", "nccl"):  # accepted means done: not silently built as dynamic
        other = refusal(
            torch="2.5.1", accelerator="12.4", gpus=("8.6",), **{f"linking.{lib}": "pip-deps"}
        )
        assert f"linking {lib}=pip-deps" in other and f"--link {lib}=static" in other


def test_spec_key_toolkit_container_is_refused() -> None:
    text = refusal(torch="2.5.1", accelerator="12.4", gpus=("8.6",), toolkit="container")
    assert "toolkit 'container'" in text


def test_spec_key_cache_dir_is_carried_into_the_plan() -> None:
    p = plan(torch="2.5.1", accelerator="cpu", **{"cache.dir": "/srv/ccache"})
    assert p.cache_dir == "/srv/ccache"
    assert p.plan_hash() == plan(torch="2.5.1", accelerator="cpu").plan_hash()


def test_every_problem_is_reported_at_once() -> None:
    with pytest.raises(PlanError) as info:
        plan(torch="2.5.1", accelerator="cpu", backend="docker", outputs=("docker-image",),
             companions=("torchvision",))  # fmt: skip
    # the companions would be built in the container's image: no companion step is planned
    assert [p.field for p in info.value.problems] == ["backend", "outputs"]


SEEDS = sorted((ROOT / "examples").glob("seed-*.toml"))


@pytest.mark.parametrize("spec_file", SEEDS, ids=[p.stem for p in SEEDS])
def test_seed_specs_run_or_are_refused_by_name(spec_file: Path) -> None:
    host = HostFacts.model_validate_json(HOST.read_text())
    spec = resolve_spec(file=spec_file)
    resolve(spec, kb.load(), host, can=KNOWLEDGE_ONLY)  # the knowledge plans them all
    if (
        spec.spec.backend == "local"
        and spec.spec.outputs == ("wheel",)
        and not spec.spec.companions
    ):
        assert resolve(spec, kb.load(), host).steps
        return
    refused = r"not carried out yet|only wheels|not yet built|`torchsmith image` runs the build"
    with pytest.raises(PlanError, match=refused):
        resolve(spec, kb.load(), host)
