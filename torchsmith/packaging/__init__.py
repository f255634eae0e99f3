"""Packages other than the wheel, made from it: conda packages and local channels
(:mod:`.conda`)."""
