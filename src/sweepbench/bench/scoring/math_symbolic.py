"""Symbolic equivalence of two answers, bounded in time: math_verify's (the ``corrected``
scoring of MATH-500 and AIME) or one of ELBench's own checks (:data:`SYMBOLIC_CHECKS`).

``math_verify`` bounds its work with ``signal.alarm``, which only works in the main thread. In
the main thread it is used as it is; from any other thread the symbolic check runs in a small
child process that is killed and restarted when a check overruns, so scoring can neither hang
nor crash a worker thread.
"""

from __future__ import annotations

import atexit
import json
import math
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Callable

from sweepbench.bench.scoring.elbench_math import qwen_symbolic
from sweepbench.bench.scoring.elbench_prm import prm_symbolic

SYMBOLIC_TIMEOUT_S = 5
"""Seconds one math_verify parse or comparison may take."""
MAX_SYMBOLIC_CHARS = 400
"""Longer answers are not handed to the symbolic check (they are compared as strings only)."""
_CHILD_START_TIMEOUT_S = 120.0
_REPLY_TAG = "@@sweepbench-math:"


def _verify_here(
    reference: str, prediction: str, timeout: int | None, numeric: bool = False
) -> bool:
    """math_verify in this process; ``timeout`` None disables its signal-based alarm. With
    ``numeric``, two constant expressions that math_verify calls different are still equal
    when their values agree to a relative 1e-4 (Qwen-Math's final numeric evaluation:
    ``0.866`` for ``\\frac{\\sqrt{3}}{2}``)."""
    from math_verify import parse, verify
    from math_verify.errors import TimeoutException
    from math_verify.utils import timeout as time_limit

    gold = parse(f"${reference}$", parsing_timeout=timeout)
    answer = parse(f"${prediction}$", parsing_timeout=timeout)
    if not gold or not answer:
        return False
    if verify(gold, answer, timeout_seconds=timeout):
        return True
    if not numeric:
        return False
    try:
        return bool(time_limit(timeout)(_numerically_close)(gold[0], answer[0]))
    except TimeoutException:  # not an Exception subclass: catch it by name
        return False


NUMERIC_REL_TOL = 1e-4
MAX_NUMERIC_OPS = 40
"""Larger expressions are not evaluated numerically (an exponent tower can take forever)."""


def _numerically_close(gold: object, answer: object) -> bool:
    """Both are constant real expressions whose values agree to :data:`NUMERIC_REL_TOL`."""
    import sympy

    if not (isinstance(gold, sympy.Expr) and isinstance(answer, sympy.Expr)):
        return False
    if gold.free_symbols or answer.free_symbols:
        return False
    if sympy.count_ops(gold) > MAX_NUMERIC_OPS or sympy.count_ops(answer) > MAX_NUMERIC_OPS:
        return False
    try:
        a, b = complex(sympy.N(gold, 15)), complex(sympy.N(answer, 15))
    except (TypeError, ValueError, ArithmeticError):
        return False
    if abs(a.imag) > 1e-12 or abs(b.imag) > 1e-12:
        return False
    return math.isclose(a.real, b.real, rel_tol=NUMERIC_REL_TOL, abs_tol=1e-12)


VERIFY = "verify"
"""The kind of check that is math_verify's; the others are :data:`SYMBOLIC_CHECKS`."""

SYMBOLIC_CHECKS: dict[str, Callable[[str, str], bool]] = {
    "qwen": qwen_symbolic,
    "prm": prm_symbolic,
}
"""The named symbolic checks a time-bounded caller may run."""


def _check_here(kind: str, first: str, second: str, timeout: int | None, numeric: bool) -> bool:
    """One symbolic check in this process: math_verify (:func:`_verify_here`, ``first`` the
    reference) or one of ELBench's (:data:`SYMBOLIC_CHECKS`), bounded by a
    signal-based alarm of ``timeout`` seconds (None: unbounded)."""
    if kind == VERIFY:
        return _verify_here(first, second, timeout, numeric)
    from math_verify.errors import TimeoutException
    from math_verify.utils import timeout as time_limit

    check = SYMBOLIC_CHECKS[kind]
    try:
        bounded = check if timeout is None else time_limit(timeout)(check)
        return bool(bounded(first, second))
    except TimeoutException:  # not an Exception subclass: catch it by name
        return False


