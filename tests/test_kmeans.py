"""Weighted k-means (abstraction.kmeans): determinism, no empty clusters, weights as
multiplicities, and the triangle-inequality (Yinyang / Hamerly) assignment equal to plain
Lloyd's."""

from __future__ import annotations

import numpy as np
import pytest

from abstraction.kmeans import kmeans, kmeans_plus_plus, nearest


def _blobs(seed: int, n: int = 4000, d: int = 6, centres: int = 12) -> np.ndarray:
    rng = np.random.default_rng(seed)
    mu = rng.normal(size=(centres, d)) * 3
    return (mu[rng.integers(0, centres, n)] + rng.normal(size=(n, d))).astype(np.float32)


def _cdfs(seed: int, n: int = 5000, d: int = 15) -> np.ndarray:
    """Points shaped like the abstraction's features (CDFs of random histograms)."""
    rng = np.random.default_rng(seed)
    return np.cumsum(rng.dirichlet(np.full(d + 1, 0.4), size=n), axis=1)[:, :d].astype(np.float32)


def test_deterministic_for_a_seed() -> None:
    x = _blobs(1)
    a = kmeans(x, 40, seed=5)
    b = kmeans(x, 40, seed=5)
    np.testing.assert_array_equal(a.centroids, b.centroids)
    np.testing.assert_array_equal(a.labels, b.labels)
    assert a.inertia == b.inertia
    c = kmeans(x, 40, seed=6)
    assert not np.array_equal(a.centroids, c.centroids)


def test_labels_are_nearest_centroids_and_clusters_not_empty() -> None:
    x = _cdfs(2)
    w = np.random.default_rng(3).integers(1, 25, size=x.shape[0]).astype(np.float64)
    r = kmeans(x, 150, weights=w, seed=1, tol=0.0)
    np.testing.assert_array_equal(r.labels, nearest(x, r.centroids))
    assert np.bincount(r.labels, minlength=150).min() > 0
    assert r.converged
    # one point at a time gives the same answer as the batch
    assert all(nearest(x[i : i + 1], r.centroids)[0] == r.labels[i] for i in range(0, x.shape[0], 97))


def test_empty_clusters_are_reseeded_not_dropped() -> None:
    rng = np.random.default_rng(4)
    distinct = rng.random((12, 3)).astype(np.float32)
    x = np.repeat(distinct, 30, axis=0)
    # every centre starts on the same point: all but one cluster are empty at first
    r = kmeans(x, 12, init=np.repeat(x[:1], 12, axis=0), seed=0)
    assert r.reseeded >= 11
    counts = np.bincount(r.labels, minlength=12)
    assert (counts == 30).all()
    # as many clusters as distinct points: each distinct point its own cluster
    r2 = kmeans(x, 12, seed=3)
    assert (np.bincount(r2.labels, minlength=12) == 30).all()
    with pytest.raises(ValueError, match="distinct"):
        kmeans(x, 13, seed=0)


def test_zero_weight_points_never_seed_a_cluster() -> None:
    x = _blobs(5, n=600)
    w = np.ones(x.shape[0])
    w[::2] = 0.0
    r = kmeans(x, 20, weights=w, seed=2)
    assert np.bincount(r.labels[w > 0], minlength=20).min() > 0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_weights_equal_duplicated_points(seed: int) -> None:
    x = _cdfs(10 + seed, n=700, d=8)
    w = np.random.default_rng(seed).integers(1, 5, size=x.shape[0])
    a = kmeans(x, 25, weights=w.astype(np.float64), seed=seed, tol=0.0)
    b = kmeans(np.repeat(x, w, axis=0), 25, seed=seed, tol=0.0)
    np.testing.assert_array_equal(np.repeat(a.labels, w), b.labels)
    np.testing.assert_allclose(a.centroids, b.centroids, rtol=0, atol=1e-6)
    assert a.inertia == pytest.approx(b.inertia, rel=1e-9)


@pytest.mark.parametrize(
    "points,k,groups",
    [("cdf", 200, None), ("cdf", 200, 1), ("blobs", 60, None), ("grid", 30, None), ("grid", 30, 1)],
)
def test_triangle_inequality_equals_plain_lloyd(points: str, k: int, groups: int | None) -> None:
    if points == "cdf":
        x = _cdfs(20)
    elif points == "blobs":
        x = _blobs(21)
    else:  # integer grid: many exact distance ties
        x = np.random.default_rng(22).integers(0, 6, size=(3000, 3)).astype(np.float32)
    w = np.random.default_rng(23).integers(1, 9, size=x.shape[0]).astype(np.float64)
    init = kmeans_plus_plus(x, k, weights=w, seed=9)
    fast = kmeans(x, k, weights=w, init=init, tol=0.0, groups=groups, max_iter=300)
    plain = kmeans(x, k, weights=w, init=init, tol=0.0, accelerated=False, max_iter=300)
    assert fast.iterations == plain.iterations
    np.testing.assert_array_equal(fast.labels, plain.labels)
    np.testing.assert_array_equal(fast.centroids, plain.centroids)
    if points == "cdf" and groups is None:
        assert fast.full_scans < 0.5 * plain.full_scans  # the bounds did skip work


def test_bad_input() -> None:
    x = _blobs(30, n=50)
    with pytest.raises(ValueError, match="1 <= k <= n"):
        kmeans(x, 51)
    with pytest.raises(ValueError, match="weights"):
        kmeans(x, 3, weights=-np.ones(50))
    with pytest.raises(ValueError, match="2-d"):
        kmeans(x[0], 3)
    with pytest.raises(ValueError, match="do not match"):
        nearest(x, np.zeros((3, 2), np.float32))
