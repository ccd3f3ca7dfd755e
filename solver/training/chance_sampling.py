"""Chance sampling and public chance sampling: CFR that samples the cards and walks
every action.

* **Chance-sampled CFR** (Zinkevich, Johanson, Bowling & Piccione 2007, Section 4; the
  baseline of Lanctot, Waugh, Zinkevich & Bowling 2009): each iteration deals one
  whole hand (board and both private hands) and walks every action of both players
  over it, one scalar walk per player (:func:`solver._kernels.cs_iterations`).
* **Public chance sampling** (Johanson, Bard, Lanctot, Gibson & Bowling 2012,
  "Efficient Nash equilibrium approximation through Monte Carlo counterfactual regret
  minimization", AAMAS, Section 3.1): each iteration samples only the public chance
  events (the board) and walks the public tree over it with one reach vector per player
  over every private hand, as vector CFR does, with its O(n) showdown
  (:func:`solver._kernels.pcs_iterations`). Vector CFR is the same walk with every board
  enumerated; on a game without a board the two are the same iteration.

Both keep vector CFR's tables and layout (:class:`~solver.training.vector_cfr.VectorCFRSolver`:
its policies, checkpoints and strategy files), vanilla regret matching and the uniform
(or, from ``delay``, the same delayed) average. What chance decides on iteration t comes
from a counter-based stream (Philox: Salmon et al. 2011) keyed by the seed and t alone,
so a run repeats bit for bit however its iterations are split into calls, and resumes
exactly from a checkpoint.

They need the board states listed (the vector form's chance layer, :mod:`solver.chance`),
so they run where vector CFR runs, and a training run refuses them where it refuses it.
"""

from __future__ import annotations

import numpy as np

from .. import _kernels as K
from ..problem import Problem
from .vector_cfr import Algorithm, VectorCFRSolver

__all__ = ["ChanceSamplingSolver", "PublicChanceSamplingSolver", "chance_uniforms"]

#: Iterations whose uniforms are drawn at once (bounds the scratch array: 4 MiB).
_CHUNK = 1 << 16


def chance_uniforms(seed: int, done: int, count: int) -> np.ndarray:
    """The uniforms of iterations done + 1 .. done + count, ``K.SAMPLE_UNIFORMS`` each:
    iteration t's are Philox's two blocks at counter 2 (t - 1) under key ``seed``, the
    same whatever ``done`` and ``count`` are."""
    blocks = K.SAMPLE_UNIFORMS // 4  # Philox4x64 gives four 64-bit words a block
    gen = np.random.Generator(np.random.Philox(key=int(seed), counter=blocks * int(done)))
    return gen.random((int(count), K.SAMPLE_UNIFORMS))


class _SampledChance(VectorCFRSolver):
    """What both share: the seed, and iterations run in chunks of drawn uniforms."""

    def __init__(self, problem: Problem, *, seed: int = 0, delay: int = 0) -> None:
        if seed < 0:
            raise ValueError(f"seed {seed} must not be negative")
        super().__init__(problem, plus=False, linear=False, delay=delay)
        self.seed = int(seed)
        self._path = np.full(len(problem.chance.kernel.weight), -1, dtype=np.int64)

    def iterate(self, iterations: int = 1) -> None:
        """Run ``iterations`` more iterations."""
        if iterations < 0:
            raise ValueError(f"iterations {iterations} must not be negative")
        left = int(iterations)
        while left > 0:
            n = min(left, _CHUNK)
            self._run(chance_uniforms(self.seed, self.iterations, n))
            self.iterations += n
            left -= n

    def _run(self, uniforms: np.ndarray) -> None:
        raise NotImplementedError


class PublicChanceSamplingSolver(_SampledChance):
    """Public chance sampling CFR (Johanson et al. 2012): one board an iteration, every
    private hand as a vector."""

    def __init__(self, problem: Problem, *, seed: int = 0, delay: int = 0) -> None:
        super().__init__(problem, seed=seed, delay=delay)
        base = problem.chance.kernel
        # The kernel narrows this copy's board-state tree to each iteration's board.
        self._narrowed = base._replace(
            bs_child=base.bs_child.copy(),
            bs_n_child=base.bs_n_child.copy(),
            root_states=base.root_states[:1].copy(),
            weight=base.weight.copy(),
        )

    @property
    def algorithm(self) -> Algorithm:
        """:attr:`Algorithm.PUBLIC_CHANCE_SAMPLING`."""
        return Algorithm.PUBLIC_CHANCE_SAMPLING

    def _run(self, uniforms: np.ndarray) -> None:
        p, b = self.problem, self._buf
        K.pcs_iterations(
            p.ktree,
            p.kchance,
            self._narrowed,
            uniforms,
            self.regrets,
            self.avg_sums,
            self._strat,
            b.vals,
            b.rbuf,
            b.cs,
            b.frames,
            self._path,
            self.iterations,
            K.AVG_UNIFORM,
            self.delay,
        )


class ChanceSamplingSolver(_SampledChance):
    """Chance-sampled CFR (Zinkevich et al. 2007): one deal an iteration, a scalar walk
    of every action."""

    def __init__(self, problem: Problem, *, seed: int = 0, delay: int = 0) -> None:
        super().__init__(problem, seed=seed, delay=delay)
        depth = problem.tree.max_depth + 2
        width = problem.tree.max_actions
        self._sig = np.zeros((depth, width))
        self._vals = np.zeros((depth, width))
        self._reach = np.zeros((depth, 2))
        self._frames = np.zeros((depth, 2), dtype=np.int64)
        self._bk = np.zeros((2, len(self._path)), dtype=np.int64)
        #: Nodes the walks visited (every node of every walk, terminals included).
        self.nodes = 0

    @property
    def algorithm(self) -> Algorithm:
        """:attr:`Algorithm.CHANCE_SAMPLING`."""
        return Algorithm.CHANCE_SAMPLING

    def _run(self, uniforms: np.ndarray) -> None:
        p = self.problem
        self.nodes += K.cs_iterations(
            p.ktree,
            p.kchance,
            uniforms,
            self.regrets,
            self.avg_sums,
            self._sig,
            self._vals,
            self._reach,
            self._frames,
            self._path,
            self._bk,
            self.iterations,
            K.AVG_UNIFORM,
            self.delay,
        )
