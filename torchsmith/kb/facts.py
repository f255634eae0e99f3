"""Facts of one knowledge-base record quoted in another: ``{kb:cuda 11.8 clang_max+1}``.

A fix whose patch text states a fact the knowledge base already holds (a CUDA release's host
compiler bound, say) quotes the record instead of copying the number, so the two cannot drift.
The placeholder is replaced when the knowledge base is loaded; a reference to a missing record
or to a fact the record does not state is a :class:`KnowledgeBaseError`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from torchsmith.errors import KnowledgeBaseError
from torchsmith.kb.models import CudaRelease, Fix

PLACEHOLDER = re.compile(r"\{kb:cuda (\d+\.\d+) (gcc_max|clang_max)(\+1)?\}")


def _value(match: re.Match[str], cudas: Sequence[CudaRelease], where: str) -> str:
    version, fact, plus = match.groups()
    record = next((c for c in cudas if c.version == version), None)
    value = getattr(record, fact, None) if record else None
    if value is None:
        raise KnowledgeBaseError(
            f"{where}: {match[0]} quotes a fact the knowledge base does not hold",
            f"add {fact} to the CUDA {version} record of kb/data/cuda.toml, or fix the reference",
        )
    return str(int(value) + (1 if plus else 0))


def render(text: str, cudas: Sequence[CudaRelease], where: str) -> str:
    return PLACEHOLDER.sub(lambda m: _value(m, cudas, where), text)


def render_fix(fix: Fix, cudas: Sequence[CudaRelease]) -> Fix:
    """The fix with every quoted fact replaced by its value (unchanged when it quotes none)."""
    where = f"fix {fix.id}"
    edits = [e.model_copy(update={"replace": render(e.replace, cudas, where)}) for e in fix.edits]
    return fix.model_copy(
        update={"edits": edits, "explanation": render(fix.explanation, cudas, where)}
    )
