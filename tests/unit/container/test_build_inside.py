"""`torchsmith build --backend docker`: what runs inside the working container (buildah argv,
the spec as TORCHSMITH_* variables, the setup commands) and what is refused, never dropped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from torchsmith.container import inside
from torchsmith.container.engines import EngineChoice, EngineProbe, Storage
from torchsmith.spec_sources import from_env, resolve_spec

BUILDAH = EngineChoice(
    EngineProbe("buildah", "/usr/bin/buildah", True, "1.28.2", False),
    "asked",
    Storage(Path("/s/root"), Path("/s/run")),
)
PODMAN = EngineChoice(EngineProbe("podman", "/usr/bin/podman", True, "4.3.1", False), "first")


def spec(**cli: Any) -> Any:
    base = {"torch": "2.6.0", "accelerator": "cpu", "source": "debian", "backend": "docker"}
    return resolve_spec(cli={**base, **cli})


def test_the_given_spec_reaches_the_torchsmith_inside_with_backend_local() -> None:
    rs = spec(targets=("c10",), engine="buildah", base_image="localhost/trixie", max_jobs=2)
    env = inside.spec_env(rs)
    assert env["TORCHSMITH_BACKEND"] == "local" and env["TORCHSMITH_TARGETS"] == "c10"
    assert "TORCHSMITH_ENGINE" not in env and "TORCHSMITH_BASE_IMAGE" not in env
    assert "TORCHSMITH_PYTHON" not in env  # a default is the inside's to choose, not ours
    values, problems = from_env(env)  # what the torchsmith inside reads back
    assert not problems
    inner = resolve_spec(env=env).spec
    assert (inner.torch, inner.source, inner.targets, inner.max_jobs) == (
        "2.6.0", "debian", ("c10",), 2,
    )  # fmt: skip
    assert inner.backend == "local" and values["accelerator"] == "cpu"


def test_commands_run_in_the_container_with_the_mounts_at_the_same_paths(tmp_path: Path) -> None:
    s = inside.Session(
        inside.buildah_head(BUILDAH), "ctr", (tmp_path, Path("/d")), (("PYTHONPATH", "/l"),)
    )
    argv = s.run_argv(["cmake", "--version"], {"TORCHSMITH_TORCH": "2.6.0"})
    assert argv[:6] == ["/usr/bin/buildah", "--storage-driver", "vfs", "--root", "/s/root",
                        "--runroot"]  # fmt: skip
    assert argv[7:11] == ["run", "--isolation", "chroot", "-v"]
    assert f"{tmp_path}:{tmp_path}" in argv and "/d:/d" in argv
    assert "--env" not in argv and not any("2.6.0" in a for a in argv)  # by file (env_file.py)
    assert argv[argv.index("ctr") :][:4] == ["ctr", "--", "/bin/sh", "-c"]
    assert argv[-2:] == ["cmake", "--version"]
    file = Path(argv[-3])
    assert file.read_text() == "PYTHONPATH=/l\nTORCHSMITH_TORCH=2.6.0\n"
    s.release()
    assert not file.exists()
    assert inside.from_argv(BUILDAH, "localhost/trixie", "never")[-4:] == [
        "from", "--pull=never", "--quiet", "localhost/trixie",
    ]  # fmt: skip
    assert s.remove_argv()[-2:] == ["rm", "ctr"]


def test_setup_installs_the_image_suites_tools_then_torchsmith_in_a_venv() -> None:
    commands = inside.setup_commands(trust=True)
    assert commands[0][-2:] == ["update", "-q"]
    assert {"cmake", "ninja-build", "ccache", "python3-venv", "dpkg-dev"} <= set(commands[1])
    assert ["update-ca-certificates"] in commands
    assert commands[-1][:3] == [f"{inside.VENV}/bin/python", "-m", "pip"]
    assert any(r.startswith("pydantic") for r in commands[-1])
    assert ["update-ca-certificates"] not in inside.setup_commands(trust=False)
    assert {"gcc-11", "g++-11"} <= set(inside.setup_commands(False, "gcc-11")[1])
    assert inside.compiler_packages("clang-14") == ["clang-14"]
    assert inside.compiler_packages(None) == inside.compiler_packages("cc") == []
    inner = inside.inner_build(Path("/c"), Path("/d"), True, False)
    assert inner[1:4] == ["-m", "torchsmith", "build"] and "--no-verify" in inner


def test_what_a_container_build_does_not_carry_out_is_refused(tmp_path: Path) -> None:
    assert inside.refusals(spec().spec, BUILDAH) == []
    fields = [p.field for p in inside.refusals(spec(source=f"path:{tmp_path}").spec, BUILDAH)]
    assert fields == ["source"]
    assert inside.refusals(spec(outputs=("wheel", "conda")).spec, BUILDAH) == []
    assert inside.refusals(spec(companions=("torchvision",)).spec, BUILDAH) == []
    wheel = tmp_path / "torch-2.6.0-cp311-cp311-manylinux1_x86_64.whl"
    wheel.write_bytes(b"")
    against = inside.refusals(spec(companions=("torchvision",), against=str(wheel)).spec, BUILDAH)
    assert [p.field for p in against] == ["against"]
    install = inside.refusals(spec(outputs=("wheel", "install")).spec, BUILDAH)
    assert [p.field for p in install] == ["outputs"] and "throwaway container" in install[0].what
    cache = inside.refusals(spec(**{"cache.location": "redis://u:pw@h:6379"}).spec, BUILDAH)
    assert [p.field for p in cache] == ["cache.location"]
    engine = inside.refusals(spec().spec, PODMAN)
    assert [p.field for p in engine] == ["engine"] and "setrlimit" in engine[0].what


def test_proxy_settings_reach_the_container_credentials_included() -> None:
    """By the private environment file (test_env_file.py), never on a command line."""
    env = {"https_proxy": "http://proxy:3128", "http_proxy": "u:secret@proxy:3128", "PATH": "/"}
    assert inside.proxy_env(env) == {k: v for k, v in env.items() if k != "PATH"}


def test_the_plan_inside_is_resolved_against_the_images_facts() -> None:
    from tests.unit.planner.kb import ci_host
    from torchsmith import kb
    from torchsmith.container.images import load_images
    from torchsmith.container.planning import local_spec, plan_container

    rs = spec(targets=("c10",), engine="buildah")
    ip = plan_container(rs, kb.load(), load_images(), ci_host())
    assert ip.base.os.codename == "trixie" and ip.engine == "buildah"
    assert (ip.plan.python.value, ip.plan.compiler.value) == ("3.13", "gcc-14")
    assert ip.plan.backend == "local" and [s.name for s in ip.plan.steps][-2:] == [
        "compile", "publish",
    ]  # fmt: skip
    assert "debian-26-itt-off" in {f.id for f in ip.plan.fixes}
    local = local_spec(rs)
    assert local.spec.engine == "auto" and "engine" not in local.origins


def test_the_images_os_release_is_read_as_measured() -> None:
    from torchsmith.container.working import os_release

    fixture = Path(__file__).resolve().parents[2] / "fixtures" / "container"
    text = (fixture / "os-release-trixie").read_text()  # debootstrap trixie's /etc/os-release
    assert os_release(text) == {
        "PRETTY_NAME": "Debian GNU/Linux 13 (trixie)",
        "VERSION_ID": "13",
        "VERSION_CODENAME": "trixie",
        "ID": "debian",
    }


def test_sifs_are_built_by_sids_apptainer_in_a_builder_container() -> None:
    from torchsmith.container import sif

    commands = sif.setup_commands()
    assert "check-valid-until=no" in commands[0][-1] and sif.SID_LIST in commands[0][-1]
    assert commands[-1][-3:] == ["-t", "sid", "apptainer"]
    assert sif.build_argv(Path("/s/a.sif"), Path("/o/a.oci.tar")) == [
        "apptainer", "build", "--force", "/s/a.sif", "oci-archive:/o/a.oci.tar",
    ]  # fmt: skip
    s = inside.Session(inside.buildah_head(BUILDAH), "b", (Path("/o"),), (), sif.CAPS)  # no env
    assert s.run_argv(["true"])[7:12] == ["run", "--isolation", "chroot", "--cap-add", "CAP_MKNOD"]
    assert [p.field for p in sif.refusals(None, "buildah")] == ["sif"]
    assert "setrlimit" in sif.refusals(Path("/o"), "podman")[0].what
    assert sif.refusals(Path("/o"), "buildah") == []


def test_images_whose_python_cannot_run_torchsmith_are_refused() -> None:
    assert inside.python_problem("3.13.5", "debian:trixie") is None
    problem = inside.python_problem("3.8.10", "nvidia/cuda:11.0.3-devel-ubuntu20.04")
    assert problem is not None and "3.8.10" in problem.what and "torchsmith image" in problem.fix


def test_container_flags_on_a_local_build_are_refused(capsys: Any) -> None:
    from torchsmith.cli import main

    code = main(["build", "--torch", "2.6.0", "--cpu", "--storage-root", "/s"])
    assert code != 0
    err = capsys.readouterr().err
    assert "--storage-root and --pull apply to a build in a container" in err
    assert "--backend docker" in err


def test_torchsmiths_own_requirements_follow_the_checkouts_pyproject() -> None:
    """An editable install's metadata lags pyproject.toml until reinstalled: the image then
    lacked a new dependency (google-re2) and the torchsmith inside failed to import."""
    from torchsmith.container.inside import tomllib  # tomli before Python 3.11

    pyproject = Path(__file__).resolve().parents[3] / "pyproject.toml"
    wanted = tomllib.loads(pyproject.read_text())["project"]["dependencies"]
    assert inside.requirements() == [r.split(";")[0].strip() for r in wanted]
