"""The scanner: first real error over noise, interleaved output, line numbers, ranking.

Logs are assembled from real lines: the recorded ninja build (``ninja-build.txt``) as background
and excerpts of public reports (the rule fixtures) as failures."""

from __future__ import annotations

import gzip
import threading
from pathlib import Path

import pytest

from torchsmith.doctor import diagnose, warnings_that_changed_result
from torchsmith.doctor.classify import classify
from torchsmith.doctor.linear import TriggerFinder
from torchsmith.doctor.ruledb import Rule, _check_explains, load_rules, rule_by_id
from torchsmith.doctor.stream import Scanner, chunks_of_file, chunks_of_lines
from torchsmith.errors import KnowledgeBaseError, UsageError

FIXTURES = Path(__file__).parents[2] / "fixtures" / "doctor"
NINJA = (FIXTURES / "ninja-build.txt").read_text(encoding="utf-8").splitlines()
TAIL = [
    "ninja: build stopped: subcommand failed.",
    "Traceback (most recent call last):",
    '  File "setup.py", line 755, in <module>',
    "subprocess.CalledProcessError: Command '['cmake', '--build', '.', '--target', 'install',"
    " '--config', 'Release']' returned non-zero exit status 1.",
]


def _excerpt(name: str) -> list[str]:
    text = (FIXTURES / name).read_text(encoding="utf-8")
    return [line for line in text.splitlines() if not line.startswith("#@ ")]


def test_first_real_error_not_the_last_words() -> None:
    log = NINJA * 3 + _excerpt("nvcc-unsupported-gpu-arch.log") + NINJA + TAIL
    diagnosis = diagnose(log)
    assert diagnosis.top is not None
    assert diagnosis.top.rule_id == "nvcc-unsupported-gpu-arch"
    assert diagnosis.top.in_first_error
    block = diagnosis.first_error
    assert block is not None and block.kind == "ninja"
    assert block.target is not None and block.target.startswith("nccl_external")
    assert block.start_line == len(NINJA) * 3 + 1
    assert all("ninja: build stopped" not in ev.text for ev in block.lines)
    assert diagnosis.lines_scanned == len(log)


def test_unknown_failure_still_gets_its_error_block() -> None:
    log = [
        *NINJA[:20],
        "FAILED: caffe2/CMakeFiles/torch_cpu.dir/foo.cpp.o",
        "/usr/bin/c++ -c foo.cpp",
        "foo.cpp:1:1: error: expected unqualified-id before 'int'",
        *NINJA[20:],
        *TAIL,
    ]
    diagnosis = diagnose(log)
    assert not diagnosis.known_cause
    assert diagnosis.failed
    block = diagnosis.first_error
    assert block is not None
    assert block.target == "caffe2/CMakeFiles/torch_cpu.dir/foo.cpp.o"
    assert [ev.line for ev in block.lines] == [21, 23]
    assert block.context[1].text == "/usr/bin/c++ -c foo.cpp"


def test_interleaved_make_output_is_split_by_file() -> None:
    log = [
        "a.cpp:10:5: error: 'x' was not declared in this scope",
        "b.cu:3:1: error: expected a declaration",
        "a.cpp:11:5: error: 'y' was not declared in this scope",
    ]
    diagnosis = diagnose(log)
    assert diagnosis.error_blocks == 3
    assert diagnosis.first_error is not None
    assert diagnosis.first_error.target == "a.cpp"


def test_noise_alone_is_a_failure_without_a_cause() -> None:
    assert not diagnose(NINJA).failed
    diagnosis = diagnose(NINJA + TAIL)
    assert [f.generic for f in diagnosis.findings] == [True]  # only the class's diagnosis
    assert diagnosis.failed and diagnosis.cause is None and not diagnosis.known_cause
    assert diagnosis.first_error is not None
    assert diagnosis.first_error.lines[0].text.startswith("ninja: build stopped")


def test_colour_codes_are_removed() -> None:
    line = (
        "\x1b[01m\x1b[K/x/y.h:3:9:\x1b[m\x1b[K \x1b[01;31m\x1b[Kfatal error: \x1b[m\x1b[K"
        "nccl.h: No such file or directory"
    )
    diagnosis = diagnose([line])
    assert diagnosis.top is not None and diagnosis.top.rule_id == "nccl-header-missing"
    assert (
        diagnosis.top.evidence[0].text
        == "/x/y.h:3:9: fatal error: nccl.h: No such file or directory"
    )


