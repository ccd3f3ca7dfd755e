"""poker._compile.cold: a kernel is cold until compiled, then warm in this and later processes."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from poker._compile import cold

_MODULE = textwrap.dedent(
    """
    from numba import njit

    @njit(cache=True)
    def twice(x):
        return 2 * x
    """
)


def test_cold_until_compiled_then_cached_for_a_new_process(tmp_path: Path) -> None:
    (tmp_path / "kern_mod.py").write_text(_MODULE)
    probe = (
        "import sys; sys.path.insert(0, sys.argv[1]); import kern_mod; "
        "from poker._compile import cold; before = cold(kern_mod.twice); kern_mod.twice(3); "
        "print(before, cold(kern_mod.twice))"
    )
    root = str(Path(__file__).resolve().parents[1])
    env_cmd = [sys.executable, "-c", f"import sys; sys.path.insert(0, {root!r}); " + probe, str(tmp_path)]
    first = subprocess.run(env_cmd, capture_output=True, text=True, check=True).stdout.split()
    assert first == ["True", "False"]  # nothing on disk, then compiled in the process
    second = subprocess.run(env_cmd, capture_output=True, text=True, check=True).stdout.split()
    assert second == ["False", "False"]  # the first process's cache is found
    (tmp_path / "kern_mod.py").write_text(_MODULE + "\n# an edit makes the cache stale\n")
    third = subprocess.run(env_cmd, capture_output=True, text=True, check=True).stdout.split()
    assert third == ["True", "False"]


def test_a_plain_function_is_not_a_cached_kernel() -> None:
    from numba import njit

    @njit  # no cache: compiles in every process
    def f(x: int) -> int:
        return x + 1

    assert cold(f)
    f(1)
    assert not cold(f)
