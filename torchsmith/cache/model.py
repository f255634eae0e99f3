"""The compiler cache as the plan holds it: defined with the plan (:mod:`torchsmith.plan_types`),
re-exported here for the cache modules."""

from torchsmith.plan_types import SCHEMES, CachePlan, RemoteKind, remote_kind_of

__all__ = ["SCHEMES", "CachePlan", "RemoteKind", "remote_kind_of"]