def test_line_numbers_survive_chunk_boundaries() -> None:
    lines = [f"line {i}" for i in range(5000)]
    lines[1234] = "fatal error: disk"
    lines[4321] = "error: again"
    scanner = Scanner([b"rror"])
    found = [(c.number, c.text) for c in scanner.candidates(chunks_of_lines(lines, size=1000))]
    assert found == [(1235, "fatal error: disk"), (4322, "error: again")]
    assert scanner.lines == 5000


def test_reads_a_file_path(tmp_path: Path) -> None:
    log = tmp_path / "build.log"
    log.write_text("\n".join([*NINJA, *_excerpt("disk-full.log"), *TAIL]), encoding="utf-8")
    diagnosis = diagnose(log)
    assert diagnosis.top is not None and diagnosis.top.rule_id == "disk-full"
    assert diagnosis.bytes_scanned == log.stat().st_size + 1  # the last line gets its newline


def test_error_in_first_block_beats_earlier_warning() -> None:
    log = _excerpt("warn-nccl-not-found.log") + NINJA + _excerpt("nccl-header-missing.log") + TAIL
    diagnosis = diagnose(log)
    assert [f.rule_id for f in diagnosis.findings][:2] == [
        "nccl-header-missing",
        "warn-nccl-not-found",
    ]


def test_context_demotes_rules_whose_ranges_do_not_hold() -> None:
    gcc = rule_by_id("nvcc-host-gcc-too-new").model_dump()
    disk = rule_by_id("disk-full").model_dump()
    narrow = Rule.model_validate({**gcc, "when": {"cuda": "<11"}})
    log = _excerpt("nvcc-host-gcc-too-new.log") + _excerpt("disk-full.log")
    rules = [narrow, Rule.model_validate(disk)]
    plain = diagnose(log, rules=rules)
    assert plain.top is not None and plain.top.rule_id == "nvcc-host-gcc-too-new"
    ranked = diagnose(log, context={"cuda": "12.4"}, rules=rules)
    assert ranked.top is not None and ranked.top.rule_id == "disk-full"
    assert ranked.findings[1].context_fit is False


def test_warnings_that_changed_a_successful_build() -> None:
    log = NINJA[:9] + _excerpt("warn-cudnn-not-found.log") + _excerpt("warn-mkl-not-found.log")
    log += NINJA[9:]
    found = warnings_that_changed_result(log)
    assert {f.rule_id for f in found} == {"warn-cudnn-not-found", "warn-mkl-not-found"}
    assert all(f.severity == "warning" for f in found)


def test_gzipped_log_and_endless_lines(tmp_path: Path) -> None:
    log = tmp_path / "build.log.gz"
    with gzip.open(log, "wt", encoding="utf-8") as fh:
        fh.write("\n".join([*NINJA, *_excerpt("cmake-too-old.log")]) + "\n")
    diagnosis = diagnose(log)
    assert diagnosis.cause is not None and diagnosis.cause.rule_id == "cmake-too-old"
    long = tmp_path / "progress.log"
    long.write_bytes(b"\r 50%" * 1000 + b"\nerror: no space\n")
    chunks = list(chunks_of_file(long, size=64))
    assert all(len(c) <= 5 * 64 + 1 for c in chunks) and b"".join(chunks).count(b"\n") >= 2


def test_cause_skips_warnings() -> None:
    log = NINJA[:9] + _excerpt("warn-mkl-not-found.log") + ["x.cpp:1:1: error: nope"]
    diagnosis = diagnose(log)
    assert diagnosis.top is not None and diagnosis.top.severity == "warning"
    assert diagnosis.cause is None and diagnosis.failed


def test_ci_log_prefixes_are_removed() -> None:
    # GitHub Actions timestamps and docker BuildKit step prefixes around real report lines
    body = _excerpt("nvcc-unsupported-gpu-arch.log")
    stamped = [f"2024-05-01T10:00:{i % 60:02d}.1234567Z {line}" for i, line in enumerate(body)]
    diagnosis = diagnose(stamped)
    assert diagnosis.cause is not None and diagnosis.cause.rule_id == "nvcc-unsupported-gpu-arch"
    assert diagnosis.first_error is not None and diagnosis.first_error.kind == "ninja"
    kit = [f"#24 {10 + i}.94 {line}" for i, line in enumerate(_excerpt("cmake-too-old.log"))]
    top = diagnose(kit).cause
    assert top is not None and top.evidence[0].text.startswith("  CMake 3.10 or higher")


