"""The build report of a real partial build opens in a real headless browser (Debian's
chromium-headless-shell, scripts/setup-system-deps) and its screenshot shows the timeline; and
`torchsmith build` ends with the report's path (the small real CMake tree of small_tree.py)."""

from __future__ import annotations

import json
import lzma
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.resources import require_module, require_tool
from torchsmith.cli import main
from torchsmith.report.build_report import write_report
from torchsmith.report.figures import COLOURS

from .small_tree import args, make_tree

REAL = Path(__file__).parents[1] / "fixtures" / "report" / "debian-1.13.1-cuda-partial"
WIDTH, HEIGHT = 1280, 2600


def _workspace(root: Path) -> Path:
    ws = root / "ws"
    (ws / "src" / "build").mkdir(parents=True)
    (ws / "src" / "build" / ".ninja_log").write_bytes(
        lzma.decompress((REAL / "ninja_log.xz").read_bytes())
    )
    shutil.copy(REAL / "manifest.json", ws / "torchsmith-partial-c1247971a69cdfd1.manifest.json")
    return ws


def _browser(page: Path, shot: Path, *flags: str) -> str:
    chromium = require_tool("chromium-headless-shell")
    done = subprocess.run(
        [chromium, "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         "--virtual-time-budget=10000", f"--window-size={WIDTH},{HEIGHT}", *flags,
         page.as_uri()],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def _rgb(colour: str) -> tuple[int, int, int]:
    return int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16)


def test_the_screenshot_shows_the_timeline(tmp_path: Path) -> None:
    image_mod = require_module("PIL.Image", "pip install -e '.[dev]' (pillow)")
    page = write_report(_workspace(tmp_path), tmp_path / "out").html
    shot = tmp_path / "shot.png"
    _browser(page, shot, f"--screenshot={shot}")
    dom = _browser(page, shot, "--dump-dom")
    # plotly drew the timeline: its SVG holds one lane label per job slot
    timeline = dom[dom.index('id="timeline"') :]
    assert re.search(r">job 0<", timeline) and re.search(r">job 1<", timeline)
    image = image_mod.open(shot).convert("RGB")
    colours = {c for _, c in image.getcolors(maxcolors=WIDTH * HEIGHT)}
    # the lanes' colours (plotly's default bar colour is another) are on the screen
    assert _rgb(COLOURS["compile"]) in colours
    assert _rgb(COLOURS["cuda"]) in colours  # the FillKernel.cu.o bar
    assert _rgb(COLOURS["codegen"]) in colours


@pytest.mark.slow
@pytest.mark.network
def test_build_ends_with_the_report_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tree = make_tree(tmp_path / "tree")
    assert main(args(tree, tmp_path / "cache", tmp_path / "dist")) == 0
    last = capsys.readouterr().out.strip().splitlines()
    line = next(x for x in last if x.startswith("report: "))
    page = Path(line.removeprefix("report: "))
    assert page.name == "build-report.html"
    assert page.parent.parent.parent == tmp_path / "cache" / "builds"
    text = page.read_text()
    assert 'id="timeline"' in text and 'id="stages"' in text
    assert (page.parent / "build-trace.json").is_file()
    manifest = json.loads(next(page.parent.parent.glob("*.manifest.json")).read_text())
    peak = manifest["resources"]["peak_process_rss_mib"]
    assert peak > 1  # cmake, cc1, pip: real processes of this build (or earlier ones here)
    assert f"<td>peak RAM of one process</td><td>{peak:,.0f} MiB</td>" in text
