"""Reliability trial 6 (issue 16), corrupted state, on one real build of the small tree:

a. the compiler cache: every ccache result file (``<cache root>/ccache/*/*/*R``) corrupted, one
   truncated to half, the others with one byte flipped; the build directory wiped, the same
   command rebuilds. ccache 4.x checks each entry (an XXH3 checksum, the compressed payload's
   size) and recompiles: the build publishes, the objects are byte for byte those of the first
   build, the manifest's ``compiler_cache`` says 0 hits; ccache's own log names each bad entry.
   The entries it stored again are good: the next wiped rebuild is all hits.
b. the fetched source: a file of the cached ``path:`` copy edited; the same command stops at
   fetch (exit 9) naming the file and the tree, and after the tree is removed (the hint) works.
c. a wheel that does not match its manifest (one byte flipped): ``torchsmith verify WHEEL --plan
   MANIFEST`` (exit 11) and the same build command publishing over the pair (exit 7) name both.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from pathlib import Path

import pytest

from tests.resources import require_tool

from .small_tree import MANIFEST, WHEEL, args, cli_env, make_tree, run_cli

pytestmark = [pytest.mark.slow, pytest.mark.network]

OBJECTS = "builds/*/src/build/CMakeFiles/fake.dir/*.o"


def objects(cache: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(cache.glob(OBJECTS))}


def corrupt_ccache(cache: Path) -> list[Path]:
    """Truncate the first result entry to half, flip a byte in the middle of the others."""
    entries = sorted((cache / "ccache").glob("*/*/*R"))
    for i, entry in enumerate(entries):
        data = bytearray(entry.read_bytes())
        if i == 0:
            del data[len(data) // 2 :]
        else:
            data[len(data) // 2] ^= 0xFF
        entry.write_bytes(bytes(data))
    return entries


def flip_middle_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def build(argv: list[str], env: dict[str, str], report: list[str], what: str) -> dict[str, object]:
    """Run the build to success; its manifest."""
    start = time.monotonic()
    done = run_cli(argv, env)
    assert done.returncode == 0, done.stdout + done.stderr
    manifest = json.loads((Path(argv[argv.index("--output-dir") + 1]) / MANIFEST).read_text())
    record = manifest["compiler_cache"]
    report.append(f"{what}: exit 0 in {time.monotonic() - start:.1f} s, ccache {record}")
    return dict(manifest)


def check_wheel_mismatch(argv: list[str], env: dict[str, str], report: list[str]) -> None:
    """6c: one byte of the published wheel flipped."""
    dist = Path(argv[argv.index("--output-dir") + 1])
    wheel, manifest = dist / WHEEL, dist / MANIFEST
    recorded = json.loads(manifest.read_text())["artifacts"][0]["sha256"]
    flip_middle_byte(wheel)
    actual = hashlib.sha256(wheel.read_bytes()).hexdigest()
    checked = run_cli(["verify", str(wheel), "--plan", str(manifest), "--no-smoke"], env)
    said = " ".join(checked.stderr.split())
    report.append(f"6c verify: exit {checked.returncode}: {said}")
    assert checked.returncode == 11, checked.stdout + checked.stderr  # VerifyError
    assert f"{wheel} does not match the manifest {manifest}" in said
    assert f"sha256 {actual}, the manifest records sha256 {recorded}" in said
    again = run_cli(argv, env)
    said = " ".join(again.stderr.split())
    report.append(f"6c same build command: exit {again.returncode}: {said}")
    assert again.returncode == 7, again.stdout + again.stderr  # HostError: not overwritten
    assert f"{wheel} does not match its manifest {manifest}" in said
    assert hashlib.sha256(wheel.read_bytes()).hexdigest() == actual
    wheel.unlink()  # the way out the hint gives: delete both
    manifest.unlink()


def check_edited_source(
    argv: list[str], env: dict[str, str], cache: Path, report: list[str]
) -> None:
    """6b: ``a.c`` of the cached copy edited."""
    (copy,) = cache.glob("sources/path/*/tree/src")
    (copy / "a.c").write_text("int fake_a(int x) { return x + 2; }\n")
    refused = run_cli(argv, env)
    said = " ".join(refused.stderr.split())
    report.append(f"6b edited a.c: exit {refused.returncode}: {said}")
    assert refused.returncode == 9, refused.stdout + refused.stderr  # SourceError
    assert f"the cached source tree {copy}" in said and "edited a.c" in said
    assert f"remove {copy.parent}" in said
    shutil.rmtree(copy.parent)


def test_corrupted_cache_source_and_manifest_are_detected(tmp_path: Path) -> None:
    require_tool("ccache", "apt-get install ccache")
    cache, log = tmp_path / "cache", tmp_path / "ccache.log"
    argv = args(make_tree(tmp_path / "tree"), cache, tmp_path / "dist")
    env = cli_env({"CCACHE_LOGFILE": str(log)})
    report = ["\ncorrupted-state trial"]
    build(argv, env, report, "first build")
    first = objects(cache)
    assert sorted(first) == ["a.c.o", "b.c.o", "c.c.o"]
    check_wheel_mismatch(argv, env, report)
    check_edited_source(argv, env, cache, report)

    entries = corrupt_ccache(cache)
    shutil.rmtree(cache / "builds")
    log.write_text("")
    manifest = build(argv, env, report, f"6a {len(entries)} ccache entries corrupted, rebuilt")
    failed = [line for line in log.read_text().splitlines() if "Failed to get result" in line]
    report += [f"  ccache log: {line.split('] ', 1)[-1]}" for line in failed]
    print("\n".join(report))
    counts = {k: manifest["compiler_cache"][k] for k in ("kind", "hits", "misses", "hit_rate")}
    assert counts == {"kind": "ccache", "hits": 0, "misses": 3, "hit_rate": 0.0}
    assert manifest["compiler_cache"]["remote"] is None  # no remote asked, none used
    assert objects(cache) == first  # recompiled, the same bytes
    assert any("Incorrect checksum" in line for line in failed)
    assert any("Src size is incorrect" in line for line in failed)  # the truncated one

    shutil.rmtree(cache / "builds")
    again = build(argv, env, report, "6a rebuilt again")
    print(report[-1])
    assert again["compiler_cache"]["hits"] == 3  # type: ignore[index]  # stored good again
