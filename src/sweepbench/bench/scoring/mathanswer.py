"""MATH-500 and AIME answer scoring (spec §13, rows math_500 and aime24/25/26).

The final answer is extracted (Minerva phrase, last ``\\boxed{}``, an "answer is" phrase, or the
last number), normalised in the Qwen-Math style, and compared with the reference: string
equality, then numbers, then element-wise for tuples and matrices, then symbolic equivalence
with ``math_verify``.

That is the ``corrected`` scoring version (:mod:`.versions`). Under ``replicated``, answers are
read by ELBench's own rules instead, which :mod:`.elbench_math` restates step by step (Qwen2.5-Math
for MATH-500, PRM800K's grader for AIME), misreadings included.

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
import re
import subprocess
import sys
import threading
from collections.abc import Callable

from sweepbench.bench.items import Item, Task
from sweepbench.bench.scoring import elbench_math
from sweepbench.bench.scoring.base import Score
from sweepbench.bench.scoring.registry import scorer
from sweepbench.bench.scoring.versions import active_rules

SYMBOLIC_TIMEOUT_S = 5
"""Seconds one math_verify parse or comparison may take."""
MAX_SYMBOLIC_CHARS = 400
"""Longer answers are not handed to the symbolic check (they are compared as strings only)."""
_CHILD_START_TIMEOUT_S = 120.0
_REPLY_TAG = "@@sweepbench-math:"

# --- extraction -----------------------------------------------------------------------------

_MINERVA = re.compile(r"final answer is \$(.+?)\$\.?\s*I hope", re.IGNORECASE | re.DOTALL)
_BOX_START = re.compile(r"\\(?:boxed|fbox)(?![A-Za-z])")
_ANSWER_MARKER = re.compile(r"he answer is|final answer is|答案是|answer\s*:", re.IGNORECASE)
_THOUSANDS_COMMA = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_PLAIN_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:/\d+)?|-?\.\d+")
_WRAPPERS = (("$", "$"), ("\\(", "\\)"), ("\\[", "\\]"), ("**", "**"))


def _balanced_group(text: str, open_at: int) -> str | None:
    """The content of the brace group opening at ``text[open_at]``, or None if unclosed."""
    depth = 0
    for index in range(open_at, len(text)):
        char = text[index]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return text[open_at + 1 : index]
    return None


def _boxed_content(text: str, after: int) -> str | None:
    """What follows a ``\\boxed`` ending at ``after``: a balanced ``{…}`` group, or the token
    of ``\\boxed 5``; None when neither is there."""
    rest = text[after:]
    stripped = rest.lstrip(" ")
    if stripped.startswith("{"):
        return _balanced_group(text, after + len(rest) - len(stripped))
    if rest.startswith(" ") and stripped:
        return re.split(r"[\s$]", stripped, maxsplit=1)[0]
    return None


def last_boxed(text: str) -> str | None:
    """The content of the last well-formed ``\\boxed{…}`` (or ``\\fbox{…}``) in ``text``."""
    for match in reversed(list(_BOX_START.finditer(text))):
        content = _boxed_content(text, match.end())
        if content is not None:
            return content
    return None


_EMPHASIS = re.compile(r"\*\*(.+?)\*\*|^\s*[*_]([^*_].*?)[*_](?=\s*[.。!]?\s*$)")
"""Markdown bold anywhere in the line, or italics around the whole line (a ``*`` inside an
expression such as ``2*3`` is multiplication and stays)."""


def _after_marker(text: str) -> str | None:
    """The first non-empty line after the last "answer is"/"答案是"/"ANSWER:" phrase (any
    case)."""
    markers = list(_ANSWER_MARKER.finditer(text))
    if not markers:
        return None
    rest = text[markers[-1].end() :].lstrip(" :：\t")
    first = rest.split("\n", 1)[0]
    if first.startswith("**") and first.count("**") % 2 == 1:  # "**Answer:** 42": its close
        rest = rest[2:].lstrip(" :：\t")
    for line in rest.splitlines():
        if line.strip():
            return _EMPHASIS.sub(lambda m: m.group(1) or m.group(2), line)  # "**42**." → "42."
    return None


def _last_number(text: str) -> str | None:
    """The last plain number in ``text`` (thousands commas removed)."""
    numbers = _PLAIN_NUMBER.findall(_THOUSANDS_COMMA.sub("", text))
    return numbers[-1] if numbers else None


def _clean_extracted(answer: str) -> str:
    """An extracted answer without surrounding ``$``, ``\\(…\\)``, ``**`` or a final full stop."""
    stops = (".", "/", "。")
    answer = answer.strip()
    changed = True
    while changed and answer:
        changed = False
        for start, end in _WRAPPERS:
            wrapped = answer.startswith(start) and answer.endswith(end)
            if wrapped and len(answer) > len(start) + len(end):
                answer = answer[len(start) : -len(end)].strip()
                changed = True
        if answer.endswith(stops) and not answer.endswith("\\."):
            answer = answer[:-1].rstrip()
            changed = True
    return answer


def extract_math_answer(text: str) -> str | None:
    """The final answer of a solution: a Minerva "final answer is $…$. I hope"; else the last
    brace-balanced ``\\boxed{…}``; else the text after "he answer is", "final answer is",
    "答案是" or "ANSWER:"; else the last number. None when there is nothing. Under ELBench's
    rules, :func:`.elbench_math.extract_answer`."""
    if not text or not text.strip():
        return None
    if active_rules().elbench_math:
        return elbench_math.extract_answer(text) or None
    minerva = list(_MINERVA.finditer(text))
    if minerva:
        found: str | None = minerva[-1].group(1)
    else:
        found = last_boxed(text)
        if found is None:
            found = _after_marker(text)
            boxed = last_boxed(found) if found else None
            found = boxed if boxed is not None else found
        if found is None:
            found = _last_number(text)
    cleaned = _clean_extracted(found) if found is not None else ""
    return cleaned or None


def aime_reference(target: str) -> str:
    """An AIME reference: the content of its ``\\boxed{}`` if present, else the stripped
    target (no last-number fallback)."""
    boxed = last_boxed(target)
    return (boxed if boxed is not None else target).strip()


# --- normalisation --------------------------------------------------------------------------

_DROP = re.compile(
    r"\\(?:left|right|displaystyle|q?quad)(?![A-Za-z])|\\[!,;:]|\^\s*\{\s*\\circ\s*\}"
    r"|\^\s*\\circ|°|\\degree|\\?%|\\?\$"
)
_FRAC_VARIANT = re.compile(r"\\[dt]frac(?![A-Za-z])")
_TRAILING_UNIT = re.compile(
    r"(?<=[\d}])\s*\\(?:text|mbox|mathrm)\{\s*[A-Za-z][A-Za-z\s.]*\}(?:\^\{?\d\}?)?\s*$"
)
_TEXT_WRAPPER = re.compile(r"\\(?:text|textbf|textit|textrm|mathrm|mbox|mathbf)\{([^{}]*)\}")
_NUMBER_THEN_WORDS = re.compile(r"([-+]?[\d.,]*\d)\s+(?:[A-Za-z]{2,}\.?\s*)+")
_ASSIGNMENT = re.compile(r"(?:[A-Za-z]|\\[A-Za-z]+)(?:_\{?\w+\}?)?\s*=\s*([^=]+)")
_COMMAND_SPACE = re.compile(r"(\\[A-Za-z]+)\s+(?=[A-Za-z])")
_SPACES = re.compile(r"\s+")
_SQRT_SHORT = re.compile(r"\\sqrt(\w)")
_FRAC_TWO_SHORT = re.compile(r"\\frac(\w)(\w)")
_FRAC_FIRST_SHORT = re.compile(r"\\frac(\w)(?=\{)")
_FRAC_SECOND_SHORT = re.compile(r"(\\frac\{[^{}]*\})(\w)")
_A_SLASH_B = re.compile(r"(-?)(\d+)/(\d+)")
_BARE_DECIMAL = re.compile(r"(?<![\d}])\.(?=\d)")
_THOUSANDS = re.compile(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_INT_LIST = re.compile(r"-?\d+(?:,-?\d+)+")
_CHOICE = re.compile(r"\(?([A-Z])\)?")
_UNITS = {
    word: value
    for value, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen".split()
    )
}
_TENS = {
    word: 10 * (index + 2)
    for index, word in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())
}
_SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000}


def _number_word_value(text: str) -> int | None:
    """The integer an English number phrase names ("forty-two", "one hundred and five",
    "two thousand"), or None when ``text`` is not only such words."""
    words = [w for w in re.split(r"[\s-]+", text.strip().lower()) if w and w != "and"]
    if not words:
        return None
    total, current = 0, 0
    for word in words:
        if word in _UNITS or word in _TENS:
            current += _UNITS.get(word, 0) + _TENS.get(word, 0)
        elif word == "hundred":
            current = max(current, 1) * 100
        elif word in _SCALES:
            total += max(current, 1) * _SCALES[word]
            current = 0
        else:
            return None
    return total + current


def _number_words(text: str) -> str:
    """``text`` as digits when it is only a number phrase, else ``text``."""
    value = _number_word_value(text)
    return text if value is None else str(value)


def _unwrap_braces(text: str) -> str:
    """``{x}`` → ``x`` while the whole string is one balanced brace group."""
    while text.startswith("{") and _balanced_group(text, 0) == text[1:-1]:
        text = text[1:-1]
    return text


def _drop_unit_words(text: str) -> str:
    """``10\\text{ inches}`` → ``10``, ``5 cm`` → ``5``; other text is kept."""
    text = _TRAILING_UNIT.sub("", text)
    words = _NUMBER_THEN_WORDS.fullmatch(text.strip())
    return words.group(1) if words else text


def _fix_fractions(text: str) -> str:
    """``\\frac12``, ``\\frac1{2}``, ``\\frac{1}2``, ``\\sqrt2`` and ``1/2`` in braces form."""
    text = _SQRT_SHORT.sub(r"\\sqrt{\1}", text)
    text = _FRAC_TWO_SHORT.sub(r"\\frac{\1}{\2}", text)
    text = _FRAC_FIRST_SHORT.sub(r"\\frac{\1}", text)
    text = _FRAC_SECOND_SHORT.sub(r"\1{\2}", text)
    slash = _A_SLASH_B.fullmatch(text)
    if slash:
        text = f"{slash.group(1)}\\frac{{{slash.group(2)}}}{{{slash.group(3)}}}"
    return text


def _remove_spaces(text: str) -> str:
    """All whitespace removed, except one space that ends a LaTeX command before a letter
    (``\\pi r`` must not become ``\\pir``)."""
    text = _COMMAND_SPACE.sub("\\1\x00", text)
    return _SPACES.sub("", text).replace("\x00", " ")


def normalise_math_answer(answer: str) -> str:
    """A canonical string for comparison: LaTeX spacing, ``\\left``/``\\right``, degrees,
    percent and dollar signs, units and ``\\text{}`` removed; ``\\dfrac`` → ``\\frac``; a
    leading ``x=`` dropped; number words → digits; thousands separators removed; short
    fractions and roots braced; ``(B)`` → ``B``; integer lists sorted."""
    text = answer.strip().replace("\n", " ").replace("{,}", ",")
    text = _FRAC_VARIANT.sub(r"\\frac", _DROP.sub("", text))
    text = _TEXT_WRAPPER.sub(r"\1", _drop_unit_words(text)).strip()
    text = _number_words(text)
    assignment = _ASSIGNMENT.fullmatch(text)
    if assignment:
        text = assignment.group(1)
    text = _unwrap_braces(_remove_spaces(text)).rstrip(".")
    text = _BARE_DECIMAL.sub("0.", _fix_fractions(text))
    if _THOUSANDS.fullmatch(text):
        text = text.replace(",", "")
    if _INT_LIST.fullmatch(text):
        text = ",".join(str(n) for n in sorted(int(part) for part in text.split(",")))
    choice = _CHOICE.fullmatch(text)
    return choice.group(1) if choice else text


# --- numbers and structure ------------------------------------------------------------------

_FRAC_NUMBER = re.compile(r"(-?)\\frac\{(-?\d+(?:\.\d+)?)\}\{(-?\d+(?:\.\d+)?)\}")
_INTEGER = re.compile(r"[-+]?\d+")


def _to_float(text: str) -> float | None:
    """The value of a normalised plain number or ``\\frac{a}{b}``; None for anything else."""
    try:
        value = float(text)
    except ValueError:
        frac = _FRAC_NUMBER.fullmatch(text)
        if not frac or float(frac.group(3)) == 0:
            return None
        value = float(frac.group(2)) / float(frac.group(3))
        return -value if frac.group(1) else value
    return value if math.isfinite(value) else None


def _numbers_equal(prediction: float, reference: float) -> bool:
    """Equal within a relative 1e-4, also against the reference x100 and /100 (Qwen-Math's
    percentage leniency, kept for comparability)."""
    return any(
        math.isclose(prediction, target, rel_tol=1e-4, abs_tol=1e-12)
        for target in (reference, reference * 100, reference / 100)
    )


def _split_top_level(text: str, separator: str = ",") -> list[str]:
    """``text`` split at separators that are not inside brackets or braces."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(text):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == separator and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return parts


