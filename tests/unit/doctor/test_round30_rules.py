"""What was added for issue 25 before round 30's freeze (rounds 1-29 are train data): not read
from a round's logs, but the error forms of the structural reader's own classes that reach it
without an error word — a linker's own message, a run ended by a signal, glibc's abort messages,
Jupyter's dead kernel, a subprocess' failure quoted without its exception class. The lines are
in the tools' own wording (the source of each is named); near misses beside them."""

from __future__ import annotations

import pytest

from tests.unit.doctor.rule_cases import top_rule
from torchsmith.doctor import diagnose


@pytest.mark.parametrize(
    ("line", "rule"),
    [
        # GNU ld (binutils ld/ldlang.c, ldmain.c, bfd): errors said without 'error:';
        # round 29's pytorch#14367 (train data) is the first
        ("/usr/bin/ld: attempted static link of dynamic object `/x/libtorch.so'", "generic-linker"),
        ("/usr/bin/ld: x.so: file not recognized: file format not recognized", "generic-linker"),
        ("/usr/bin/ld: final link failed: nonrepresentable section on output", "generic-linker"),
        ("ld: symbol(s) not found for architecture arm64", "generic-linker"),  # Apple ld64
        ("ld.lld: error: duplicate symbol: at::native::foo()", "generic-linker"),
        # PyCharm's run window, a 128+N status, Python's subprocess (-N, or the signal's name)
        ("Process finished with exit code 134 (interrupted by signal 6: SIGABRT)", "generic-crash"),
        ("Process finished with exit code 139 (interrupted by signal 11)", "generic-crash"),
        ("app-1 exited with code 139", "generic-crash"),  # docker compose
        ("Command '['python', 'x.py']' returned non-zero exit status -11.", "generic-crash"),
        ("Command '['python', 'x.py']' died with <Signals.SIGABRT: 6>.", "generic-crash"),
        # glibc (malloc/malloc.c, debug/stack_chk_fail.c)
        ("malloc(): corrupted top size", "generic-crash"),
        ("*** stack smashing detected ***: terminated", "generic-crash"),
        ("corrupted size vs. prev_size", "generic-crash"),
        # Jupyter notebook's and JupyterLab's dialogs
        ("The kernel appears to have died. It will restart automatically.", "generic-crash"),
        ("Kernel Restarting: The kernel for train.ipynb appears to have died.", "generic-crash"),
        # CalledProcessError's str() without the class
        ("Command '['ninja', '-v']' returned non-zero exit status 1.", "generic-command-failed"),
        # near misses: a linker's warning, words ending in 'ld', a normal exit
        ("/usr/bin/ld: warning: libcudart.so.11.0, needed by libtorch.so, not found", "none"),
        ("-- Build: Release", "none"),
        ("Process finished with exit code 0", "none"),
    ],
)
def test_an_error_said_without_an_error_word_is_read(line: str, rule: str) -> None:
    assert top_rule(line) == rule


def test_a_linker_message_is_the_error_before_the_wrapper_reports() -> None:
    lines = [
        "/usr/bin/ld: attempted static link of dynamic object `/x/lib/libtorch.so'",
        "collect2: error: ld returned 1 exit status",
        "make[2]: *** [CMakeFiles/app.dir/build.make:98: app] Error 1",
    ]
    error = diagnose(lines).error
    assert error is not None and error.kind == "linker" and "static link" in error.message


def test_the_quoted_subprocess_failure_is_noise_when_the_tool_spoke() -> None:
    lines = [
        "src/a.cpp:3:10: fatal error: cuda_runtime.h: No such file or directory",
        "Command '['ninja', '-v']' returned non-zero exit status 1.",
    ]
    assert diagnose(lines).error.kind == "missing-header"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("line", "rule"),
    [
        # train logs: round 28's yolov5#776, round 29's sd-webui-pez-dispenser#1 and torchtune#846
        (
            "AttributeError: module 'torch.cuda.amp' has no attribute 'autocast'",
            "torch-too-old-for-code",
        ),
        ("AttributeError: module 'torch' has no attribute 'concatenate'", "torch-too-old-for-code"),
        (
            "ImportError: cannot import name 'return_and_correct_aliasing' from "
            "'torch.utils._python_dispatch'",
            "torch-too-old-for-code",
        ),
        # near misses: torch._C's names (a CPU-only build), a half-initialised torch, a torch
        # package with no location (a broken install), a private name (more often removed)
        ("AttributeError: module 'torch._C' has no attribute '_cuda_setDevice'", "generic-python"),
        (
            "AttributeError: partially initialized module 'torch' has no attribute 'Tensor'",
            "torch-import-shadowed-or-broken",
        ),
        (
            "ImportError: cannot import name 'autocast' from 'torch.amp' (unknown location)",
            "torch-import-shadowed-or-broken",
        ),
        ("AttributeError: module 'torch' has no attribute '_six'", "generic-python"),
    ],
)
def test_a_public_torch_name_the_install_lacks_is_torch_s_rule(line: str, rule: str) -> None:
    """Either direction (the rule's cause and fix say how to tell); the generic message fact
    (components.toml's torch-name-missing) said the same below no rule."""
    assert top_rule(line) == rule


def test_a_one_part_module_s_failure_class_is_a_python_exception() -> None:
    """After round 30 (train data, not measured): its gpt-neox#116 had no finding, the last
    line of a traceback raised by pkg_resources with a class not named *Error."""
    line = (
        "pkg_resources.ContextualVersionConflict: (torch 1.7.1 (/usr/local/lib/python3.6/"
        "dist-packages), Requirement.parse('torch==1.7.0'), {'torchvision'})"
    )
    assert top_rule(line) == "companion-requires-other-torch"  # the rule reads the line now
    error = diagnose([line]).error
    assert error is not None and error.exception == "pkg_resources.ContextualVersionConflict"
    assert top_rule("torch.Size: 3 entries") == "none"  # a one-part path with any class is not
