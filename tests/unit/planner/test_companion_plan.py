"""Planning companions against a given torch (``--against``, issue 11): the torch's facts as
inspect read them (a recorded `torchsmith inspect --json` of PyPI's torch 2.6.0 cp311 wheel),
the KB's pairing refused before any download, each companion's environment with reasons."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from torchsmith import kb
from torchsmith.companions.facts import facts_of, wheel_version_and_python
from torchsmith.errors import PlanError, UsageError
from torchsmith.host.model import HostFacts
from torchsmith.inspect.model import Inspection
from torchsmith.plan_model import BuildPlan
from torchsmith.plan_types import TorchFacts
from torchsmith.planner import resolve
from torchsmith.planner.companions import companion_env
from torchsmith.spec_sources import resolve_spec

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "tests" / "fixtures" / "companions"
HOST = ROOT / "tests" / "fixtures" / "plan" / "host-ci.json"
WHEEL = "/dist/torch-2.6.0-cp311-cp311-manylinux1_x86_64.whl"


def torch_260() -> TorchFacts:
    insp = Inspection.model_validate_json(
        (FIXTURES / "inspect-torch-2.6.0-cp311-wheel.json").read_text()
    )
    version, python = wheel_version_and_python(Path(WHEEL))
    return facts_of("wheel", WHEEL, insp, version).model_copy(update={"python": python})


def plan(facts: TorchFacts | None = None, **cli: Any) -> BuildPlan:
    host = HostFacts.model_validate_json(HOST.read_text())
    cli = {"against": WHEEL, "source": "debian", "accelerator": "cpu", **cli}
    return resolve(resolve_spec(cli=cli), kb.load(), host, against=facts or torch_260())


def refusal(**cli: Any) -> str:
    with pytest.raises(PlanError) as info:
        plan(**cli)
    return info.value.render()


def test_the_wheel_name_gives_the_metadata_version_and_python() -> None:
    assert wheel_version_and_python(Path(WHEEL)) == ("2.6.0", "3.11")
    with pytest.raises(UsageError, match="not torch"):
        wheel_version_and_python(Path("/d/torchvision-0.21.0-cp311-cp311-linux_x86_64.whl"))


def test_the_plan_takes_torch_from_the_inspected_wheel() -> None:
    p = plan(companions=("torchvision",))
    assert p.torch.value == "2.6.0" and p.torch.origin == "host"
    assert "2.6.0+cu124" in p.torch.reason
    assert p.python.value == "3.11"
    assert [s.name for s in p.steps] == [
        "environment",
        "fetch",
        "compile",
        "repair",
        "verify",
        "publish",
        "attest",
    ]
    assert {s.subject for s in p.steps[:-1]} == {"torchvision"} and p.steps[-1].subject is None
    build = p.companion_build
    assert build is not None and build.torch.cuda == "12.4"
    [vision] = build.builds
    assert (vision.name, vision.version, vision.package) == (
        "torchvision",
        "0.21.0",
        "pytorch-vision",
    )
    assert (vision.debian_version, vision.suite) == ("0.21.0-3", "trixie")


def test_every_companion_variable_has_a_reason_and_pins_torch() -> None:
    build = plan(companions=("torchvision",)).companion_build
    assert build is not None
    [vision] = build.builds
    env = {v.name: v for v in vision.env}
    assert env["PYTORCH_VERSION"].value == "2.6.0"
    assert env["BUILD_VERSION"].value == "0.21.0"
    assert env["MAX_JOBS"].value == str(build.max_jobs)
    assert all(v.reason for v in vision.env)
    assert env["FORCE_CUDA"].value == "0"
    assert "pytorch/vision@v0.21.0:setup.py" in env["FORCE_CUDA"].reason


def test_the_torchaudio_environment_would_pin_torch_and_leave_cuda_off() -> None:
    env = {v.name: v.value for v in companion_env("torchaudio", "2.6.0", torch_260(), 2)}
    assert env["PYTORCH_VERSION"] == "2.6.0" and env["USE_CUDA"] == "0"
    assert env["BUILD_SOX"] == "0"  # else CMake downloads sox from SourceForge


def test_torchaudio_against_a_cuda_torch_needs_its_toolkit_with_the_measured_cause() -> None:
    text = refusal(companions=("torchvision", "torchaudio"))
    assert "torchaudio against the CUDA 12.4 torch needs its CUDA toolkit" in text
    assert "Caffe2Config.cmake" in text and "add --cuda 12.4" in text


def test_a_companion_version_the_kb_does_not_pair_is_refused_naming_the_right_one() -> None:
    text = refusal(companions=("torchvision==0.20.1",))
    assert "torchvision 0.20.1 does not match torch 2.6.0" in text
    assert "torchvision==0.21.0" in text


def test_a_cuda_torch_needs_an_explicit_cpu_for_cpu_only_companions() -> None:
    host = HostFacts.model_validate_json(HOST.read_text())
    cli = {"against": WHEEL, "source": "debian", "companions": ("torchvision",)}
    with pytest.raises(PlanError) as info:
        resolve(resolve_spec(cli=cli), kb.load(), host, against=torch_260())
    assert "CUDA 12.4 build" in info.value.render() and "--cpu" in info.value.render()


def test_companion_cuda_ops_get_a_toolkit_step_and_the_plans_archs() -> None:
    p = plan(companions=("torchvision", "torchaudio"), accelerator="12.4", gpus=("8.6", "9.0"))
    assert [s.label for s in p.steps][:3] == [
        "toolchain",
        "torchvision-environment",
        "torchvision-fetch",
    ]
    assert [s.subject for s in p.steps].count("torchaudio") == 6
    assert p.cuda.value == "12.4" and p.toolkit.value is not None
    build = p.companion_build
    assert build is not None and (build.cuda, build.arch_list) == ("12.4", "8.6;9.0")
    vision, audio = ({v.name: v.value for v in b.env} for b in build.builds)
    assert vision["FORCE_CUDA"] == "1" and vision["TORCH_CUDA_ARCH_LIST"] == "8.6;9.0"
    assert audio["USE_CUDA"] == "1" and audio["TORCH_CUDA_ARCH_LIST"] == "8.6;9.0"
    assert not p.warnings or "CPU ops only" not in " ".join(p.warnings)


def test_companion_cuda_must_be_the_cuda_of_their_torch() -> None:
    text = refusal(companions=("torchvision",), accelerator="11.8", gpus=("8.6",))
    assert "--cuda 11.8, but the --against torch is a CUDA 12.4 build" in text
    assert "use --cuda 12.4" in text
    cpu_torch = torch_260().model_copy(update={"cuda": None, "arch_list": []})
    with pytest.raises(PlanError) as info:
        plan(cpu_torch, companions=("torchvision",), accelerator="12.4", gpus=("8.6",))
    assert "the --against torch is a CPU build" in info.value.render()


def test_companions_of_a_git_source_come_from_pytorchs_repository_at_the_paired_tag() -> None:
    p = plan(companions=("torchvision",), source="git", git_mirror="file:///srv/mirror")
    [vision] = p.companion_build.builds if p.companion_build else []
    assert vision.source is not None and vision.source.kind == "git"
    assert vision.source.location == "https://github.com/pytorch/vision.git"
    assert vision.source.ref == "v0.21.0" and vision.source.git_mirror == "file:///srv/mirror"
    assert vision.source.commit is None  # the KB records no companion commit: warned
    assert any("through --git-mirror will refuse it" in w for w in p.warnings)
    [fetch] = [s for s in p.steps if s.name == "fetch"]
    assert "git: https://github.com/pytorch/vision.git v0.21.0 through file:///srv/mirror" in (
        fetch.what
    )


def test_a_companion_git_source_may_name_a_repository_and_a_commit() -> None:
    sha = "a" * 40
    p = plan(companions=("torchvision",), **{"companion_source.torchvision": f"git#{sha}"})
    [vision] = p.companion_build.builds if p.companion_build else []
    assert vision.source is not None and (vision.source.ref, vision.source.commit) == (sha, sha)
    assert not any("no commit recorded" in w for w in p.warnings)
    own = plan(
        companions=("torchvision",),
        git_mirror="file:///srv/mirror",
        **{"companion_source.torchvision": "git:file:///home/me/vision.git"},
    )
    [vision] = own.companion_build.builds if own.companion_build else []
    assert vision.source is not None and vision.source.location == "file:///home/me/vision.git"
    assert vision.source.ref == "v0.21.0" and vision.source.git_mirror is None  # not github
    assert any("the fetch trusts whatever file:///home/me/vision.git" in w for w in own.warnings)


def test_torchtext_is_refused_until_carried_out() -> None:
    assert "torchtext" in refusal(companions=("torchtext",))


def test_against_without_a_companion_is_refused() -> None:
    assert "add --with torchvision" in refusal()


def test_a_torch_version_that_contradicts_against_is_refused() -> None:
    assert "name different torches" in refusal(companions=("torchvision",), torch="2.5.1")


def test_against_a_spec_that_was_not_inspected_is_refused() -> None:
    host = HostFacts.model_validate_json(HOST.read_text())
    spec = resolve_spec(cli={"against": WHEEL, "companions": ("torchvision",)})
    with pytest.raises(PlanError, match="not inspected"):
        resolve(spec, kb.load(), host)


def test_an_interpreter_torch_is_planned_and_built_against() -> None:
    facts = torch_260().model_copy(
        update={"kind": "python", "location": "/venv/bin/python", "requires_dist": []}
    )
    cli = {"against": "python:/venv/bin/python", "companions": ("torchvision",)}
    p = plan(facts, **cli)
    assert [s.name for s in p.steps] == [
        "environment",
        "fetch",
        "compile",
        "repair",
        "verify",
        "publish",
        "attest",
    ]
    build = p.companion_build
    assert build is not None and build.torch.kind == "python"
    assert build.torch.location == "/venv/bin/python"


def test_the_disk_estimate_is_the_companions_not_a_torch_builds() -> None:
    cuda = plan(companions=("torchvision", "torchaudio"), accelerator="12.4", gpus=("8.6", "9.0"))
    assert cuda.disk_gb.value == 2 * 5.5 + 2.5 + 2 * 1.0  # measured: 11 GB venvs, 1.8 GB toolkit
    assert "companion" in cuda.disk_gb.reason
    python = torch_260().model_copy(
        update={"kind": "python", "location": "/venv/bin/python", "requires_dist": []}
    )
    cli = {"against": "python:/venv/bin/python", "companions": ("torchvision",)}
    assert plan(python, **cli).disk_gb.value == 1.0  # the interpreter's torch is not copied


def test_torchvision_names_the_packages_its_decoders_need_for_this_distribution() -> None:
    build = plan(companions=("torchvision",)).companion_build
    assert build is not None
    [vision] = build.builds
    names = [p.name for p in vision.system_packages]
    assert names == ["libjpeg62-turbo-dev", "libpng-dev"]  # the recorded host is Debian 12
    assert all("TORCHVISION_USE_" in p.reason for p in vision.system_packages)


def own_tree(root: Path, version: str) -> Path:
    """A companion tree as far as planning and the version check read it (a real tree's
    version.txt: pytorch/vision@v0.21.0:version.txt is '0.21.0a0')."""
    root.mkdir(parents=True)
    (root / "setup.py").write_text("")
    (root / "version.txt").write_text(version + "\n")
    return root


def test_a_companion_with_its_own_path_source_needs_no_debian_package(tmp_path: Path) -> None:
    tree = own_tree(tmp_path / "vision", "0.21.0a0")
    cli = {
        "companions": ("torchvision",),
        "source": "git",
        "companion_source.torchvision": f"path:{tree}",
    }
    [build] = plan(**cli).companion_build.builds  # type: ignore[union-attr]
    assert build.source is not None and build.source.kind == "path"
    assert build.source.location == str(tree) and build.debian_version == ""
    assert "companion_source.torchvision" in build.reason
    assert {v.name: v.value for v in build.env}["BUILD_VERSION"] == "0.21.0"


def test_a_companion_without_its_own_source_takes_the_route_of_source(tmp_path: Path) -> None:
    tree = own_tree(tmp_path / "vision", "0.21.0a0")
    cli = {
        "companions": ("torchvision", "torchaudio"),
        "source": "git",
        "accelerator": "12.4",
        "gpus": ("8.6",),
        "companion_source.torchvision": f"path:{tree}",
    }
    made = plan(**cli).companion_build
    assert made is not None
    builds = {b.name: b for b in made.builds}
    assert builds["torchvision"].source is not None
    assert builds["torchvision"].source.kind == "path"
    audio = builds["torchaudio"].source
    assert audio is not None and (audio.kind, audio.ref) == ("git", "v2.6.0")
    assert audio.location == "https://github.com/pytorch/audio.git"
    debian = plan(**{**cli, "source": "debian", "companion_source.torchvision": "debian"})
    assert debian.companion_build is not None
    assert [b.source for b in debian.companion_build.builds] == [None, None]  # Debian's


def test_a_companion_source_must_be_one_torchsmith_fetches() -> None:
    from torchsmith.errors import SpecError

    for value, said in [
        ("svn:https://example.org/vision", "is not a companion source; use git"),
        ("git:http://example.org/vision.git", "https://, ssh:// or file:// repository URL"),
        ("path:/nonexistent/vision", "/nonexistent/vision does not exist"),
        ("tarball:ftp://host/v.tar.gz", "only https:// URLs are fetched"),
    ]:
        with pytest.raises(SpecError) as info:
            resolve_spec(cli={"companion_source.torchvision": value})
        assert said in info.value.render(), value


def test_a_source_for_a_companion_not_asked_for_is_refused_not_dropped(tmp_path: Path) -> None:
    tree = own_tree(tmp_path / "audio", "2.6.0a0")
    cli = {"companions": ("torchvision",), "companion_source.torchaudio": f"path:{tree}"}
    with pytest.raises(PlanError) as info:
        plan(**cli)
    said = info.value.render()
    assert "--companion-source for torchaudio, which this build does not build" in said
    assert "add --with torchaudio" in said


def test_an_abi_flag_other_than_the_against_torchs_is_refused() -> None:
    # round-3 trial B17: --cxx11-abi against the (ABI 0) official 2.6.0 wheel was ignored
    vision = ("torchvision",)
    assert "--cxx11-abi, but the --against torch uses _GLIBCXX_USE_CXX11_ABI=0" in refusal(
        companions=vision, cxx11_abi=True
    )
    assert plan(companions=vision, cxx11_abi=False).torch.value == "2.6.0"  # the same ABI
