"""The highlevel_edu rule scorer (spec §13): an offline fallback to the LLM judge.

The answer must be a JSON object with the keys its scene asks for. The grade is the mean of a
structure score (the fraction of required keys present) and a scene score (closeness to the
reference for assignment grading, non-empty keys and cue words for the other scenes). Runs
scored this way are labelled "rule-scored" and are never ranked with judged runs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from difflib import SequenceMatcher
from typing import Any

from sweepbench.bench.items import Item, Task
from sweepbench.bench.scoring.base import Score
from sweepbench.bench.scoring.judge import extract_json_object, strip_thinking
from sweepbench.bench.scoring.registry import scorer

PASS_THRESHOLD = 0.6
"""The final score a passing answer reaches (with no required key missing)."""
CUE_BONUS = 0.2
"""Added to a scene score when a cue word is present (the total is capped at 1)."""

SCENE_KEYS: Mapping[str, tuple[str, ...]] = {
    "AG": ("Score", "Scoring Details", "Personalized Feedback"),
    "EC": ("Corrected Answer", "Error Explanation"),
    "Q&A": ("Answer",),
    "ES": ("Emotional State Analysis", "Comfort & Advice"),
    "IP": ("Reasoning Provided",),
    "PCC": ("Learning Path Planning", "Personalized Recommendations"),
    "QG": ("Question", "Provided Reasoning"),
    "TMG": ("Teaching Materials",),
}
"""The keys each scene's answer must have; other scenes take the quoted keys of the prompt."""

EMPATHY_CUES: tuple[str, ...] = (
    "understand", "support", "feel", "it's okay", "not alone", "don't worry", "encourage",
    "理解", "感受", "辛苦", "支持", "陪伴", "别担心", "不要担心", "鼓励", "一起",
)  # fmt: skip
"""Words that show an emotional-support answer (ES) acknowledges the student's feelings."""
REASONING_CUES: tuple[str, ...] = (
    "because", "therefore", "reason", "since", "thus", "first", "then",
    "因为", "所以", "因此", "由于", "首先", "其次", "推理",
)  # fmt: skip
"""Words that show an inference answer (IP) gives its reasoning."""
PERSONALISATION_CUES: tuple[str, ...] = (
    "goal", "learning style", "interest", "level", "strength", "weakness", "background", "pace",
    "学习风格", "目标", "兴趣", "基础", "水平", "背景", "特点", "优势", "薄弱",
)  # fmt: skip
"""Words that show a planning answer (PCC, PLS) is fitted to the student."""

SCENE_CUES: Mapping[str, tuple[str, tuple[str, ...]]] = {
    "ES": ("empathy_cue", EMPATHY_CUES),
    "IP": ("reasoning_cue", REASONING_CUES),
    "PCC": ("personalisation_cue", PERSONALISATION_CUES),
    "PLS": ("personalisation_cue", PERSONALISATION_CUES),
}
"""Which cue list earns a scene its bonus, and the metadata name of the finding."""

_QUOTED_KEY = re.compile(r"[\"“]([^\"”\n]{1,60})[\"”]\s*[:：]")
_QUOTED = re.compile(r"[\"'“‘]([^\"'”’\n]{1,60})[\"'”’]")
_FRACTION = re.compile(r"(-?\d+(?:\.\d+)?)\s*(?:/|／|out of)\s*(\d+(?:\.\d+)?)", re.IGNORECASE)
_PERCENT = re.compile(r"(-?\d+(?:\.\d+)?)\s*%")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")

Fields = Mapping[str, Any]


def score_edu_rule(response: str, item: Item) -> Score:
    """The rule grade of one highlevel_edu answer (spec §13, "highlevel_edu rule scorer")."""
    scene = str(item.metadata.get("_scene", "") or "")
    required = required_keys(scene, item.prompt)
    body = strip_thinking(response or "")
    parsed = extract_json_object(body) if body else None
    if parsed is None:
        return _not_json(scene, required)
    fields = _fold_keys(parsed)
    missing = [key for key in required if _fold(key) not in fields]
    structure = (len(required) - len(missing)) / len(required) if required else 0.0
    scene_score, scene_reason, scene_meta = score_scene(scene, required, parsed, item)
    final = round((structure + scene_score) / 2, 4)
    passed = final >= PASS_THRESHOLD and not missing
    reason = (
        f"Missing required keys: {', '.join(missing)}. {scene_reason}" if missing else scene_reason
    )
    meta = {
        "scene": scene,
        "required_keys": list(required),
        "missing_keys": missing,
        "structure_score": round(structure, 4),
        "scene_score": round(scene_score, 4),
        **scene_meta,
    }
    return Score(final, "pass" if passed else "fail", passed, reason, meta)


