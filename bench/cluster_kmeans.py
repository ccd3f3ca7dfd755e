"""k-means's assignment steps on Ray workers against this process's threads, full deck.

The flop of the full deck's 169/1000/1000/1000 abstraction (:data:`bench._fulldeck.FULL_DECK_PARAMS`,
built once into the bench cache, whose feature files this reads): 1,286,792 canonical
hands, their 31-value histogram CDFs, 1,000 clusters, the abstraction's seed and
``--iterations`` Lloyd updates (4 by default, as the abstraction runs them; the first
steps are the ones whose points move most). Two sides, each timed around
:func:`abstraction.kmeans.kmeans` alone:

* ``local``: in this process, numba's threads (``--threads``, default 2);
* ``cluster``: :class:`abstraction.cluster.ShardedAssignment` on ``--workers`` (2)
  single-threaded Ray workers of a local Ray instance (``--cluster local``), each owning
  a range of the points; the seeding and the means run here, on the threads.

Both give the same centroids and labels, bit for bit (checked). Prints the seconds,
``ratio`` = local / cluster seconds, the assignment steps, the label bytes the workers
sent back a step and the points' bytes sent to them once. Prints one JSON object as its
last line. On a 2-core machine the two sides use the same two cores; what the cluster
buys is more machines.

Usage: ``python bench/cluster_kmeans.py [--iterations N] [--workers W] [--threads T]``
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._fulldeck import FULL_DECK_GAME, FULL_DECK_PARAMS, cached_abstraction, log  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--iterations", type=int, default=FULL_DECK_PARAMS.max_iter)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args(argv)

    import numba

    from abstraction import features as F
    from abstraction.build import _METRICS
    from abstraction.cluster import FeatureCluster
    from abstraction.kmeans import kmeans
    from abstraction.plan import plan_build
    from poker.game import load_game

    game = load_game(FULL_DECK_GAME)
    _, info = cached_abstraction(game, FULL_DECK_PARAMS)
    cache = Path(info["directory"]) / "cache"
    street = 1
    f = F.StreetFeatures(*(np.load(cache / f"street{street}.{x}.npy") for x in ("counts", "s1", "s2", "weights")))
    plan = plan_build(game, FULL_DECK_PARAMS).streets[street]
    space = F.CardSpace.from_game(game)
    x = F.feature_vectors(f.counts, f.s1, f.s2, space.scale, _METRICS[plan.kind])
    w = f.weights.astype(np.float64)
    k = plan.own_buckets
    seed = np.random.SeedSequence([FULL_DECK_PARAMS.seed, street])
    common = dict(weights=w, seed=seed, max_iter=args.iterations, tol=FULL_DECK_PARAMS.tol,
                  sample_size=FULL_DECK_PARAMS.sample_size)
    numba.set_num_threads(args.threads)
    log(f"flop: {x.shape[0]:,} points of {x.shape[1]} values, k = {k}; warming up")
    kmeans(x[:50_000], 50, weights=w[:50_000], seed=1, max_iter=2)  # compile outside the timing

    t0 = time.perf_counter()
    here = kmeans(x, k, **common)
    local_s = time.perf_counter() - t0
    log(f"local: {local_s:.1f} s")

    features = FeatureCluster("local", args.workers)
    try:
        small = kmeans(x[:50_000], 50, weights=w[:50_000], seed=1, max_iter=2, assignment=features.assignment)
        assert small.iterations == 2  # the workers started and compiled, outside the timing
        steps0, bytes0 = features.assign_steps, features.bytes_in
        t0 = time.perf_counter()
        there = kmeans(x, k, **common, assignment=features.assignment)
        cluster_s = time.perf_counter() - t0
    finally:
        features.close()
    steps, label_bytes = features.assign_steps - steps0, features.bytes_in - bytes0
    log(f"cluster: {cluster_s:.1f} s")
    same = bool(np.array_equal(here.centroids, there.centroids) and np.array_equal(here.labels, there.labels))
    doc = {
        "game": game.name, "street": "flop", "points": int(x.shape[0]), "dims": int(x.shape[1]), "k": k,
        "iterations": here.iterations, "threads": args.threads, "workers": args.workers,
        "local_s": round(local_s, 2), "cluster_s": round(cluster_s, 2), "ratio": round(local_s / cluster_s, 3),
        "steps": steps, "label_bytes_per_step": round(label_bytes / max(steps, 1)),
        "points_bytes_sent_once": int(x.nbytes), "identical": same,
    }
    print(json.dumps(doc))
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
