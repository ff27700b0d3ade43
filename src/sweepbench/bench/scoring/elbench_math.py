"""MATH-500 and AIME read as ELBench reads them (the ``replicated`` scoring version).

ELBench grades MATH-500 with the Qwen2.5-Math rules and AIME with OpenAI's PRM800K grader.
This module is sweepbench's own re-statement of what those rules do, step for step, so that a
``replicated`` score is the score ELBench gives, its misreadings included (each is listed in
docs/benchmarks.md, "Known misreadings"). Among them:

- extraction: the text after the last ``boxed`` (``\\fbox`` is not read; ``\\boxed {`` with a
  space takes everything up to the next ``$``), else after a case-exact marker (all lines
  joined; ``答案是`` takes its *first* occurrence), else the last number;
- number words: the whole answer goes through a ``word2number``-style reading, which picks the
  number words out of any text (``\\text{two hundred four}`` is 100: ``\\text{two`` is not a
  word), while a single word in ``\\text{}`` (``\\text{five}``) is converted;
- the letters ``and`` are deleted everywhere, ``-2,1`` is read as -21 by the numeric check, and
  brackets are ignored when only one side is bracketed;
- symbolic equality parses with sympy's ``parse_expr`` then ``latex2sympy`` (sympy's own LaTeX
  parser is never available next to ``latex2sympy2_extended``), so prose such as ``0 This is``
  parses as the product ``0·T·h·i·s`` and equals 0;
- AIME (PRM800K): unit words (``meters``, ``degrees``, ``hours``…) are deleted wherever they
  occur, integers must match exactly.

PRM800K's grader is :mod:`.elbench_prm`. Symbolic checks run under the caller's time bound
(:func:`.math_symbolic.bounded_check`). Python expressions are only handed to sympy's
``parse_expr`` when they hold nothing but arithmetic, names and brackets, and no call of anything
but a known maths function, so an answer can never run code here (a rare answer outside that set
is read by ``latex2sympy`` alone).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

# --- word2number's reading of number words --------------------------------------------------

_NUMBER_WORDS: dict[str, int] = {
    word: value
    for value, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen".split()
    )
}
_NUMBER_WORDS.update(
    {
        word: 10 * (i + 2)
        for i, word in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())
    }
)
_NUMBER_WORDS.update({"hundred": 100, "thousand": 1_000, "million": 10**6, "billion": 10**9})
_DECIMAL_DIGITS = tuple(list(_NUMBER_WORDS)[:10])
_SCALE_WORDS = ("billion", "million", "thousand")


def _group_value(words: list[str]) -> int:
    """word2number's value of a group of at most four words: ``a*b + c + d``, ``a*b + c``,
    ``a*b`` (with a hundred) or ``a + b``, or the one word; IndexError when empty."""
    values = [_NUMBER_WORDS[w] for w in words]
    if len(values) == 4:
        return values[0] * values[1] + values[2] + values[3]
    if len(values) == 3:
        return values[0] * values[1] + values[2]
    if len(values) == 2:
        return values[0] * values[1] if 100 in values else values[0] + values[1]
    return values[0]


def _decimal_part(words: list[str]) -> float:
    """The digits after "point" as a fraction (0 when one is not a digit word)."""
    if any(w not in _DECIMAL_DIGITS for w in words):
        return 0.0
    return float("0." + "".join(str(_NUMBER_WORDS[w]) for w in words))


def word_number(text: str) -> int | float:
    """The number ``text`` names as the ``word2number`` package reads it: hyphens are spaces,
    every word that is not a number word is ignored (so "I have two cats" is 2), digit strings
    are read as integers. ValueError (or IndexError) when it names none."""
    sentence = text.replace("-", " ").lower()
    if sentence.isdigit():
        return int(sentence)
    words = [w for w in sentence.split() if w in _NUMBER_WORDS or w == "point"]
    if not words:
        raise ValueError("no number word")
    if any(words.count(w) > 1 for w in ("thousand", "million", "billion", "point")):
        raise ValueError("a scale word twice")
    decimals: list[str] = []
    if "point" in words:
        at = words.index("point")
        words, decimals = words[:at], words[at + 1 :]
    total = _integer_words(words) if words else 0
    return total + _decimal_part(decimals) if decimals else total


def _integer_words(words: list[str]) -> int:
    """The integer part of :func:`word_number` (scales in billion, million, thousand order)."""
    at = {scale: words.index(scale) if scale in words else -1 for scale in _SCALE_WORDS}
    billion, million, thousand = at["billion"], at["million"], at["thousand"]
    if (thousand > -1 and (thousand < million or thousand < billion)) or (-1 < million < billion):
        raise ValueError("scales out of order")
    if len(words) == 1:
        return _NUMBER_WORDS[words[0]]
    total = 0
    if billion > -1:
        total += _group_value(words[:billion]) * 10**9
    if million > -1:
        total += _group_value(words[billion + 1 if billion > -1 else 0 : million]) * 10**6
    if thousand > -1:
        start = million + 1 if million > -1 else billion + 1 if billion > -1 else 0
        total += _group_value(words[start:thousand]) * 1_000
    last = max(billion, million, thousand)
    if last == -1:
        total += _group_value(words)
    elif last != len(words) - 1:
        total += _group_value(words[last + 1 :])
    return total


def words_to_digits(text: str) -> str:
    """``text`` replaced by the number :func:`word_number` reads in it, else unchanged."""
    try:
        return str(word_number(text))
    except (ValueError, IndexError, TypeError):
        return text


# --- Qwen2.5-Math's answer string -----------------------------------------------------------

_ARRAY_BEGIN = re.compile(r"\\begin\{array\}\{.*?\}")
_ONE_TEXT_WORD = re.compile(r"\\text\{([a-zA-Z]+)\}")
_SQUARED_UNIT = re.compile(r"(cm|inches)\}\^2")
_TEXT_AT_END = re.compile(r"\\text{.*?}$")
_TEXT_GROUP = re.compile(r"\\text\{(.*?)\}")
_MBOX = re.compile(r"\\mbox{.*?}")
_TRAILING_ZEROS = re.compile(r"(\d+)\.0*([^\d])")
_TRAILING_ZEROS_END = re.compile(r"(\d+)\.0*$")
_SHORT_SQRT = re.compile(r"\\sqrt(\w+)")
_BACKSLASH_NUMBER = re.compile(r"\\(?=\-?\d+(\\|\)|,|\]|$))")
_THOUSANDS = re.compile(r"\s*-?\d{1,3}(?:,\d{3})+(?:\.\d+)?\s*")
_INTEGER_LIST = re.compile(r"(\s*-?\d+\s*,)*\s*-?\d+\s*")
_VARIABLE_PREFIXES = ("x=", "y=", "z=", "x\\in", "y\\in", "z\\in", "x\\to", "y\\to", "z\\to")


def _one_text_word(match: re.Match[str]) -> str:
    """A ``\\text{word}`` that is a number word, as digits; any other one as it is."""
    word = match.group(1).lower()
    digits = words_to_digits(word)
    return match.group(0) if digits == word else digits


def braced_fractions(text: str, *, checked: bool = True) -> str:
    """``\\frac12`` → ``\\frac{1}{2}``, ``\\frac1{2}`` → ``\\frac{1}{2}``; the text unchanged
    when a ``\\frac`` is followed by fewer than two characters (``checked``: Qwen's version,
    which also tolerates a ``\\frac`` at the very end being empty; else IndexError there)."""
    head, *rest = text.split("\\frac")
    out = head
    for part in rest:
        out += "\\frac"
        if (len(part) > 0 or not checked) and part[0] == "{":
            out += part
        elif len(part) < 2:
            return text
        elif part[1] != "{":
            out += "{" + part[0] + "}{" + part[1] + "}" + part[2:]
        else:
            out += "{" + part[0] + "}" + part[1] + part[2:]
    return out


def slash_fraction(text: str, *, roots: bool) -> str:
    """``a/b`` of two integers (``roots``: or of ``\\sqrt`` terms) as ``\\frac{a}{b}``."""
    parts = text.split("/")
    if len(parts) != 2:
        return text
    try:
        a: object = parts[0] if roots and "sqrt" in parts[0] else int(parts[0])
        b: object = parts[1] if roots and "sqrt" in parts[1] else int(parts[1])
    except ValueError:
        return text
    if text != f"{a}/{b}":
        return text
    return "\\frac{" + str(a) + "}{" + str(b) + "}"


def strip_answer(answer: str) -> str:
    """Qwen2.5-Math's canonical answer string (``strip_answer_string``), step by step."""
    text = str(answer).strip().replace("\n", "").rstrip(".").replace("\\!", "")
    text = _ARRAY_BEGIN.sub(r"\\begin{pmatrix}", text).replace("\\end{array}", "\\end{pmatrix}")
    text = text.replace("bmatrix", "pmatrix").replace("tfrac", "frac").replace("dfrac", "frac")
    text = text.replace("\\neq", "\\ne").replace("\\leq", "\\le").replace("\\geq", "\\ge")
    text = text.replace("\\left", "").replace("\\right", "")
    text = text.replace("\\{", "{").replace("\\}", "}")
    text = _ONE_TEXT_WORD.sub(_one_text_word, text)
    text = _SQUARED_UNIT.sub(r"\1}", text)
    without_unit = _TEXT_AT_END.sub("", text).strip()
    if without_unit and without_unit != text:
        text = without_unit
    text = text.replace("^{\\circ}", "").replace("^\\circ", "")
    text = text.replace("\\$", "").replace("$", "").replace("\\(", "").replace("\\)", "")
    text = _TEXT_GROUP.sub(r"\1", words_to_digits(text))
    for prefix in _VARIABLE_PREFIXES:
        text = text.replace(prefix, "")
    text = text.replace("\\emptyset", "{}").replace("(-\\infty,\\infty)", "\\mathbb{R}")
    text = text.replace("\\%", "").replace("%", "")
    text = text.replace(" .", " 0.").replace("{.", "{0.")
    text = text.replace("infinity", "\\infty")
    if "\\infty" not in text:
        text = text.replace("inf", "\\infty")
    text = text.replace("+\\inity", "\\infty").replace("and", "").replace("\\mathbf", "")
    text = _MBOX.sub("", text)
    if "j" in text and "i" not in text:
        text = text.replace("j", "i")
    text = _TRAILING_ZEROS_END.sub(r"\1", _TRAILING_ZEROS.sub(r"\1\2", text))
    if not text:
        return text
    if text[0] == ".":
        text = "0" + text
    sides = text.split("=")
    if len(sides) == 2 and len(sides[0]) <= 2:
        text = sides[1]
    text = _SHORT_SQRT.sub(r"\\sqrt{\1}", text).replace(" ", "")
    text = slash_fraction(braced_fractions(text), roots=True)
    text = _BACKSLASH_NUMBER.sub("", text)
    text = text.removesuffix("thgrade") if text.endswith("thgrade") else text
    if _THOUSANDS.fullmatch(text):
        text = text.replace(",", "")
    if _INTEGER_LIST.fullmatch(text):
        text = ",".join(str(n) for n in sorted(int(p) for p in text.split(",")))
    return text


