#!/usr/bin/env python3
"""Regenerate torchsmith/schema/spec.schema.json and docs/options.md from the spec model."""

from torchsmith.docgen import write_all

if __name__ == "__main__":
    for path in write_all():
        print(f"wrote {path}")