def _serve_checks() -> None:
    """Child-process loop: read ``[kind, first, second, timeout, numeric]`` JSON lines from
    stdin, answer each with a tagged 1/0 line on stdout (the signal-based alarms work here:
    this is the child's main thread)."""
    import math_verify  # noqa: F401  (import once, before saying ready)

    print(f"{_REPLY_TAG}ready", flush=True)
    for line in sys.stdin:
        kind, first, second, timeout, numeric = json.loads(line)
        try:
            ok = _check_here(str(kind), first, second, int(timeout), bool(numeric))
        except Exception:
            ok = False
        print(f"{_REPLY_TAG}{1 if ok else 0}", flush=True)


_CHILD_CODE = "from sweepbench.bench.scoring.math_symbolic import _serve_checks as serve; serve()"


class _CheckerProcess:
    """One child Python that runs symbolic checks for non-main threads; restarted after it
    overruns or dies. Checks are serialised by a lock."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[str] | None = None
        self._replies: queue.Queue[str] = queue.Queue()

    def check(
        self, kind: str, first: str, second: str, timeout: int, numeric: bool = False
    ) -> bool | None:
        """The verdict, or None when the child could not give one in time (it is killed)."""
        with self._lock:
            process = self._running()
            if process is None or process.stdin is None:
                return None
            try:
                message = json.dumps([kind, first, second, timeout, numeric])
                process.stdin.write(message + "\n")
                process.stdin.flush()
                reply = self._replies.get(timeout=3 * timeout + 1)
            except (OSError, ValueError, queue.Empty):
                self.stop()
                return None
            return reply == "1"

    def _running(self) -> subprocess.Popen[str] | None:
        """The live child, started (and awaited until ready) when needed; None if it cannot
        be started."""
        if self._process is not None and self._process.poll() is None:
            return self._process
        self.stop()
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        try:
            process = subprocess.Popen(
                [sys.executable, "-c", _CHILD_CODE],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                env=env,
            )
        except OSError:
            return None
        self._process, self._replies = process, queue.Queue()
        threading.Thread(target=_pump, args=(process, self._replies), daemon=True).start()
        try:
            ready = self._replies.get(timeout=_CHILD_START_TIMEOUT_S) == "ready"
        except queue.Empty:
            ready = False
        if not ready:
            self.stop()
            return None
        return process

    def stop(self) -> None:
        """Kill the child, if any."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()


def _pump(process: subprocess.Popen[str], replies: queue.Queue[str]) -> None:
    """Forward the child's tagged stdout lines to ``replies`` until it exits."""
    assert process.stdout is not None
    for line in process.stdout:
        if line.startswith(_REPLY_TAG):
            replies.put(line[len(_REPLY_TAG) :].strip())


_CHECKER = _CheckerProcess()
atexit.register(_CHECKER.stop)


def bounded_check(kind: str, first: str, second: str, *, numeric: bool = False) -> bool:
    """One symbolic check (:func:`_check_here`) bounded by :data:`SYMBOLIC_TIMEOUT_S` in any
    thread: here in the main thread, else in the checker child. A check that times out, fails
    or is too long counts as not equal."""
    if max(len(first), len(second)) > MAX_SYMBOLIC_CHARS:
        return False
    if threading.current_thread() is threading.main_thread():
        try:
            return _check_here(kind, first, second, SYMBOLIC_TIMEOUT_S, numeric)
        except ValueError:  # signals unavailable even here (e.g. a sub-interpreter)
            pass
        except Exception:
            return False
    return bool(_CHECKER.check(kind, first, second, SYMBOLIC_TIMEOUT_S, numeric))


def symbolic_equal(reference: str, prediction: str, *, numeric: bool = False) -> bool:
    """math_verify equivalence of two LaTeX answers (``numeric``: or values equal to a
    relative 1e-4), by :func:`bounded_check`."""
    if not reference or not prediction:
        return False
    return bounded_check(VERIFY, reference, prediction, numeric=numeric)


def elbench_symbolic(kind: str, first: str, second: str) -> bool:
    """One of ELBench's symbolic checks (``qwen``: Qwen2.5-Math's, ``prm``: PRM800K's), by
    :func:`bounded_check`."""
    return bounded_check(kind, first, second)
