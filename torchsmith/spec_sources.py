"""Adapters that turn a TOML file, ``TORCHSMITH_*`` environment variables and CLI flags into one
:class:`BuildSpec`, merged structurally in the documented order **CLI > env > file > defaults**.

Each resolved key remembers where it came from (:data:`Origin`), so ``torchsmith plan`` can say
"python = 3.11 (from TORCHSMITH_PYTHON)". Unknown keys anywhere are errors with a "did you mean".
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel, ValidationError

from torchsmith.errors import Problem, SpecError
from torchsmith.keyfile import sign_key_problems
from torchsmith.mirror_url import mirror_refusal
from torchsmith.redact import redact_data, redact_url
from torchsmith.spec import BuildSpec, CompanionSource

Origin = Literal["default", "file", "env", "cli"]
ENV_PREFIX = "TORCHSMITH_"
# Variables with this prefix that configure torchsmith itself rather than the build.
ENV_NOT_SPEC = frozenset(
    {
        "TORCHSMITH_DEBUG",
        "TORCHSMITH_HOME",
        "TORCHSMITH_CACHE_ROOT",
        "TORCHSMITH_IN_CONTAINER",
        "TORCHSMITH_TEST_CACHE",
        "TORCHSMITH_UPDATE_SNAPSHOTS",
        # scripts/test's own settings, in the environment of every command the tests run
        *("TORCHSMITH_TEST_BUDGET_S", "TORCHSMITH_TEST_QUICK_BUDGET_S"),
        *("TORCHSMITH_TEST_WORKERS", "TORCHSMITH_TEST_DISK_LOG"),
    }
)
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


@dataclass(frozen=True)
class ResolvedSpec:
    """A validated spec plus the origin of every key that was set by something other than
    the defaults (dotted keys: ``features.cudnn``)."""

    spec: BuildSpec
    origins: Mapping[str, Origin] = field(default_factory=dict)

    def recorded(self) -> dict[str, Any]:
        """The request as a manifest records it for ``torchsmith rebuild``: the keys set (their
        values, credentials masked) and where each came from; the signing key left out (it
        does not change the build)."""
        spec = self.spec.model_dump(mode="json", exclude_defaults=True, exclude={"sign_key"})
        origins = {k: v for k, v in self.origins.items() if k != "sign_key"}
        return {"spec": redact_data(spec), "origins": dict(sorted(origins.items()))}

    def origin(self, key: str) -> Origin:
        return self.origins.get(key, "default")


def _sub_model(annotation: Any) -> type[BaseModel] | None:
    return (
        annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None
    )


@functools.cache
def spec_keys(model: type[BaseModel] = BuildSpec, prefix: str = "") -> dict[str, Any]:
    """Every dotted key the spec accepts, with its annotation."""
    keys: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        sub = _sub_model(info.annotation)
        if sub is not None:
            keys.update(spec_keys(sub, f"{prefix}{name}."))
        else:
            keys[f"{prefix}{name}"] = info.annotation
    return keys


def _suggest(word: str, choices: list[str]) -> str:
    import difflib  # only for a misspelt key

    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f"did you mean {close[0]!r}?" if close else f"known keys: {', '.join(sorted(choices))}"


def _flatten(data: Mapping[str, Any], where: str, prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    sections = {k.split(".")[0] for k in spec_keys() if "." in k}
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping) and dotted in sections:
            flat.update(_flatten(value, where, f"{dotted}."))
        else:
            flat[dotted] = value
    return flat


def _check_keys(flat: Mapping[str, Any], where: str, spell: Any = None) -> list[Problem]:
    known = list(spec_keys())
    problems = []
    for key in flat:
        if key not in known:
            shown = spell(key) if spell else key
            names = [spell(k) if spell else k for k in known]
            problems.append(
                Problem(f"unknown key {shown!r} in {where}", _suggest(shown, names), field=shown)
            )
    return problems


def _is_tuple(annotation: Any) -> bool:
    return get_origin(annotation) is tuple


def _is_bool(annotation: Any) -> bool:
    return annotation is bool or bool in get_args(annotation)


def _coerce_text(key: str, text: str) -> Any:
    """Turn an env-var or CLI string into the structured value its key wants."""
    annotation = spec_keys().get(key)
    if _is_tuple(annotation):  # empty items are kept, for blank_problems to refuse
        return tuple(part.strip() for part in text.split(","))
    if _is_bool(annotation) and text.strip().lower() in _TRUE | _FALSE:
        return text.strip().lower() in _TRUE
    if text.strip().lower() in {"none", "default"} and type(None) in get_args(annotation):
        return None
    return text.strip()


def is_blank(value: Any) -> bool:
    """An empty text, or a list holding an empty item (``,`` / ``8.6,,9.0`` / ``["", "x"]``)."""
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, (tuple, list)):
        return any(isinstance(item, str) and not item.strip() for item in value)
    return False


def blank_problems(
    flat: dict[str, Any], where: str, spell: Any = None, raw: Mapping[str, Any] | None = None
) -> list[Problem]:
    """The one empty-value check of every layer (flag, ``TORCHSMITH_*`` variable, spec key): a
    blank value or a blank list item is refused and removed from ``flat``; dropped, it would turn
    into the default without a word (an empty torch into the newest release, empty targets into
    a whole build, an empty output directory into ''). ``raw``: the text as given, to show."""
    return [
        _blank_problem(key, flat.pop(key), where, spell(key) if spell else key, raw or {})
        for key in [k for k, v in flat.items() if is_blank(v)]
    ]


def _blank_problem(key: str, value: Any, where: str, shown: str, raw: Mapping[str, Any]) -> Problem:
    given = raw.get(key, value)
    if isinstance(value, str):
        what, fix = "an empty value", f"give {shown} a value"
    else:
        what, fix = "an empty item names nothing", f"name each item of {shown} (comma-separated)"
    return Problem(
        f"{shown}={given!r} in {where}: {what}", f"{fix}, or leave {shown} out", field=key
    )


def env_name(key: str) -> str:
    return ENV_PREFIX + key.replace(".", "_").upper()


def from_env(env: Mapping[str, str]) -> tuple[dict[str, Any], list[Problem]]:
    by_name = {env_name(k): k for k in spec_keys()}
    flat: dict[str, Any] = {}
    raw: dict[str, str] = {}
    problems = []
    for name, text in env.items():
        if not name.startswith(ENV_PREFIX) or name in ENV_NOT_SPEC:
            continue
        if name not in by_name:
            problems.append(
                Problem(
                    f"unknown environment variable {name}",
                    _suggest(name, list(by_name)),
                    field=name,
                )
            )
            continue
        flat[by_name[name]] = _coerce_text(by_name[name], text)
        raw[by_name[name]] = text
    return flat, problems + blank_problems(flat, "the environment", env_name, raw)


def _read_problem(path: Path, exc: Exception) -> Problem:
    """The real reason a spec file cannot be read, and the fix that goes with it."""
    if isinstance(exc, FileNotFoundError):
        return Problem(f"spec file {path} does not exist", "check the path given to --spec")
    if isinstance(exc, IsADirectoryError) or path.is_dir():
        return Problem(f"spec file {path} is a directory", "give --spec a TOML file")
    if isinstance(exc, UnicodeDecodeError):
        return Problem(
            f"spec file {path} is not UTF-8 text (byte {exc.start}: {exc.reason}); "
            "is it a binary file?",
            "give --spec a TOML text file (UTF-8)",
        )
    if isinstance(exc, PermissionError):
        return Problem(f"cannot read spec file {path}: {exc}", "check its permissions")
    return Problem(f"cannot read spec file {path}: {exc}", "check the path given to --spec")


def _load_toml(path: Path) -> tuple[dict[str, Any] | None, list[Problem]]:
    if sys.version_info >= (3, 11):  # imported only when a spec file is given
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return None, [_read_problem(path, exc)]
    try:
        return tomllib.loads(text), []
    except tomllib.TOMLDecodeError as exc:
        return None, [Problem(f"{path} is not valid TOML: {exc}", "fix the TOML syntax")]
    except RecursionError:
        return None, [
            Problem(
                f"{path} nests arrays or tables too deeply to be a build spec",
                "a spec is a few flat tables (see docs/options.md); fix the file",
            )
        ]


def from_file(path: Path) -> tuple[dict[str, Any], list[Problem]]:
    data, problems = _load_toml(path)
    if data is None:
        return {}, problems
    data.pop("schema", None)
    data = data.get("torchsmith", data) if isinstance(data.get("torchsmith"), dict) else data
    flat = _flatten(data, str(path))
    return flat, _check_keys(flat, str(path)) + blank_problems(flat, str(path))


def feature_switches(
    enabled: tuple[str, ...], disabled: tuple[str, ...]
) -> tuple[dict[str, bool], list[Problem]]:
    """``--enable``/``--disable`` lists as ``features.*`` keys; a feature in both is an error
    naming both flags (whichever came last would otherwise win silently)."""
    names = {"enable": [n.replace("-", "_") for n in enabled]}
    names["disable"] = [n.replace("-", "_") for n in disabled]
    both = sorted(set(names["enable"]) & set(names["disable"]))
    values = {f"features.{n}": True for n in names["enable"]}
    values.update({f"features.{n}": False for n in names["disable"]})
    problems = [
        Problem(
            f"--enable {n} and --disable {n} were both given",
            f"keep one of them: --enable {n} turns it on, --disable {n} off",
            field=f"features.{n}",
        )
        for n in both
    ]
    return {k: v for k, v in values.items() if k.removeprefix("features.") not in both}, problems


def from_cli(values: Mapping[str, Any]) -> tuple[dict[str, Any], list[Problem]]:
    """CLI values arrive already split into dotted keys; ``None`` means "not given"."""
    flat = {k: v for k, v in values.items() if v is not None}
    problems = _check_keys(flat, "command-line flags")
    known = spec_keys()
    flat = {
        k: (_coerce_text(k, v) if isinstance(v, str) else v) for k, v in flat.items() if k in known
    }
    return flat, problems + blank_problems(flat, "command-line flags")


def _nest(flat: Mapping[str, Any]) -> dict[str, Any]:
    nested: dict[str, Any] = {}
    for key, value in flat.items():
        head, _, tail = key.partition(".")
        if tail:
            nested.setdefault(head, {})[tail] = value
        else:
            nested[head] = value
    return nested


def _validation_problems(exc: ValidationError, origins: Mapping[str, Origin]) -> list[Problem]:
    problems = []
    for err in exc.errors():
        key = ".".join(str(p) for p in err["loc"] if not isinstance(p, int))
        origin = origins.get(key, "default")
        message = str(err["msg"]).removeprefix("Value error, ")
        problems.append(
            Problem(
                redact_url(f"{message} (value {err.get('input')!r} from {origin})"),
                "see `torchsmith plan --help` or docs/options.md",
                field=key,
            )
        )
    return problems


def _path_problem(kind: str, location: str, want_dir: bool) -> str | None:
    path = Path(location).expanduser()
    if not path.exists():
        return f"{kind}:{location}: {path} does not exist"
    if want_dir and not path.is_dir():
        return f"{kind}:{location}: {path} is not a directory (path: takes a source tree)"
    if not want_dir and path.is_dir():
        return f"{kind}:{location}: {path} is a directory, not a file"
    return None


def _tarball_problem(location: str) -> str | None:
    target = location.split("#sha256=", 1)[0]
    if target.startswith("https://"):
        return None
    if "://" in target:
        shown = redact_url(location)
        return f"tarball:{shown}: only https:// URLs are fetched (a tarball is code you run)"
    found = _path_problem("tarball", target, want_dir=False)
    return found and f"{found}, and it is not an https:// URL either"


def _git_problem(url: str) -> str | None:
    """A companion's ``git:URL`` goes through the transports a ``--git-mirror`` may use."""
    refusal = mirror_refusal(url)
    return None if refusal is None else f"git:{redact_url(url)}: {refusal[1]}"