# --- extraction -----------------------------------------------------------------------------

_LAST_NUMBER = re.compile(r"-?\d*\.?\d+")
_LINE_BREAKS = re.compile(r"\n\s*")


def _after_boxed(text: str) -> str:
    """What follows the last ``boxed``: a brace group's content (unclosed: all of it), or
    everything up to the next ``$`` when no brace comes first."""
    rest = text.split("boxed")[-1]
    if not rest:
        return ""
    if rest[0] != "{":
        return rest.split("$")[0].strip()
    depth, out = 1, []
    for char in rest[1:]:
        depth += 1 if char == "{" else -1 if char == "}" else 0
        if depth == 0:
            break
        out.append(char)
    return "".join(out)


def _raw_answer(text: str, use_last_number: bool) -> str:
    """The answer text before cleaning, by ELBench's order of rules."""
    if "final answer is $" in text and "$. I hope" in text:
        return text.split("final answer is $", 1)[1].split("$. I hope", 1)[0].strip()
    if "boxed" in text:
        return _after_boxed(text)
    for marker in ("he answer is", "final answer is"):
        if marker in text:
            return text.split(marker)[-1].strip()
    if "答案是" in text:
        return text.split("答案是")[1].strip().split("\n\n")[0].strip()
    if "ANSWER:" in text:
        return text.split("ANSWER:")[-1].strip()
    numbers = _LAST_NUMBER.findall(text.replace(",", "")) if use_last_number else []
    return numbers[-1] if numbers else ""


