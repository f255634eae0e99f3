"""Base-image recipes: when NVIDIA's image of a CUDA release is deleted or none is recorded (or on
request, ``--base-recipe``), the generated Dockerfile makes the base stage itself — the OS image
plus the CUDA packages of a package repository that has them: NVIDIA's CUDA apt repository (what
NVIDIA's own end-of-life Dockerfiles did, facts in ``kb/data/images/images.toml``) or a Debian
suite's ``nvidia-cuda-toolkit`` (the packages torchsmith's ``apt`` toolkit provider takes). Which
recipe and why is a decision of the one container plan (:mod:`.planning`); the stage is
rendered by :mod:`.recipe_stage`. Pure: reads the image knowledge only."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from torchsmith.container.images import CudaImage, ImageKb, OsImage
from torchsmith.errors import PlanError, Problem
from torchsmith.plan_model import BuildPlan
from torchsmith.planner.toolkit_offers import SUITES
from torchsmith.toolchains.cuda.apt import MIRROR, PACKAGES

RecipeKind = Literal["nvidia", "debian"]
RecipeMode = Literal["auto", "image", "nvidia", "debian"]
DEBIAN_ROOT = "/usr/lib/nvidia-cuda-toolkit"
"""Where Debian's nvcc lives (its /usr/bin/nvcc is a wrapper; torchsmith's ``system`` toolkit
provider lays a standard root over it)."""


@dataclass(frozen=True)
class AptSource:
    """One repository the recipe adds: its URL, how apt reads it, the key that signs it."""

    url: str
    dist: str
    """``/`` for NVIDIA's flat repositories, ``trixie main contrib non-free`` for Debian's."""
    key_url: str | None = None
    """Fetched and checked against ``fingerprint``; None: the OS image's own archive keyring."""
    fingerprint: str | None = None


@dataclass(frozen=True)
class Recipe:
    """The generated base stage: FROM the OS image, these repositories, these packages."""

    kind: RecipeKind
    cuda: str
    os: OsImage
    sources: tuple[AptSource, ...]
    packages: tuple[str, ...]
    root: str
    reason: str
    libraries: tuple[str, ...] = ()
    """What the recipe links besides CUDA ('cuDNN', 'NCCL')."""
    mirrored: bool = False

    def describe(self) -> str:
        """``debian trixie nvidia-cuda-toolkit 12.4`` / ``NVIDIA's CUDA apt repository …``."""
        if self.kind == "debian":
            return f"debian {self.os.codename} nvidia-cuda-toolkit {self.cuda}"
        return f"NVIDIA's CUDA {self.cuda} apt repository on {self.os.id}"

    def summary(self) -> str:
        """What it is and where its packages come from, one line."""
        return f"{self.describe()}; packages from {', '.join(s.url for s in self.sources)}"

    def record(self) -> dict[str, Any]:
        """For the manifest and ``--json``: which recipe, its repositories and packages."""
        return {
            "kind": self.kind,
            "describe": self.describe(),
            "reason": self.reason,
            "cuda": self.cuda,
            "os": self.os.id,
            "repositories": [s.url for s in self.sources],
            "packages": list(self.packages),
            "libraries": list(self.libraries),
        }


def _gone(record: CudaImage | None, cuda: str) -> str | None:
    """Why NVIDIA's image cannot be used (None: it can)."""
    if record is None:
        return f"no nvidia/cuda image of CUDA {cuda} is recorded"
    if record.status == "deleted":
        return f"NVIDIA deleted its CUDA {cuda} images ({record.removed})"
    return None


def choose_recipe(
    kb: ImageKb, cuda: str, mode: RecipeMode, mirror: str | None = None
) -> Recipe | None:
    """The recipe for CUDA ``cuda``, or None when NVIDIA's image is taken."""
    if mode == "image":
        return None
    gone = _gone(kb.known_cuda(cuda), cuda)
    if mode == "auto":
        if gone is None:
            return None
        kind: RecipeKind = "nvidia" if kb.recipe(cuda) is not None else "debian"
        if kind == "debian" and cuda not in SUITES:
            raise PlanError([_no_recipe(kb, cuda, gone)])
        because = gone
    else:
        kind, because = mode, f"asked (--base-recipe {mode})"
    if kind == "nvidia":
        return _nvidia(kb, cuda, because, mirror)
    return _debian(kb, cuda, because, mirror)


