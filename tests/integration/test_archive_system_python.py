"""safe_extract under Debian 12's own ``/usr/bin/python3`` (3.11.2-6+deb12u6), whose tarfile has
no ``data`` filter: the real Debian orig tarball of 1.13.1 unpacks exactly as tarfile lists it,
and the CVE-2025-4517 layout cannot escape. Before, every unpack failed there ("this Python's
tarfile has no 'data' extraction filter", new-user trial §1).

The module is loaded by path in that interpreter (it needs only the standard library and
``torchsmith.errors``), so the test needs no venv or network for the second Python."""

from __future__ import annotations

import json
import subprocess
import tarfile
from pathlib import Path

import pytest

from tests.resources import require

REPO = Path(__file__).resolve().parents[2]
SYSTEM_PYTHON = Path("/usr/bin/python3")

SCRIPT = r"""
import importlib.util, json, sys, tarfile
from pathlib import Path
sys.path.insert(0, sys.argv[1])

def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module

repo, work, orig = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
archive = load("torchsmith.sources.archive", repo / "torchsmith/sources/archive.py")
maker = load("archive_maker", repo / "tests/unit/sources/archive_maker.py")
from torchsmith.errors import SourceError

result = {"version": sys.version.split()[0], "data_filter": hasattr(tarfile, "data_filter")}
outer = work / "victim"
dest = outer / "dest"
dest.mkdir(parents=True)
(outer / "flag").write_text("original")
evil = maker.cve_2025_4517(dest).write(work / "cve.tar")
for name, limits in (("default", archive.Limits()), ("long", archive.Limits(name_bytes=1 << 20))):
    try:
        archive.safe_extract(evil, dest, limits=limits)
        result["cve_" + name] = "unpacked"
    except SourceError as exc:
        result["cve_" + name] = exc.message
result["flag"] = (outer / "flag").read_text()
result["outer"] = sorted(p.name for p in outer.iterdir())
archive.safe_extract(orig, work / "orig")
result["orig"] = sorted(
    str(p.relative_to(work / "orig")) + ("@" if p.is_symlink() else "/" if p.is_dir() else "")
    for p in (work / "orig").rglob("*")
)
print(json.dumps(result))
"""


def _system_python_without_filter() -> Path:
    probe = [str(SYSTEM_PYTHON), "-c", "import tarfile; print(hasattr(tarfile, 'data_filter'))"]
    ok = SYSTEM_PYTHON.is_file()
    answer = ok and subprocess.run(probe, check=False, capture_output=True, text=True).stdout
    require(
        ok and str(answer).strip() == "False",
        f"{SYSTEM_PYTHON} as a Python without tarfile's data filter",
        "Debian 12's python3 (3.11.2)",
    )
    return SYSTEM_PYTHON


def _expected(orig: Path) -> list[str]:
    with tarfile.open(orig) as tar:
        names = {}
        for m in tar.getmembers():
            name = m.name.removeprefix("./").rstrip("/")
            names[name] = "@" if m.issym() else "/" if m.isdir() else ""
    parents = {str(Path(n).parents[i]) for n in names for i in range(len(Path(n).parents) - 1)}
    names |= {p: "/" for p in parents if p not in names}
    return sorted(n + kind for n, kind in names.items())


@pytest.mark.slow  # unpacks the 109 MB orig tree: about 10 s
@pytest.mark.network  # only the first run downloads the orig tarball (18 MB, then cached)
def test_debian_12_system_python_unpacks_safely(
    tmp_path: Path, debian_pytorch_1131_orig: Path
) -> None:
    python = _system_python_without_filter()
    done = subprocess.run(
        [str(python), "-c", SCRIPT, str(REPO), str(tmp_path), str(debian_pytorch_1131_orig)],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin", "PYTHONNOUSERSITE": "1"},
    )
    result = json.loads(done.stdout)
    assert result["version"].startswith("3.")
    assert result["data_filter"] is False
    assert "refused to unpack" in result["cve_default"]
    assert "'flaglink' is a hard link" in result["cve_long"]
    assert result["flag"] == "original"
    assert result["outer"] == ["dest", "flag"]
    assert result["orig"] == _expected(debian_pytorch_1131_orig)
    assert "pytorch-1.13.1/test/functorch@" in result["orig"]  # a real relative symlink