def source_problems(source: str, field: str = "source") -> list[Problem]:
    """What can be checked of a ``path:``/``tarball:``/``bundle:`` source before anything runs:
    the local file or directory exists (no process is started, nothing is downloaded)."""
    kind, _, location = source.partition(":")
    found = None
    if kind == "path":
        found = _path_problem(kind, location, want_dir=True)
    elif kind == "bundle":
        found = _path_problem(kind, location.split("#sha256=", 1)[0], want_dir=False)
    elif kind == "tarball":
        found = _tarball_problem(location)
    elif kind == "git" and location:
        found = _git_problem(location.split("#", 1)[0])
    fixes = {
        "path": "give the directory of the source tree (path:~/src/pytorch, path:~/src/vision)",
        "bundle": "give the file `torchsmith source bundle` wrote, as it printed it "
        "(bundle:torch-src.tar#sha256=HEX)",
        "tarball": "give an https:// URL (optionally #sha256=HEX) or an existing .tar.* file",
        "git": "give an https://, ssh:// or file:// repository URL, or a local repository path",
    }
    return [Problem(found, fixes[kind], field=field)] if found else []


def _companion_source_problems(spec: BuildSpec) -> list[Problem]:
    found: list[Problem] = []
    for name in CompanionSource.model_fields:
        given = spec.companion_source.of(name)
        if given is not None:
            found += source_problems(given, field=f"companion_source.{name}")
    return found


