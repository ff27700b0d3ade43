"""AIME read as ELBench reads it: OpenAI's PRM800K grader (``grade_answer``), restated step by
step with its misreadings, such as unit words (``meters``, ``degrees``, ``hours``…) deleted wherever
they occur, and integers that must match exactly (the ``replicated`` scoring version; MATH-500's
Qwen2.5-Math rules are :mod:`.elbench_math`).
"""

from __future__ import annotations

import re

from sweepbench.bench.scoring.elbench_math import (
    SymbolicCall,
    braced_fractions,
    python_safe,
    slash_fraction,
)

_WHOLE_TEXT = re.compile(r"^\\text\{(?P<text>.+?)\}$")
_PRM_UNITS = (
    "degree", "cm", "centimeter", "meter", "mile", "second", "minute", "hour", "day", "week",
    "month", "year", "foot", "feet", "inch", "yard",
)  # fmt: skip
_PRM_UNIT_PATTERNS = tuple(re.compile(f"{unit}(es)?(s)? *(\\^[0-9]+)?") for unit in _PRM_UNITS)
_CIRC = re.compile(r"\^ *\\circ")
_THIN_SPACE_COMMA = re.compile(r",\\! *")
_MIXED_NUMBER = re.compile("([0-9]) +([0-9])")
_FORMATTED_COMMA = re.compile(r"(\d)(,)(\d\d\d)($|\D)")
_FRACTION_TEXT = re.compile(r"^-?[0-9]+.?/0*[1-9][0-9]*.?$")


def _mathd_units_removed(text: str) -> str:
    """Hendrycks' unit removal: everything from a ``\\text{ `` on (AssertionError when there
    are two, which ends the normalisation)."""
    if "\\text{ " not in text:
        return text
    parts = text.split("\\text{ ")
    if len(parts) != 2:
        raise AssertionError("two units")
    return parts[0]


def _mathd_roots(text: str) -> str:
    """Hendrycks' ``\\sqrt3`` → ``\\sqrt{3}`` (IndexError for a ``\\sqrt`` at the end)."""
    if "\\sqrt" not in text:
        return text
    head, *rest = text.split("\\sqrt")
    return head + "".join(
        "\\sqrt" + part if part[0] == "{" else "\\sqrt{" + part[0] + "}" + part[1:] for part in rest
    )


def _mathd_string(text: str) -> str:
    """Hendrycks' MATH ``_strip_string``."""
    text = text.replace("\n", "").replace("\\!", "").replace("\\\\", "\\")
    text = text.replace("tfrac", "frac").replace("dfrac", "frac")
    text = text.replace("\\left", "").replace("\\right", "")
    text = text.replace("^{\\circ}", "").replace("^\\circ", "").replace("\\$", "")
    text = _mathd_units_removed(text).replace("\\%", "")
    text = text.replace(" .", " 0.").replace("{.", "{0.")
    if not text:
        return text
    if text[0] == ".":
        text = "0" + text
    sides = text.split("=")
    if len(sides) == 2 and len(sides[0]) <= 2:
        text = sides[1]
    text = braced_fractions(_mathd_roots(text).replace(" ", ""), checked=False)
    if text == "0.5":
        text = "\\frac{1}{2}"
    return slash_fraction(text, roots=False)


def mathd_normalise(answer: str) -> str:
    """Hendrycks' ``normalize_answer``: a whole ``\\text{…}`` unwrapped, then
    :func:`_mathd_string`; the unwrapped answer when that fails."""
    answer = answer.strip()
    found = _WHOLE_TEXT.search(answer)
    if found:
        answer = found.group("text").strip()
    try:
        return _mathd_string(answer)
    except (AssertionError, IndexError):
        return answer