def _not_json(scene: str, required: Sequence[str]) -> Score:
    """The grade of an answer that holds no JSON object: 0, fail, format not followed."""
    meta = {"scene": scene, "required_keys": list(required)}
    return Score(0.0, "fail", False, "The answer is not a JSON object.", meta, format_valid=False)


def required_keys(scene: str, prompt: str) -> tuple[str, ...]:
    """The keys a scene's answer must have: the scene's fixed keys, else the prompt's."""
    return SCENE_KEYS.get(scene) or prompt_keys(prompt)


def prompt_keys(prompt: str) -> tuple[str, ...]:
    """The keys a prompt asks for: the quoted names written as JSON keys (``"Name":``), else
    every short quoted name; in order of first appearance, without repeats."""
    names = _QUOTED_KEY.findall(prompt) or _QUOTED.findall(prompt)
    keys: list[str] = []
    for name in (n.strip() for n in names):
        if name and name not in keys:
            keys.append(name)
    return tuple(keys)


def score_scene(
    scene: str, required: Sequence[str], parsed: Fields, item: Item
) -> tuple[float, str, dict[str, Any]]:
    """The scene score in [0, 1], a reason, and what was measured."""
    if scene == "AG":
        return score_assignment_grading(parsed, _reference_fields(item.reference))
    if scene == "PLS":
        base = 1.0 if parsed else 0.0
        return _with_cue(scene, base, _text(parsed), "Expected personalised learning content.")
    keys = list(required) if scene in SCENE_KEYS else list(parsed)
    filled = _filled_keys(parsed, keys)
    base = len(filled) / len(keys) if keys else (1.0 if parsed else 0.0)
    reason = f"{len(filled)} of {len(keys)} keys filled in."
    if scene in SCENE_CUES:
        cue_text = " ".join(_text(_lookup(parsed, key)) for key in keys)
        score, reason, meta = _with_cue(scene, base, cue_text, reason)
        return score, reason, {"filled_keys": filled, **meta}
    return base, reason, {"filled_keys": filled}


def score_assignment_grading(
    parsed: Fields, reference: Fields
) -> tuple[float, str, dict[str, Any]]:
    """AG: 0.5 × score match + 0.25 × similarity of the scoring details + 0.25 × similarity of
    the feedback, each against the reference grading."""
    match = score_match(_lookup(parsed, "Score"), _lookup(reference, "Score"))
    details = text_similarity(
        _lookup(parsed, "Scoring Details"), _lookup(reference, "Scoring Details")
    )
    feedback = text_similarity(
        _lookup(parsed, "Personalized Feedback"), _lookup(reference, "Personalized Feedback")
    )
    combined = round(0.5 * match + 0.25 * details + 0.25 * feedback, 4)
    meta = {
        "score_match": round(match, 4),
        "details_similarity": round(details, 4),
        "feedback_similarity": round(feedback, 4),
    }
    return combined, "Score, scoring details and feedback compared with the reference.", meta


def score_match(predicted: Any, reference: Any) -> float:
    """1 − |predicted − reference| on normalised scores ("8/10" → 0.8), clamped to [0, 1].

    Both missing → 1; one missing → 0. A bare number takes the other side's scale ("8" against
    "7/10" → 0.8 against 0.7); two bare numbers above 1 are read on the smallest of the 10- or
    100-point scales that holds them both."""
    pred, ref = parse_score(predicted), parse_score(reference)
    if pred is None and ref is None:
        return 1.0
    if pred is None or ref is None:
        return 0.0
    (pred_value, pred_scale), (ref_value, ref_scale) = pred, ref
    scale_for_bare = pred_scale or ref_scale or _common_scale(pred_value, ref_value)
    pred_norm = pred_value / (pred_scale or scale_for_bare)
    ref_norm = ref_value / (ref_scale or scale_for_bare)
    return max(0.0, min(1.0, 1.0 - abs(pred_norm - ref_norm)))