def test_only_secondary_error_lines_still_give_a_block() -> None:
    # the tail of pytorch/pytorch#28886: make's and CMake's follow-up lines, the cause cut off
    log = [
        "gmake[2]: *** [caffe2/CMakeFiles/torch.dir/__/aten/src/THCUNN/"
        "torch_generated_AbsCriterion.cu.o] Error 1",
        "CMake Error at torch_generated_SortingKthValue.cu.o.Release.cmake:219 (message):",
        "  Error generating",
    ]
    diagnosis = diagnose(NINJA + log)
    assert diagnosis.failed and diagnosis.cause is None
    assert diagnosis.first_error is not None
    assert diagnosis.first_error.start_line == len(NINJA) + 1
    assert not diagnose(NINJA + TAIL[1:3]).failed  # a traceback alone is not a failure


def test_compiler_command_lines_are_neither_errors_nor_matched() -> None:
    verbose = [
        "[12/90 3.1s] /usr/bin/c++ -DUSE_CUDA -Werror=return-type -Wno-error=deprecated -c x.cpp",
        "ccache /usr/bin/c++ -Wno-error=redundant-decls -o a.o -c a.cpp",
        "cd /src/third_party/nccl && env CCACHE_DISABLE=1 make NVCC_GENCODE=-gencode=arch=sm_90",
    ]
    assert [classify(line).kind for line in verbose[:2]] == ["command", "command"]
    copying = "copying torch/include/c10/util/error.h -> build/lib.linux-x86_64-3.11/torch"
    assert classify(copying).kind == "command"
    diagnosis = diagnose(NINJA + verbose * 50)
    assert not diagnosis.failed and diagnosis.findings == ()


def test_a_missing_log_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no log file"):
        diagnose(tmp_path / "nope.log")


def test_a_binary_file_is_refused_but_a_gzipped_log_is_not(tmp_path: Path) -> None:
    binary = tmp_path / "ls"
    binary.write_bytes(b"\x7fELF\x02\x01\x01\0\0\0" + b"error: x\n" * 10)
    with pytest.raises(UsageError, match="binary file") as err:
        diagnose(binary)
    assert "plain or gzip" in err.value.hint
    log = tmp_path / "build-log"  # gzip without the .gz suffix: recognised by its magic
    log.write_bytes(gzip.compress("\n".join([*NINJA, *TAIL]).encode()))
    assert diagnose(log).failed
    broken = tmp_path / "cut.log.gz"
    broken.write_bytes(gzip.compress(b"x" * 100)[:12])
    with pytest.raises(UsageError, match="cannot read"):
        diagnose(broken)


def test_an_empty_trigger_is_skipped_not_looped_on() -> None:
    # an empty trigger matches everywhere: before the fix this never returned; run it in a
    # daemon thread so a regression fails the test instead of hanging the run.
    result: list[list[int]] = []
    chunk = b"ok\nfatal error: x\nok\n"
    worker = threading.Thread(
        target=lambda: result.append(list(TriggerFinder((b"", b"error")).line_starts(chunk))),
        daemon=True,
    )
    worker.start()
    worker.join(timeout=5)
    assert not worker.is_alive() and result == [[3]]


# -- a cause outranks the symptom it explains (Rule.explains) -----------------------------------
def test_the_arch_warning_outranks_the_kernel_launch_failure_it_explains() -> None:
    # a real report: the launch error is printed first, the warning that explains it after
    log = FIXTURES / "grading" / "blind2-sm86-clrnet.log"
    ids = [f.rule_id for f in diagnose(log).findings]
    assert ids[:2] == ["gpu-arch-not-in-build", "no-kernel-image"]


def test_the_symptom_alone_is_still_the_diagnosis() -> None:
    cause = diagnose(FIXTURES / "no-kernel-image.log").cause
    assert cause is not None and cause.rule_id == "no-kernel-image"


def test_every_explained_rule_exists() -> None:
    rules = list(load_rules())
    seen = {r.id: "x.toml" for r in rules}
    assert any(r.explains for r in rules)
    _check_explains(rules, seen)
    bad = rules[0].model_copy(update={"explains": ("no-such-rule",)})
    with pytest.raises(KnowledgeBaseError, match="explains unknown rule"):
        _check_explains([bad], seen)


def test_in_every_real_log_a_cause_outranks_the_symptoms_it_explains() -> None:
    explains = {r.id: set(r.explains) for r in load_rules() if r.explains}
    pairs = 0
    logs = [*FIXTURES.glob("*.log"), *(FIXTURES / "grading").glob("*.log")]
    for log in sorted(p for p in logs if p.stat().st_size < 100_000):
        order = [f.rule_id for f in diagnose(log).findings]
        for cause, effects in explains.items():
            for effect in effects & set(order):
                if cause in order:
                    pairs += 1
                    assert order.index(cause) < order.index(effect), (log.name, cause, effect)
    assert pairs >= 5  # the relations are exercised by real reports, not only declared