def _bracketed(text: str) -> tuple[str, list[str]] | None:
    """(outer brackets, top-level parts) for ``(a,b)``/``[a,b)``-style text, else None."""
    if len(text) < 2 or text[0] not in "([" or text[-1] not in ")]":
        return None
    inner = text[1:-1]
    depth = 0
    for char in inner:  # "(a)+(b)" is not one bracketed tuple
        depth += 1 if char in "([{" else -1 if char in ")]}" else 0
        if depth < 0:
            return None
    return text[0] + text[-1], _split_top_level(inner)


_MATRIX = re.compile(r"\\begin\{[pbv]?matrix\}(.*)\\end\{[pbv]?matrix\}", re.DOTALL)


def _matrix_cells(text: str) -> list[list[str]] | None:
    """The cells of a ``pmatrix``/``bmatrix``, row by row, or None."""
    found = _MATRIX.fullmatch(text)
    if not found:
        return None
    rows = [row for row in found.group(1).split("\\\\") if row.strip()]
    return [row.split("&") for row in rows]


Equal = Callable[[str, str], bool]


def _all_pairs_equal(predicted: list[str], expected: list[str], equal: Equal) -> bool:
    """Same length and every pair equal, in order."""
    return len(predicted) == len(expected) and all(
        equal(p, r) for p, r in zip(predicted, expected, strict=True)
    )


