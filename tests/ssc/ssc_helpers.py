"""Small rbf instances from real data and cached cvxpy references for the ssc tests."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from sklearn.preprocessing import StandardScaler

from cvxclust.datasets import load_dataset
from cvxclust.kernels import median_distance, rbf
from cvxclust.ssc import FrobeniusDS, FrobeniusPSD

#: (dataset, n_samples, width factor): rbf kernels with delta = factor * median distance.
INSTANCES = [
    ("iris", 40, 1.0),
    ("iris", 40, 0.5),
    ("wine", 40, 1.0),
    ("wine", 40, 0.5),
    ("digits", 50, 1.0),
    ("digits", 50, 0.5),
]


def instance_id(instance) -> str:
    name, n, factor = instance
    return f"{name}{n}-delta{factor:g}"


@functools.lru_cache(maxsize=None)
def data(name: str, n_samples: int | None = None):
    """Features (wine standardized) and labels of a stratified subset of a real data set."""
    X, y = load_dataset(name, n_samples=n_samples)
    if name == "wine":
        X = StandardScaler().fit_transform(X)
    return X, y


@functools.lru_cache(maxsize=None)
def kernel(name: str, n_samples: int | None, factor: float) -> np.ndarray:
    """rbf kernel with delta = factor * median pairwise distance (read-only, shared)."""
    X, _ = data(name, n_samples)
    K = rbf(X, factor * median_distance(X))
    K.setflags(write=False)
    return K


@functools.lru_cache(maxsize=None)
def reference(cls_name: str, name: str, n_samples: int | None, factor: float, solver: str = "CLARABEL", eps=None):
    """The cvxpy reference result of FrobeniusPSD / FrobeniusDS on an instance (solved once)."""
    cls = {"FrobeniusPSD": FrobeniusPSD, "FrobeniusDS": FrobeniusDS}[cls_name]
    return cls(kernel(name, n_samples, factor)).solve("reference", solver=solver, eps=eps)


# every relaxation with every registered scalable method: a new solver is tested once registered
RELAXATIONS = (FrobeniusPSD, FrobeniusDS)
SCALABLE = [
    pytest.param(cls, method, id=f"{cls.name}-{method}")
    for cls in RELAXATIONS
    for method in cls.methods()
    if method != "reference"
]
