"""The kernel's OOM killer as dmesg / the journal print it (mm/oom_kill.c): a log whose only error
is the kernel's line is a killed compiler with the parallel-jobs fix, never "no finding"."""

from __future__ import annotations

import pytest

from torchsmith.doctor import diagnose

# real lines, each from the public thread named beside it
REAL = {
    # https://github.com/mlpack/mlpack/issues/2213 (kernel 5.x)
    "killed-5x": (
        "[13236.245467] Out of memory: Killed process 26958 (cc1plus) total-vm:3970108kB, "
        "anon-rss:3090636kB, file-rss:0kB, shmem-rss:0kB",
        "cc1plus",
    ),
    "reaper": (
        "[13236.337540] oom_reaper: reaped process 26958 (cc1plus), now anon-rss:0kB, "
        "file-rss:0kB, shmem-rss:0kB",
        "cc1plus",
    ),
    # https://github.com/copperspice/copperspice/issues/168 (kernel 4.x; blind round 6's miss)
    "kill-4x": (
        "[67664.932863] Out of memory: Kill process 19463 (cc1plus) score 81 or sacrifice child",
        "cc1plus",
    ),
    # https://github.com/pyca/cryptography/issues/3528 (journal form)
    "invoked": (
        "Apr 29 23:52:21 ws1 kernel: [6424280.410198] cc1 invoked oom-killer: "
        "gfp_mask=0x24201ca, order=0, oom_score_adj=0",
        "cc1",
    ),
    # https://github.com/sifiveinc/freedom-u-sdk/issues/146
    "invoked-5x": (
        "[ 1305.619612] cc1plus invoked oom-killer: gfp_mask=0x100cca(GFP_HIGHUSER_MOVABLE), "
        "order=0, oom_score_adj=0",
        "cc1plus",
    ),
}
# mm/oom_kill.c's dump_oom_summary: "oom-kill:constraint=%s,nodemask=%*pbl" + cpuset +
# memcg context + ",task=%s,pid=%d,uid=%d" (format string, filled in with nvcc's cicc)
SUMMARY = (
    "[ 812.4] oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,"
    "global_oom,task_memcg=/user.slice,task=cicc,pid=4242,uid=1000"
)


@pytest.mark.parametrize("name", sorted(REAL))
def test_a_kernel_oom_line_alone_is_a_killed_compiler(name: str) -> None:
    line, tool = REAL[name]
    diagnosis = diagnose([line])
    assert diagnosis.top is not None and diagnosis.top.rule_id == "kernel-oom-killed-compiler"
    assert "--max-jobs" in diagnosis.top.fix and "MAX_JOBS" in diagnosis.top.fix
    assert diagnosis.error is not None and diagnosis.error.kind == "killed"
    assert diagnosis.error.tool == tool


def test_the_one_line_summary_names_the_killed_task() -> None:
    diagnosis = diagnose([SUMMARY])
    assert diagnosis.top is not None and diagnosis.top.rule_id == "kernel-oom-killed-compiler"
    assert diagnosis.error is not None and diagnosis.error.tool == "cicc"


def test_a_non_compiler_killed_is_an_error_but_not_the_compiler_rule() -> None:
    line = "[1.0] Out of memory: Killed process 77 (python3) total-vm:1kB, anon-rss:1kB"
    diagnosis = diagnose([line])
    assert diagnosis.error is not None and diagnosis.error.kind == "killed"
    assert all(f.rule_id != "kernel-oom-killed-compiler" for f in diagnosis.findings)


def test_the_compilers_own_line_still_ranks_first_when_both_are_there() -> None:
    log = [
        "c++: fatal error: Killed signal terminated program cc1plus",
        REAL["killed-5x"][0],
    ]
    diagnosis = diagnose(log)
    assert diagnosis.top is not None and diagnosis.top.rule_id == "compiler-killed-oom"


@pytest.mark.parametrize(
    "line",
    [
        # gcc's "fatal error: %s signal terminated program %s" with glibc's localised
        # strsignal(SIGKILL), as docs/doctor.md's round 6 notes quote them
        "lto-wrapper: fatal error: Morto signal terminated program lto1",
        "gcc: 致命错误：已杀死 signal terminated program cc1",
    ],
)
def test_a_localised_killed_signal_is_the_oom_rule(line: str) -> None:
    diagnosis = diagnose([line])
    assert diagnosis.top is not None and diagnosis.top.rule_id == "compiler-killed-oom"


@pytest.mark.parametrize("quote", ["`", ""])
def test_glibcxx_not_found_with_or_without_its_quotes(quote: str) -> None:
    # round 6 (RenYurui/PIRender#21, nmilosev/pytorch-arm-builds#7): markdown ate the quotes
    end = "'" if quote else ""
    line = f"ImportError: /usr/lib/libstdc++.so.6: version {quote}GLIBCXX_3.4.26{end} not found"
    diagnosis = diagnose([line])
    assert diagnosis.top is not None and diagnosis.top.rule_id == "glibcxx-version-not-found"
