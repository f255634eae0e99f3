"""`torchsmith doctor --env` on this machine, the Python probe against real (small) packages on a
real interpreter, and the grading script. About 5-10 s in all (a few interpreter start-ups)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from torchsmith.cli import main
from torchsmith.doctor.envcheck import check_extensions, check_torch_installs
from torchsmith.doctor.envprobe import gather, probe_python
from torchsmith.proc import HOST

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "doctor"
# torchvision's own warning text, as https://github.com/NixOS/nixpkgs/issues/162286 shows it
FOREIGN = (
    "Failed to load image Python extension: /x/torchvision/image.so: undefined symbol: "
    "_ZN3c105ErrorC2ENS_14SourceLocationESs"
)


def _package(root: Path, name: str, files: dict[str, str]) -> None:
    pkg = root / name
    pkg.mkdir(parents=True)
    for file, text in files.items():
        (pkg / file).write_text(text, encoding="utf-8")


@pytest.fixture
def two_torches(tmp_path: Path) -> dict[str, str]:
    """Two torch packages on PYTHONPATH, the first with a torchvision whose ops are foreign."""
    first, second = tmp_path / "first", tmp_path / "second"
    init = (
        "from . import version\n__version__ = version.__version__\nclass _C:\n"
        "    _GLIBCXX_USE_CXX11_ABI = True\n"
    )
    _package(
        first, "torch", {"__init__.py": init, "version.py": "__version__ = '9.1.0'\ncuda = None\n"}
    )
    _package(
        second, "torch", {"__init__.py": init, "version.py": "__version__ = '8.0.0'\ncuda = None\n"}
    )
    warn = f"import warnings\nwarnings.warn({FOREIGN!r})\n"
    _package(first, "torchvision", {"__init__.py": warn, "extension.py": ""})
    return {**os.environ, "PYTHONPATH": f"{first}{os.pathsep}{second}"}


def test_python_probe_sees_shadowed_torch_and_foreign_ops(two_torches: dict[str, str]) -> None:
    facts = probe_python(sys.executable, two_torches, runner=HOST)
    assert facts is not None
    assert [i.version for i in facts.installs[:2]] == ["9.1.0", "8.0.0"]
    assert facts.imported is not None and facts.imported.version == "9.1.0"
    gathered = gather(two_torches, REPO, None, runner=HOST).model_copy(update={"python": facts})
    assert check_torch_installs(gathered)[0].id == "torch-shadowed"
    [problem] = check_extensions(gathered)
    assert problem.id == "torchvision-mismatch"


def test_probe_of_a_missing_interpreter_is_none() -> None:
    assert probe_python("/nonexistent/python", dict(os.environ), runner=HOST) is None


def test_gather_on_this_machine() -> None:
    facts = gather(dict(os.environ), REPO, None, runner=HOST)
    assert facts.host.cores >= 1
    assert facts.host.disk_free_gib > 0


def test_doctor_env_command(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["doctor", "--env", "--json", "--python", sys.executable])
    data = json.loads(capsys.readouterr().out)["env"]
    assert code in (0, 20, 22)
    assert (code == 0) == (data["problems"] == [])
    assert data["facts"]["python"]["executable"]


def test_grade_script(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    rows = []
    for name in ("disk-full.log", "cmake-too-old.log", "ninja-missing.log"):
        lines = (FIXTURES / name).read_text(encoding="utf-8").splitlines()
        (logs / name).write_text("\n".join(ln for ln in lines if not ln.startswith("#@ ")))
        rows.append(f"{name},{name.removesuffix('.log')}")
    rows.append("cmake-too-old.log-copy,toolchain")
    (logs / "cmake-too-old.log-copy").write_text((logs / "cmake-too-old.log").read_text())
    expected = tmp_path / "expected.csv"
    expected.write_text("file,cause\n" + "\n".join(rows) + "\n")
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts" / "grade_doctor.py"),
            str(logs),
            str(expected),
            "--json",
            "--min-accuracy",
            "1.0",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["top1"] == 1.0 and len(report["results"]) == 4


def test_probe_ignores_a_torch_package_in_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`python -c` puts the working directory first on sys.path: a ./torch/ there (a source
    checkout, or planted) must not be imported by the probe (security review L7)."""
    canary = tmp_path / "imported"
    _package(tmp_path, "torch", {"__init__.py": f"open({str(canary)!r}, 'w').close()\n"})
    monkeypatch.chdir(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    probe_python(sys.executable, env, runner=HOST)
    assert not canary.exists()


def test_env_with_a_plan_checks_that_plans_needs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """New-user trial §3 #10/#11: a plan asking for MKL on a host without it, and a build
    directory that does not exist, were "no problem found"."""
    from torchsmith.doctor.envprobe import find_library

    assert main(["plan", "--torch", "2.5.1", "--cpu", "--enable", "mkl", "--json"]) == 0
    plan = tmp_path / "plan.json"
    plan.write_text(capsys.readouterr().out)
    missing = tmp_path / "not" / "there"
    argv = ["doctor", "--env", "--json", "--manifest", str(plan), "--disk", str(missing)]
    code = main(argv)
    problems = {p["id"]: p for p in json.loads(capsys.readouterr().out)["env"]["problems"]}
    assert "disk-path" in problems and code != 0
    has_mkl = find_library("mkl", dict(os.environ), subprocess.getoutput("/sbin/ldconfig -p"))
    assert ("plan-mkl-missing" in problems) == (has_mkl is None)


def test_engine_that_does_not_answer_is_named(tmp_path: Path) -> None:
    from tests.resources import require_tool
    from torchsmith.doctor.envprobe import engine_answer

    assert engine_answer("docker", {"PATH": str(tmp_path)}, runner=HOST)[1] == (
        "cannot run docker: No such file or directory"
    )
    docker = require_tool("docker", "apt-get install docker.io (the client is enough)")
    env = {"PATH": str(Path(docker).parent), "DOCKER_HOST": f"unix://{tmp_path}/none.sock"}
    answer, why = engine_answer("docker", env, runner=HOST)
    assert answer is None and why is not None and "Cannot connect to the Docker daemon" in why


@pytest.mark.parametrize("python", ["/nonexistent/python", "/etc/hostname"])
def test_doctor_env_with_an_interpreter_that_cannot_run_is_refused(
    python: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """It said 'environment: no problem found' and exited 0, having checked no torch at all."""
    assert main(["doctor", "--env", "--python", python]) == 2
    err = capsys.readouterr().err
    assert f"--python {python}: it cannot be run as a Python interpreter" in err
    assert "Traceback" not in err