def extract_answer(text: str, *, use_last_number: bool = True) -> str:
    """ELBench's extracted answer of a solution, already cleaned by :func:`strip_answer`
    ("" when nothing is found). A ``boxed`` with nothing after it gives "" uncleaned."""
    text = text.replace("\u043a\u0438", "")
    if "boxed" in text and not text.split("boxed")[-1] and "final answer is $" not in text:
        return ""
    answer = _LINE_BREAKS.sub("", _raw_answer(text, use_last_number))
    if answer.startswith(":"):
        answer = answer[1:]
    if answer.endswith("."):
        answer = answer[:-1]
    if answer.endswith("/"):
        answer = answer[:-1]
    return strip_answer(answer)


# --- Qwen2.5-Math's equality (MATH-500) -----------------------------------------------------

SymbolicCall = Callable[[str, str, str], bool]
"""Runs one named symbolic check (``"qwen"`` or ``"prm"``) on two strings, time-bounded."""

_CHOICE_LETTER = re.compile(r"\b(A|B|C|D|E)\b")
_BRACKETED_START = re.compile(r"(\(|\[).+(\)|\])")
_MATRIX_PAIR = re.compile(r"\{.*,.*\}")
_PMATRIX = ("\\begin{pmatrix}", "\\begin{bmatrix}")
_PMATRIX_END = ("\\end{pmatrix}", "\\end{bmatrix}")