_LATEX_SYMBOLS = {
    "\\cdot": "*", "\\times": "*", "\\pi": "pi", "\\infty": "inf", "\\cup": "U",
    "\\le": "≤", "\\ge": "≥", "\\ne": "≠", "\\pm": "±", "\\circ": "∘",
}  # fmt: skip
_LATEX_FRAC = re.compile(r"\\frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_LATEX_SQRT = re.compile(r"\\sqrt\s*\{([^{}]*)\}")
_LATEX_MACRO = re.compile(r"\\[A-Za-z]+\*?|\\.")


def latex_as_text(expr: str) -> str:
    """A plain-text reading of LaTeX close to ``pylatexenc``'s (which the PRM800K grader uses):
    ``\\frac{a}{b}`` → ``a/b``, ``\\sqrt{x}`` → ``sqrt(x)``, ``\\cdot``/``\\times`` → ``*``,
    ``\\pi`` → ``pi``, other macros dropped with their braces. Only answers with a backslash
    get here, and on AIME's whole-number keys only whether the result is that number matters."""
    text = expr.replace("\\tfrac", "\\frac").replace("\\dfrac", "\\frac")
    for _ in range(4):  # nested fractions and roots, innermost first
        text = _LATEX_FRAC.sub(r"\1/\2", _LATEX_SQRT.sub(r"sqrt(\1)", text))
    for macro, plain in sorted(_LATEX_SYMBOLS.items(), key=lambda kv: -len(kv[0])):
        text = re.sub(re.escape(macro) + r"(?![A-Za-z])", plain, text)
    text = _LATEX_MACRO.sub("", text)
    return text.replace("{", "").replace("}", "").strip()


def _strip_formatted_commas(expr: str) -> str:
    """Thousands commas removed (``1,000`` → ``1000``), tuple commas kept."""
    while True:
        stripped = _FORMATTED_COMMA.sub(r"\1\3\4", expr)
        if stripped == expr:
            return stripped
        expr = stripped


def _float_is_int(value: float) -> bool:
    try:
        return abs(value - round(value)) <= 1e-7
    except (OverflowError, ValueError):
        return False


def _text_is_int(text: str) -> bool:
    """Whether ``text`` (thousands commas allowed) is a whole number."""
    try:
        return _float_is_int(float(_strip_formatted_commas(text)))
    except ValueError:
        return False


def _text_is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def prm_normalise(expr: str) -> str:
    """PRM800K's ``_normalize``: units and ``$``/``%`` removed (unit words wherever they are),
    ``and``/``or`` as commas, LaTeX read as text, spaces and braces removed, lower-cased,
    whole numbers written as integers."""
    found = _WHOLE_TEXT.search(expr)
    if found:
        expr = found.group("text")
    expr = expr.replace("\\%", "%").replace("\\$", "$").replace("$", "").replace("%", "")
    expr = expr.replace(" or ", " , ").replace(" and ", " , ")
    expr = expr.replace("million", "*10^6").replace("billion", "*10^9")
    expr = expr.replace("trillion", "*10^12")
    for unit in _PRM_UNIT_PATTERNS:
        expr = unit.sub("", expr)
    expr = _CIRC.sub("", expr)
    if expr and expr[0] == "{" and expr[-1] == "}":
        expr = expr[1:-1]
    expr = _THIN_SPACE_COMMA.sub("", expr)
    if _text_is_float(expr) and _float_is_int(float(expr)):
        expr = str(round(float(expr)))
    if "\\" in expr:
        expr = latex_as_text(expr)
    expr = re.sub("- *", "-", expr)
    expr = _MIXED_NUMBER.sub("\\1+\\2", expr).replace(" ", "")
    expr = expr.replace("{", "").replace("}", "").lower()
    if _text_is_int(expr):
        expr = str(int(float(expr.replace(",", ""))))
    return expr


def _split_tuple(expr: str) -> list[str]:
    """The elements of a bracketed tuple or interval, else the whole expression."""
    expr = _strip_formatted_commas(expr)
    if not expr:
        return []
    brackets = "()[]"
    inner = expr[1:-1]
    bracketed = len(expr) > 2 and expr[0] in brackets and expr[-1] in brackets
    if bracketed and all(ch not in inner for ch in brackets):
        return [elem.strip() for elem in inner.split(",")]
    return [expr]


def prm_allows_eval(expr: str) -> bool:
    """PRM800K's guard: at most two distinct letters (``sqrt``/``frac`` aside), no ``^{``,
    ``^(`` or long powers; and :func:`python_safe`."""
    letters = {ch for ch in expr.replace("sqrt", "").replace("frac", "") if ch.isalpha()}
    if len(letters) > 2 or "^{" in expr or "^(" in expr:
        return False
    if re.search(r"\^[0-9]+\^", expr) or re.search(r"\^[0-9][0-9]+", expr):
        return False
    return python_safe(expr)


def prm_symbolic(reference: str, given: str) -> bool:
    """PRM800K's ``are_equal_under_sympy``: ``(reference)-(given)`` parsed with implicit
    multiplication simplifies to 0."""
    import sympy
    from sympy.parsing import sympy_parser

    expr = f"({reference})-({given})"
    if not prm_allows_eval(expr):
        return False
    transformations = (
        *sympy_parser.standard_transformations,
        sympy_parser.implicit_multiplication_application,
    )
    try:
        parsed = sympy_parser.parse_expr(expr.replace("^", "**"), transformations=transformations)
        return bool(sympy.simplify(parsed) == 0)
    except Exception:
        return False


def _elements_equal(reference: str, given: str, symbolic: SymbolicCall) -> bool:
    """One tuple element: unreduced fractions must be written alike; an integer on one side
    needs an integer on the other; else :func:`prm_symbolic`."""
    if _FRACTION_TEXT.search(reference) and _FRACTION_TEXT.search(given):
        return reference == given
    if _text_is_int(reference) != _text_is_int(given):
        return False
    return symbolic("prm", reference, given)


def prm_equal(given: str, reference: str, symbolic: SymbolicCall) -> bool:
    """PRM800K's ``grade_answer``: equal after Hendrycks' normalisation, or after PRM800K's,
    or element by element (same outer brackets, same count)."""
    if mathd_normalise(reference) == mathd_normalise(given):
        return True
    ref, giv = prm_normalise(reference), prm_normalise(given)
    if ref == giv:
        return True
    if not giv:
        return False
    ref_elems, given_elems = _split_tuple(ref), _split_tuple(giv)
    if len(ref_elems) > 1 and (ref[0] != giv[0] or ref[-1] != giv[-1]):
        return False
    if len(ref_elems) != len(given_elems) or not ref_elems:
        return False
    return all(_elements_equal(r, g, symbolic) for r, g in zip(ref_elems, given_elems, strict=True))
