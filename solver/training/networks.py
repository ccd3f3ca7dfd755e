"""Deep CFR's networks, in JAX (the optional ``deep`` extra): a residual MLP, its Adam
training from scratch on a memory, and batched prediction.

The architecture scales down Brown et al. 2019's (Section 5 and Figure 2): fully
connected ReLU layers with skip connections after the first, the last hidden layer
normalised to zero mean and unit variance, then a linear head with one output per action.
An advantage network's head is the advantages; a strategy network's is a softmax over the
information set's legal actions. Training is the paper's: each network starts from fresh
weights, takes ``steps`` Adam steps (learning rate 0.001) on minibatches drawn uniformly
from its memory, gradients clipped to norm 1, and the squared error of every sample
weighted by its iteration t (linear weighting, the paper's Section 4). A memory holds row
numbers into one feature table, gathered inside the compiled step.

JAX over PyTorch: JAX's CPU wheels (jax and jaxlib, with ml_dtypes and opt_einsum) download
about 89 MB and install about 380 MB (jax 0.10.2, measured), where PyPI's Linux torch wheel alone is 555 MB
(1.2 GB installed) and does not import without the CUDA libraries it depends on
(``libcudnn.so.9``), gigabytes more; the CPU-only torch wheel is not on PyPI. On speed,
one ``jit`` compiles the whole training loop (``lax.fori_loop`` over the Adam steps), so a
step of these small networks costs no Python dispatch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

__all__ = ["NetSpec", "Params", "Trainer", "params_from_arrays", "params_to_arrays", "require_jax", "trainer"]

#: Network weights: per layer ``(weight, bias)``, the head last.
Params = list[tuple[Any, Any]]


def require_jax() -> Any:
    """The ``jax`` module, or ``ValueError`` with the one line that installs it (a run's
    configuration errors are ``ValueError``, reported in one line)."""
    try:
        import jax
    except ImportError:
        raise ValueError(
            "deep needs JAX, the optional deep extra: pip install -e '.[deep]'"
        ) from None
    return jax


@dataclass(frozen=True)
class NetSpec:
    """A network's shape: ``inputs`` features, ``layers`` hidden layers of ``hidden``
    units, ``outputs`` actions; ``policy``: a softmax head (strategy network) instead of
    a linear one (advantage network)."""

    inputs: int
    outputs: int
    hidden: int = 64
    layers: int = 3
    policy: bool = False

    def count(self) -> int:
        """Number of weights and biases."""
        n = self.inputs * self.hidden + self.hidden
        n += (self.layers - 1) * (self.hidden * self.hidden + self.hidden)
        return n + self.hidden * self.outputs + self.outputs


def _init(jax: Any, spec: NetSpec, key: Any) -> Params:
    """He-initialised weights, zero biases."""
    jnp = jax.numpy
    sizes = [spec.inputs] + [spec.hidden] * spec.layers + [spec.outputs]
    keys = jax.random.split(key, len(sizes) - 1)
    return [
        (
            jax.random.normal(k, (m, n), jnp.float32) * jnp.sqrt(2.0 / m).astype(jnp.float32),
            jnp.zeros((n,), jnp.float32),
        )
        for k, m, n in zip(keys, sizes[:-1], sizes[1:])
    ]


def _forward(jax: Any, spec: NetSpec, params: Params, x: Any, mask: Any) -> Any:
    """The network's outputs on ``x`` (a batch); ``mask``: 1 on legal actions."""
    jnp = jax.numpy
    w, b = params[0]
    h = jax.nn.relu(x @ w + b)
    for w, b in params[1:-1]:
        h = h + jax.nn.relu(h @ w + b)  # skip connection
    h = (h - h.mean(axis=-1, keepdims=True)) / (h.std(axis=-1, keepdims=True) + 1e-5)
    w, b = params[-1]
    out = h @ w + b
    if spec.policy:
        out = jax.nn.softmax(jnp.where(mask > 0, out, -1e9), axis=-1) * mask
    return out * mask