def _choice_clean(prediction: str) -> str:
    """The last standalone A–E of a prediction, else the prediction itself, trimmed."""
    text = prediction.strip("\n").rstrip(".").rstrip("/").strip(" ").lstrip(":")
    letters = _CHOICE_LETTER.findall(text.upper())
    last = letters[-1] if letters else text.strip().strip(".")
    return last.rstrip(".").rstrip("/")


def _digits_value(text: str) -> float | None:
    """A number with every comma removed (``-2,1`` is -21), or ``50%`` as 0.5; else None."""
    text = str(text).replace(",", "")
    try:
        return float(text)
    except ValueError:
        if text.endswith("%"):
            try:
                return float(text[:-1].removesuffix("\\")) / 100
            except ValueError:
                return None
    return None


def _close(prediction: float, reference: float) -> bool:
    """Relative 1e-4, as ``math.isclose`` (NaN never equal, infinities only themselves)."""
    return math.isclose(reference, prediction, rel_tol=1e-4)


def _as_pmatrix(reference: str) -> str:
    """Qwen's ``{a,b}`` → ``\\begin{pmatrix}a\\b\\end{pmatrix}`` (commas become a backslash)."""
    found = _MATRIX_PAIR.findall(reference.strip())
    return ", ".join(
        "\\begin{pmatrix}" + m.strip("{}").replace(",", "\\") + "\\end{pmatrix}" for m in found
    )


def _matrix_rows(text: str) -> list[str]:
    """The non-empty rows of a ``pmatrix`` (its fixed-length markers cut off)."""
    body = text[len("\\begin{pmatrix}") : -len("\\end{pmatrix}")]
    return [row.strip() for row in body.split("\\\\") if row.strip()]


def _matrices_equal(prediction: str, reference: str, symbolic: SymbolicCall) -> bool:
    """Two matrices with the same shape whose cells are equal one by one."""
    pred_rows, ref_rows = _matrix_rows(prediction), _matrix_rows(reference)
    if len(pred_rows) != len(ref_rows):
        return False
    for pred_row, ref_row in zip(pred_rows, ref_rows, strict=True):
        pred_cells, ref_cells = pred_row.split("&"), ref_row.split("&")
        if len(pred_cells) != len(ref_cells):
            return False
        if not all(qwen_equal(p, r, symbolic) for p, r in zip(pred_cells, ref_cells, strict=True)):
            return False
    return True


def _is_matrix(text: str) -> bool:
    return text.startswith(_PMATRIX) and text.endswith(_PMATRIX_END)


def _without_brackets(prediction: str, reference: str) -> tuple[str, str]:
    """Both sides with outer brackets stripped (when the prediction's kind does not clash with
    the reference's) and every brace and round bracket removed."""
    pred, ref = prediction, reference
    square = pred.startswith("[") and pred.endswith("]") and not ref.startswith("(")
    round_ = pred.startswith("(") and pred.endswith(")") and not ref.startswith("[")
    if square or round_:
        pred, ref = pred.strip("[]()"), ref.strip("[]()")
    for char in "{}()":
        pred, ref = pred.replace(char, ""), ref.replace(char, "")
    return pred, ref


def _equations_equal(prediction: str, reference: str, symbolic: SymbolicCall) -> bool | None:
    """Qwen's equation rules: two equations compared as ``lhs - (rhs)`` (either sign); a short
    ``x = …`` on one side compared by its right-hand side. None when neither applies."""
    if prediction.count("=") == 1 and reference.count("=") == 1:
        pred_l, pred_r = prediction.split("=")
        ref_l, ref_r = reference.split("=")
        pred = f"{pred_l.strip()} - ({pred_r.strip()})"
        ref = f"{ref_l.strip()} - ({ref_r.strip()})"
        return symbolic("qwen", pred, ref) or symbolic("qwen", f"-({pred})", ref)
    short_prediction = prediction.count("=") == 1 and len(prediction.split("=")[0].strip()) <= 2
    short_reference = reference.count("=") == 1 and len(reference.split("=")[0].strip()) <= 2
    if short_prediction and "=" not in reference:
        return qwen_equal(prediction.split("=")[1], reference, symbolic)
    if short_reference and "=" not in prediction and not short_prediction:
        return qwen_equal(prediction, reference.split("=")[1], symbolic)
    return None