def _unordered_equal(predicted: list[str], expected: list[str], equal: Equal) -> bool:
    """Same length and each predicted element equals a distinct expected one."""
    if len(predicted) != len(expected):
        return False
    remaining = list(expected)
    for item in predicted:
        hit = next((i for i, ref in enumerate(remaining) if equal(item, ref)), None)
        if hit is None:
            return False
        remaining.pop(hit)
    return True


def _structure_equal(prediction: str, reference: str, equal: Equal) -> bool | None:
    """Element-wise comparison of matrices, bracketed tuples/intervals and bare lists; None
    when neither side has such a structure."""
    pred_cells, ref_cells = _matrix_cells(prediction), _matrix_cells(reference)
    if pred_cells is not None and ref_cells is not None:
        return len(pred_cells) == len(ref_cells) and all(
            _all_pairs_equal(p, r, equal) for p, r in zip(pred_cells, ref_cells, strict=True)
        )
    pred_tuple, ref_tuple = _bracketed(prediction), _bracketed(reference)
    if pred_tuple and ref_tuple and (len(pred_tuple[1]) > 1 or len(ref_tuple[1]) > 1):
        return pred_tuple[0] == ref_tuple[0] and _all_pairs_equal(
            pred_tuple[1], ref_tuple[1], equal
        )
    pred_list, ref_list = _split_top_level(prediction), _split_top_level(reference)
    if len(ref_list) > 1 and not ref_tuple and not pred_tuple:
        return _unordered_equal(pred_list, ref_list, equal)
    return None


