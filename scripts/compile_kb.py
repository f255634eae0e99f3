#!/usr/bin/env python3
"""Write torchsmith/kb/data/compiled.json: the knowledge-base TOML files pre-parsed, so that
`torchsmith plan` does not spend its time in the pure-Python TOML parser. The loader ignores the
file whenever its hash does not match the TOML files; a unit test fails when it is stale."""

from pathlib import Path

from torchsmith import kb

if __name__ == "__main__":
    target = Path(kb.__file__).parent / "data" / kb.COMPILED_NAME
    target.write_text(kb.compile_records(), encoding="utf-8")
    print(f"wrote {target}")