def qwen_equal(prediction: str, reference: str, symbolic: SymbolicCall) -> bool:
    """Qwen2.5-Math's ``math_equal``: text, a choice letter, numbers (also the reference x100
    and /100), brackets ignored, element-wise tuples and matrices, equations, symbolic."""
    if prediction.strip().lower() == reference.strip().lower():
        return True
    if reference in ("A", "B", "C", "D", "E") and _choice_clean(prediction) == reference:
        return True
    pred_value, ref_value = _digits_value(prediction), _digits_value(reference)
    if pred_value is not None and ref_value is not None:
        targets = (ref_value / 100, ref_value, ref_value * 100)
        return any(_close(pred_value, target) for target in targets)
    if not prediction:
        return False
    reference, prediction = reference.strip(), prediction.strip()
    if "pmatrix" in prediction and "pmatrix" not in reference:
        reference = _as_pmatrix(reference)
    pred_bare, ref_bare = _without_brackets(prediction, reference)
    if pred_bare.lower() == ref_bare.lower():
        return True
    if _BRACKETED_START.match(prediction) and _BRACKETED_START.match(reference):
        pred_parts, ref_parts = prediction[1:-1].split(","), reference[1:-1].split(",")
        if len(pred_parts) == len(ref_parts) and all(
            qwen_equal(p, r, symbolic) for p, r in zip(pred_parts, ref_parts, strict=True)
        ):
            return True
    matrices = _is_matrix(prediction) and _is_matrix(reference)
    if matrices and _matrices_equal(prediction, reference, symbolic):
        return True
    if _equations_equal(prediction, reference, symbolic):
        return True
    return symbolic("qwen", prediction, reference)


# --- the symbolic checks (run in a time-bounded call) ----------------------------------------

_SAFE_PYTHON = re.compile(r"[0-9A-Za-z+\-*/^().,=<> ]*")
_CALL = re.compile(r"([A-Za-z]{2,})\s*\(")
_MATH_FUNCTIONS = frozenset(
    "sqrt sin cos tan cot sec csc asin acos atan sinh cosh tanh exp log ln pi abs Abs gcd lcm "
    "factorial binomial floor ceiling re im conjugate Rational Integer".split()
)


def python_safe(text: str) -> bool:
    """Whether ``text`` may be evaluated by sympy's ``parse_expr``: arithmetic, names, numbers
    and round brackets only (no quote, underscore, attribute or backslash), and no call of
    anything but a maths function."""
    if not _SAFE_PYTHON.fullmatch(text) or re.search(r"\.\s*[A-Za-z]", text):
        return False
    return all(name in _MATH_FUNCTIONS for name in _CALL.findall(text))


def _parse_any(text: str) -> Any:
    """Qwen's parse: sympy's ``parse_expr``, else ``latex2sympy``, each tried with ``\\\\``
    read as ``\\`` and as written; the string itself when neither parses (sympy's own LaTeX
    parser, tried first by Qwen, never loads next to latex2sympy2_extended's antlr runtime)."""
    from latex2sympy2_extended import latex2sympy  # type: ignore[import-untyped]
    from sympy.parsing.sympy_parser import parse_expr

    for parse in (parse_expr, latex2sympy):
        for candidate in (text.replace("\\\\", "\\"), text):
            if parse is parse_expr and not python_safe(candidate):
                continue
            try:
                return parse(candidate)
            except Exception:
                continue
    return text


def qwen_symbolic(a_text: str, b_text: str) -> bool:
    """Qwen's ``symbolic_equal``: same printed form, ``equals``/``simplify(a - b) == 0``,
    equations equal up to sign, numerically equal values, or equal matrices to 3 places."""
    import sympy

    a, b = _parse_any(a_text), _parse_any(b_text)
    checks: tuple[Callable[[], Any], ...] = (
        lambda: str(a) == str(b) or a == b,
        lambda: a.equals(b) or sympy.simplify(a - b) == 0,
        lambda: abs(a.lhs - a.rhs).equals(abs(b.lhs - b.rhs)),
        lambda: _close(float(sympy.N(a)), float(sympy.N(b))),
        lambda: (
            a.shape == b.shape
            and a.applyfunc(lambda x: round(x, 3)).equals(b.applyfunc(lambda x: round(x, 3)))
        ),
    )
    for check in checks:
        try:
            if check():
                return True
        except Exception:
            continue
    return False