# --- symbolic check (math_verify), bounded in time ------------------------------------------


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
"""The kind of check that is math_verify's; the others are :data:`.elbench_math.SYMBOLIC_CHECKS`."""


def _check_here(kind: str, first: str, second: str, timeout: int | None, numeric: bool) -> bool:
    """One symbolic check in this process: math_verify (:func:`_verify_here`, ``first`` the
    reference) or one of ELBench's (:data:`.elbench_math.SYMBOLIC_CHECKS`), bounded by a
    signal-based alarm of ``timeout`` seconds (None: unbounded)."""
    if kind == VERIFY:
        return _verify_here(first, second, timeout, numeric)
    from math_verify.errors import TimeoutException
    from math_verify.utils import timeout as time_limit

    check = elbench_math.SYMBOLIC_CHECKS[kind]
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


_CHILD_CODE = "from sweepbench.bench.scoring.mathanswer import _serve_checks as serve; serve()"


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


# --- MATH-500 -------------------------------------------------------------------------------


def math_equal(prediction: str, reference: str) -> bool:
    """Whether two answers are the same: normalised strings; numbers (relative 1e-4, also
    reference x100 and /100); element-wise structures; equations; else symbolic."""
    pred, ref = normalise_math_answer(prediction), normalise_math_answer(reference)
    if pred == ref or pred.casefold() == ref.casefold():
        return True
    pred_value, ref_value = _to_float(pred), _to_float(ref)
    if pred_value is not None and ref_value is not None:
        return _numbers_equal(pred_value, ref_value)
    structured = _structure_equal(pred, ref, math_equal)
    if structured is not None:
        return structured or symbolic_equal(ref, pred, numeric=True)
    return symbolic_equal(ref, pred, numeric=True)


def _math_score(extracted: str | None, reference: str, equal: Equal) -> Score:
    """The Score of one extracted answer under ``equal``."""
    metadata = {"extracted": extracted, "reference": reference}
    if extracted is None:
        return Score(0.0, "fail", False, "No final answer could be extracted.", metadata, False)
    ok = equal(extracted, reference)
    reason = (
        "The final answer matches the reference."
        if ok
        else "The final answer does not match the reference."
    )
    return Score.binary(ok, reason, **metadata)


