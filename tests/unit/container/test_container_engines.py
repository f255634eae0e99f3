"""Engines detected and checked from their real output (tests/fixtures/container), one chosen
with a reason, a clear refusal when none answers; the build commands each engine gets."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from torchsmith.container.build import Build, build_argv, oci_archive_argv, storage_under
from torchsmith.container.engines import (
    EngineProbe,
    Storage,
    choose_engine,
    parse_buildah,
    parse_docker,
    probe_engines,
)
from torchsmith.errors import HostError

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "container"


def _read(name: str) -> str:
    return (FIX / name).read_text(encoding="utf-8")


class RecordedRunner:
    """Answers each query with output recorded from the real tool."""

    def __init__(self, answers: Mapping[str, tuple[int, str, str]]) -> None:
        self.answers = answers
        self.asked: list[list[str]] = []

    def capture(self, argv: Sequence[str | Path], **_: Any) -> subprocess.CompletedProcess[str]:
        args = [str(a) for a in argv]
        self.asked.append(args)
        key = next(k for k in self.answers if k in " ".join(args))
        rc, out, err = self.answers[key]
        return subprocess.CompletedProcess(args, rc, out, err)

    def run(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("probes only query")


DOCKER_DOWN = (
    int(_read("docker-28.2.2-no-daemon.rc")),
    _read("docker-28.2.2-no-daemon.stdout"),
    _read("docker-28.2.2-no-daemon.stderr"),
)
BUILDAH_VERSION = (0, _read("buildah-1.28.2-version.txt"), "")
BUILDAH_INFO = (0, _read("buildah-1.28.2-vfs-info.json"), "")
WHICH: dict[Any, str | None] = {"docker": "/usr/bin/docker", "podman": None, "buildah": "/b"}


def _probes() -> list[EngineProbe]:
    runner = RecordedRunner(
        {"docker version": DOCKER_DOWN, "/b version": BUILDAH_VERSION, "/b --storage": BUILDAH_INFO}
    )
    return probe_engines(runner, {}, WHICH)  # type: ignore[arg-type]


def test_real_outputs_parse() -> None:
    assert parse_buildah(BUILDAH_VERSION[1], BUILDAH_INFO[1]) == ("1.28.2", False)
    assert parse_docker(DOCKER_DOWN[1]) == (None, False)


def test_a_docker_without_daemon_is_skipped_for_buildah_with_the_reason() -> None:
    choice = choose_engine(_probes(), "auto")
    assert choice.name == "buildah" and choice.probe.version == "1.28.2"
    assert choice.probe.rootless is False
    assert "Cannot connect to the Docker daemon" in choice.reason
    assert "podman: not installed" in choice.reason


def test_asking_for_an_engine_that_does_not_answer_is_refused_clearly() -> None:
    with pytest.raises(HostError) as info:
        choose_engine(_probes(), "docker")
    text = info.value.render()
    assert "no container engine answers (docker)" in text and "Cannot connect" in text
    assert "--dockerfile-only" in text and info.value.exit_code == 7


def test_no_engine_at_all_names_each_one() -> None:
    runner = RecordedRunner({})
    probes = probe_engines(runner, {}, {"docker": None, "podman": None, "buildah": None})  # type: ignore[arg-type]
    with pytest.raises(HostError, match="buildah: not installed"):
        choose_engine(probes, "auto")
    assert runner.asked == []


def test_buildah_builds_daemonless_with_vfs_and_chroot_isolation() -> None:
    probe = EngineProbe("buildah", "/usr/bin/buildah", True, "1.28.2", False)
    storage = Storage(Path("/s/root"), Path("/s/run"))
    choice = choose_engine([probe], "auto", storage)
    argv = build_argv(choice, Build(Path("/ctx"), "train-a", "a", pull="never"))
    assert argv[:6] == [
        "/usr/bin/buildah",
        "--storage-driver",
        "vfs",
        "--root",
        "/s/root",
        "--runroot",
    ]
    assert argv[argv.index("--isolation") : argv.index("--isolation") + 2] == [
        "--isolation",
        "chroot",
    ]
    assert "--pull=never" in argv and argv[-3:] == ["-t", "a", "/ctx"]
    oci = oci_archive_argv("skopeo", choice, "a", Path("/o/a.oci.tar"))
    assert oci[-2:] == [
        "containers-storage:[vfs@/s/root+/s/run]localhost/a:latest",
        "oci-archive:/o/a.oci.tar:a:latest",
    ]


def test_docker_uses_buildx_and_loads_the_image() -> None:
    probe = EngineProbe("docker", "/usr/bin/docker", True, "28.2.2", False, buildx=True)
    choice = choose_engine([probe], "docker")
    argv = build_argv(choice, Build(Path("/ctx"), "export", output_dir=Path("/dist")))
    assert argv[:3] == ["/usr/bin/docker", "buildx", "build"]
    assert "type=local,dest=/dist" in argv and "--load" not in argv


OVERLAY_INFO = (0, _read("buildah-1.28.2-overlay-info.json"), "")
OVERLAY_ON_OVERLAYFS = (
    int(_read("buildah-1.28.2-overlay-over-overlayfs.rc")),
    "",
    _read("buildah-1.28.2-overlay-over-overlayfs.stderr"),
)


def test_a_new_private_store_uses_overlay_and_an_existing_one_keeps_its_driver(
    tmp_path: Path,
) -> None:
    assert storage_under(None).driver == "vfs"  # the default store: never converted
    new = storage_under(tmp_path)
    assert (new.driver, new.root, new.runroot) == ("overlay", tmp_path / "root", tmp_path / "run")
    (tmp_path / "root" / "vfs-images").mkdir(parents=True)  # a store made with vfs before
    assert storage_under(tmp_path).flags()[:2] == ["--storage-driver", "vfs"]


def _buildah_probe(info: tuple[int, str, str]) -> tuple[EngineProbe, RecordedRunner]:
    runner = RecordedRunner({
        "/b version": BUILDAH_VERSION,
        "--storage-driver overlay": info,
        "--storage-driver vfs": BUILDAH_INFO,
    })  # fmt: skip
    which = {"docker": None, "podman": None, "buildah": "/b"}
    [*_, probe] = probe_engines(
        runner, {}, which, Storage(Path("/s/root"), Path("/s/run"), "overlay")
    )  # type: ignore[arg-type]
    return probe, runner


def test_overlay_where_the_kernel_mounts_it() -> None:
    probe, runner = _buildah_probe(OVERLAY_INFO)
    choice = choose_engine([probe], "buildah")
    assert choice.storage.driver == "overlay" and probe.describe().endswith("overlay storage")
    assert [a[1:3] for a in runner.asked if "info" in a] == [["--storage-driver", "overlay"]]


def test_vfs_where_overlay_cannot_mount() -> None:
    """Real: buildah 1.28.2 with the store inside an overlayfs mount exits 125."""
    probe, runner = _buildah_probe(OVERLAY_ON_OVERLAYFS)
    choice = choose_engine([probe], "buildah")
    assert choice.storage.driver == "vfs" and choice.storage.root == Path("/s/root")
    assert probe.describe().endswith("as root, vfs storage")
    assert [a[2] for a in runner.asked if "info" in a] == ["overlay", "vfs"]
    argv = build_argv(choice, Build(Path("/ctx"), "train-a", "a", pull="never"))
    assert argv[1:3] == ["--storage-driver", "vfs"]