def resolve_spec(
    *,
    file: Path | None = None,
    env: Mapping[str, str] | None = None,
    cli: Mapping[str, Any] | None = None,
) -> ResolvedSpec:
    """Merge the sources (CLI > env > file > defaults), validate, report every problem at once."""
    layers: list[tuple[Origin, dict[str, Any]]] = []
    problems: list[Problem] = []
    if file is not None:
        flat, found = from_file(file)
        layers.append(("file", flat))
        problems += found
    flat, found = from_env(env or {})
    layers.append(("env", flat))
    problems += found
    flat, found = from_cli(cli or {})
    layers.append(("cli", flat))
    problems += found
    merged: dict[str, Any] = {}
    origins: dict[str, Origin] = {}
    for origin, layer in layers:
        for key, value in layer.items():
            if key in spec_keys():
                merged[key] = value
                origins[key] = origin
    try:
        spec = BuildSpec.model_validate(_nest(merged))
    except ValidationError as exc:
        problems += _validation_problems(exc, origins)
        spec = None
    if spec is not None:
        problems += source_problems(spec.source)
        problems += _companion_source_problems(spec)
        problems += sign_key_problems(spec.sign_key)
    if problems or spec is None:
        raise SpecError(problems, "fix the listed keys; `torchsmith plan --help` lists them all")
    return ResolvedSpec(spec, origins)