class Trainer:
    """Fits one kind of network (``spec``) to memories of a fixed capacity over one
    feature table, compiled once: :meth:`fit` trains from scratch, :meth:`predict`
    evaluates."""

    def __init__(self, spec: NetSpec, *, steps: int, batch: int, lr: float = 1e-3, clip: float = 1.0) -> None:
        jax = require_jax()
        jnp = jax.numpy
        self.spec, self.steps, self.batch = spec, steps, batch

        def loss(params: Params, x: Any, y: Any, w: Any, m: Any) -> Any:
            err = (_forward(jax, spec, params, x, m) - y) ** 2
            return (w * err.sum(axis=-1)).sum() / w.sum()

        grad = jax.value_and_grad(loss)
        b1, b2, eps = 0.9, 0.999, 1e-8

        def fit(key: Any, feats: Any, masks: Any, rows: Any, targets: Any, iters: Any, n: Any) -> tuple[Params, Any]:
            init_key, key = jax.random.split(key)
            params = _init(jax, spec, init_key)
            zeros = jax.tree_util.tree_map(jnp.zeros_like, params)

            def step(i: Any, carry: Any) -> Any:
                params, mom, vel, key, _ = carry
                key, sub = jax.random.split(key)
                idx = jax.random.randint(sub, (batch,), 0, n)
                r = rows[idx]
                value, g = grad(params, feats[r], targets[idx], iters[idx].astype(jnp.float32), masks[r])
                norm = jnp.sqrt(sum(jnp.sum(x * x) for x in jax.tree_util.tree_leaves(g)))
                g = jax.tree_util.tree_map(lambda x: x * jnp.minimum(1.0, clip / (norm + 1e-12)), g)
                t = (i + 1).astype(jnp.float32)
                mom = jax.tree_util.tree_map(lambda m_, g_: b1 * m_ + (1 - b1) * g_, mom, g)
                vel = jax.tree_util.tree_map(lambda v_, g_: b2 * v_ + (1 - b2) * g_ * g_, vel, g)
                scale = lr * jnp.sqrt(1 - b2**t) / (1 - b1**t)
                params = jax.tree_util.tree_map(
                    lambda p, m_, v_: p - scale * m_ / (jnp.sqrt(v_) + eps), params, mom, vel
                )
                return params, mom, vel, key, value

            carry = (params, zeros, zeros, key, jnp.float32(0.0))
            params, _, _, _, last = jax.lax.fori_loop(0, steps, step, carry)
            return params, last

        self._fit: Callable[..., tuple[Params, Any]] = jax.jit(fit)
        self._predict = jax.jit(lambda params, x, m: _forward(jax, spec, params, x, m))
        self._jax = jax

    def fit(
        self,
        seed: int,
        feats: np.ndarray,
        masks: np.ndarray,
        rows: np.ndarray,
        targets: np.ndarray,
        iters: np.ndarray,
        n: int,
    ) -> tuple[Params, float]:
        """Train fresh weights (drawn from ``seed``) on the first ``n`` samples of a
        memory (``rows`` into ``feats``/``masks``, ``targets``, iteration ``iters``);
        returns them and the last minibatch's loss."""
        if n < 1:
            raise ValueError("the memory is empty: nothing to train on")
        key = self._jax.random.PRNGKey(seed)
        params, last = self._fit(key, feats, masks, rows, targets, iters, n)
        return params, float(last)

    def predict(self, params: Params, feats: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The network's outputs on every row of ``feats`` (float64)."""
        return np.asarray(self._predict(params, feats, masks), dtype=np.float64)


@lru_cache(maxsize=16)
def trainer(spec: NetSpec, steps: int, batch: int, lr: float = 1e-3) -> Trainer:
    """The :class:`Trainer` of these settings, built once per process: JAX compiles per
    function object, so solvers of the same settings share one compilation."""
    return Trainer(spec, steps=steps, batch=batch, lr=lr)


def params_to_arrays(params: Params, prefix: str) -> dict[str, np.ndarray]:
    """``params`` as named float32 arrays (``{prefix}w0``, ``{prefix}b0``, ...)."""
    out: dict[str, np.ndarray] = {}
    for i, (w, b) in enumerate(params):
        out[f"{prefix}w{i}"] = np.asarray(w, dtype=np.float32)
        out[f"{prefix}b{i}"] = np.asarray(b, dtype=np.float32)
    return out


def params_from_arrays(arrays: dict[str, np.ndarray], prefix: str, spec: NetSpec) -> Params:
    """The weights :func:`params_to_arrays` wrote, checked against ``spec``'s shapes."""
    jax = require_jax()
    sizes = [spec.inputs] + [spec.hidden] * spec.layers + [spec.outputs]
    params: Params = []
    for i, (m, n) in enumerate(zip(sizes[:-1], sizes[1:])):
        w, b = arrays.get(f"{prefix}w{i}"), arrays.get(f"{prefix}b{i}")
        if w is None or b is None or w.shape != (m, n) or b.shape != (n,):
            raise ValueError(f"network {prefix} layer {i} does not have shape {m}x{n}")
        params.append((jax.numpy.asarray(w), jax.numpy.asarray(b)))
    return params