def _replicated_math_equal(prediction: str, reference: str) -> bool:
    """ELBench's MATH-500 equality (:func:`.elbench_math.qwen_equal`)."""
    return elbench_math.qwen_equal(prediction, reference, elbench_symbolic)


def score_math(response: str, reference: str) -> Score:
    """1/pass when the response's final answer equals the MATH reference (:func:`math_equal`;
    under ELBench's rules, its reading of both)."""
    if active_rules().elbench_math:
        expected = elbench_math.strip_answer(reference)
        extracted = elbench_math.extract_answer(response or "") or None
        return _math_score(extracted, expected, _replicated_math_equal)
    return _math_score(extract_math_answer(response), reference.strip(), math_equal)


# --- AIME (PRM800K-style grading) -----------------------------------------------------------


def _is_fraction(text: str) -> bool:
    """Whether a normalised answer is written as a fraction of integers."""
    return bool(re.fullmatch(r"-?\\frac\{-?\d+\}\{\d+\}", text))


def _as_integer(text: str) -> int | None:
    """The integer a normalised answer writes (``033`` → 33, ``33.0`` → 33), else None."""
    if _INTEGER.fullmatch(text):
        return int(text)
    value = _to_float(text)
    if value is not None and not _is_fraction(text) and value == int(value):
        return int(value)
    return None


def _aime_element_equal(prediction: str, reference: str) -> bool:
    """One element: fractions must be written identically (unreduced ones never match);
    if either side is an integer both must be the same integer; else symbolic."""
    pred, ref = normalise_math_answer(prediction), normalise_math_answer(reference)
    if pred == ref:
        return True
    if _is_fraction(pred) and _is_fraction(ref):
        return False
    pred_int, ref_int = _as_integer(pred), _as_integer(ref)
    if pred_int is not None or ref_int is not None:
        return pred_int == ref_int
    return symbolic_equal(ref, pred)


def aime_equal(prediction: str, reference: str) -> bool:
    """PRM800K-style equality: normalised strings (also case-folded); else tuple-wise with
    integer strictness
    (same brackets, same length, every element equal by :func:`_aime_element_equal`)."""
    pred, ref = normalise_math_answer(prediction), normalise_math_answer(reference)
    if pred == ref or pred.casefold() == ref.casefold():
        return True
    pred_tuple, ref_tuple = _bracketed(pred), _bracketed(ref)
    if pred_tuple and ref_tuple:
        return pred_tuple[0] == ref_tuple[0] and _all_pairs_equal(
            pred_tuple[1], ref_tuple[1], _aime_element_equal
        )
    pred_parts, ref_parts = _split_top_level(pred), _split_top_level(ref)
    return _all_pairs_equal(pred_parts, ref_parts, _aime_element_equal)


def _replicated_aime_equal(prediction: str, reference: str) -> bool:
    """ELBench's AIME equality (PRM800K's grader, :func:`.elbench_math.prm_equal`)."""
    return elbench_math.prm_equal(prediction, reference, elbench_symbolic)


def _replicated_aime_reference(target: str) -> str:
    """ELBench's AIME key: the target read with no last-number fallback, else cleaned."""
    read = elbench_math.extract_answer(target, use_last_number=False)
    return read or elbench_math.strip_answer(target)


def score_aime(response: str, reference: str) -> Score:
    """1/pass when the response's final answer equals the AIME reference (the target's
    ``\\boxed{}`` content, see :func:`aime_reference`) by :func:`aime_equal`; under ELBench's
    rules, by PRM800K's grader on ELBench's reading of both."""
    if active_rules().elbench_math:
        expected = _replicated_aime_reference(reference)
        extracted = elbench_math.extract_answer(response or "") or None
        return _math_score(extracted, expected, _replicated_aime_equal)
    return _math_score(extract_math_answer(response), aime_reference(reference), aime_equal)


# --- the registered scorers ------------------------------------------------------------------


@scorer("math", retry_when_cut=True, needs_reference=True)
def math_task(task: Task, item: Item, response: str) -> Score:
    """A MATH-500 answer, by :func:`score_math`."""
    return score_math(response, str(item.reference))


@scorer("aime", retry_when_cut=True, needs_reference=True)
def aime_task(task: Task, item: Item, response: str) -> Score:
    """An AIME answer, by :func:`score_aime`."""
    return score_aime(response, str(item.reference))