def parse_score(value: Any) -> tuple[float, float | None] | None:
    """A score and its scale: ``8/10`` → (8, 10), ``80%`` → (80, 100), ``7`` → (7, None);
    None when there is no number (or the scale is 0)."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value), None
    text = str(value)
    if fraction := _FRACTION.search(text):
        scale = float(fraction.group(2))
        return (float(fraction.group(1)), scale) if scale else None
    if percent := _PERCENT.search(text):
        return float(percent.group(1)), 100.0
    if number := _NUMBER.search(text):
        return float(number.group(0)), None
    return None


def _common_scale(*values: float) -> float:
    """The scale two bare scores are read on: 1, 10 or 100 when it holds both, else the larger."""
    largest = max(abs(v) for v in values)
    for scale in (1.0, 10.0, 100.0):
        if largest <= scale:
            return scale
    return largest


def text_similarity(left: Any, right: Any) -> float:
    """The sequence-matcher ratio of two texts, lower-cased with whitespace collapsed (both
    empty → 1; one empty → 0)."""
    a, b = _normalise(_text(left)), _normalise(_text(right))
    if not a and not b:
        return 1.0
    if not a or not b:
        return 0.0
    return SequenceMatcher(None, a, b).ratio()


def has_cue(text: str, cues: Sequence[str]) -> bool:
    """True when ``text`` contains one of ``cues`` (whole words for Latin-script cues)."""
    normalised = _normalise(text)
    for cue in cues:
        if cue.isascii():
            if re.search(rf"(?<![a-z]){re.escape(cue)}(?![a-z])", normalised):
                return True
        elif cue in normalised:
            return True
    return False


def _with_cue(scene: str, base: float, text: str, reason: str) -> tuple[float, str, dict[str, Any]]:
    """The scene score with the cue bonus when the scene's cue words appear in ``text``."""
    name, cues = SCENE_CUES[scene]
    found = has_cue(text, cues)
    score = min(1.0, base + (CUE_BONUS if found else 0.0))
    return score, reason, {name: found}


def _filled_keys(parsed: Fields, keys: Sequence[str]) -> list[str]:
    """The keys whose value is present and not empty (blank text, empty list or object, null)."""
    return [key for key in keys if _normalise(_text(_lookup(parsed, key)))]


def _reference_fields(reference: Any) -> Fields:
    """The reference grading as a mapping (the loader gives a dict; a JSON string is read)."""
    if isinstance(reference, Mapping):
        return reference
    if isinstance(reference, str):
        try:
            value = json.loads(reference)
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}
    return {}


def _lookup(fields: Fields, key: str) -> Any:
    """The value of ``key`` (exact name first, else ignoring case and spacing); None if absent."""
    if key in fields:
        return fields[key]
    return _fold_keys(fields).get(_fold(key))


def _fold_keys(fields: Fields) -> dict[str, Any]:
    """The fields keyed by folded name (first spelling wins)."""
    folded: dict[str, Any] = {}
    for key, value in fields.items():
        folded.setdefault(_fold(str(key)), value)
    return folded


def _fold(key: str) -> str:
    """A key name compared without case or extra spacing."""
    return _normalise(key)


def _normalise(text: str) -> str:
    """Lower-cased with runs of whitespace collapsed to one space."""
    return re.sub(r"\s+", " ", text).strip().lower()


def _text(value: Any) -> str:
    """A value as text: strings as they are, None as nothing, anything else as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list | dict) and not value:
        return ""
    return json.dumps(value, ensure_ascii=False, default=str)


@scorer("edu_rule", options=("scale",))
def edu_rule_task(task: Task, item: Item, response: str) -> Score:
    """A highlevel_edu answer, by :func:`score_edu_rule`."""
    return score_edu_rule(response, item)