def _known(kb: ImageKb) -> str:
    return ", ".join(r.cuda for r in kb.recipes)


def _no_recipe(kb: ImageKb, cuda: str, gone: str) -> Problem:
    return Problem(
        f"{gone}, and no recipe makes one: NVIDIA's apt repository is recorded for CUDA "
        f"{_known(kb)}, Debian packages 11.8 (bookworm) and 12.4 (trixie)",
        "name an image of yours with --base-image (its CUDA is checked inside it), or pick a "
        "CUDA release a recipe knows",
        "accelerator",
    )


def _nvidia(kb: ImageKb, cuda: str, because: str, mirror: str | None) -> Recipe:
    record = kb.recipe(cuda)
    repo = kb.repo(record.os) if record is not None else None
    if record is None or repo is None:
        raise PlanError(
            [
                Problem(
                    f"--base-recipe nvidia: NVIDIA's CUDA apt repository is recorded for CUDA "
                    f"{_known(kb)}, not {cuda}",
                    "use --base-recipe debian (11.8, 12.4), --base-recipe image, or --base-image",
                    "base_recipe",
                )
            ]
        )
    cuda_repo = AptSource(mirror or repo.url, "/", repo.key, repo.fingerprint)
    ml_repo = AptSource(repo.ml_url, "/", repo.ml_key, repo.ml_fingerprint)
    libs = ("cuDNN",) + (("NCCL",) if record.nccl_packages else ())
    packages = (*record.cuda_packages, *record.cudnn_packages, *record.nccl_packages)
    why = f"recipe: {because}; NVIDIA's CUDA {cuda} apt packages on {record.os}, as its image had"
    return Recipe(
        "nvidia", cuda, kb.os(record.os), (cuda_repo, ml_repo), packages, record.root, why,
        libs, mirror is not None,
    )  # fmt: skip


def _debian(kb: ImageKb, cuda: str, because: str, mirror: str | None) -> Recipe:
    suite = SUITES.get(cuda)
    if suite is None:
        raise PlanError(
            [
                Problem(
                    f"--base-recipe debian: no Debian suite packages CUDA {cuda} (bookworm: "
                    "11.8, trixie: 12.4)",
                    "use --base-recipe nvidia, --base-recipe image, or --base-image",
                    "base_recipe",
                )
            ]
        )
    source = AptSource(mirror or MIRROR, f"{suite} main contrib non-free")
    why = f"recipe: {because}; Debian {suite}'s nvidia-cuda-toolkit {cuda} (non-free)"
    return Recipe(
        "debian", cuda, kb.debian(suite), (source,), PACKAGES[cuda], DEBIAN_ROOT, why,
        mirrored=mirror is not None,
    )  # fmt: skip


def _env(plan: BuildPlan, name: str) -> str | None:
    return next((e.value for e in plan.env if e.name == name), None)


def _cudnn(plan: BuildPlan) -> bool:
    cudnn = plan.features.get("cudnn")
    return cudnn is not None and bool(cudnn.value)


def library_warnings(recipe: Recipe, plan: BuildPlan) -> list[str]:
    """What the build will lack without a word otherwise: cuDNN, left to torch's default."""
    if "cuDNN" in recipe.libraries or _cudnn(plan):
        return []
    return [
        f"the {recipe.describe()} recipe has no cuDNN: torch is built without it "
        "(--base-recipe nvidia, or --base-image with cuDNN, for one with it)"
    ]


def library_problems(recipe: Recipe, plan: BuildPlan) -> list[Problem]:
    """What the plan links that the recipe cannot provide (refused, never dropped)."""
    found = []
    if _env(plan, "USE_SYSTEM_NCCL") == "1" and "NCCL" not in recipe.libraries:
        found.append(
            Problem(
                f"the plan links the system's NCCL, and the {recipe.describe()} recipe has none "
                "(no NCCL package of that CUDA release is recorded)",
                "link torch's own NCCL (--link nccl=static), or give --base-image an image "
                "with NCCL",
                "linking",
            )
        )
    if _cudnn(plan) and "cuDNN" not in recipe.libraries:
        found.append(
            Problem(
                f"the plan asks for cuDNN, and the {recipe.describe()} recipe has none "
                "(Debian's nvidia-cudnn only downloads it from NVIDIA at install time)",
                "--disable cudnn, or use --base-recipe nvidia / --base-image",
                "features",
            )
        )
    return found
