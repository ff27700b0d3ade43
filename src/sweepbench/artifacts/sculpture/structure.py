"""The tree rules of manifest v2 (spec artifacts.md §3.8–§3.9): refs must name a def, no ref
cycles, depth ≤ 4, no empty groups, ≤ 8 defs and ≤ 28 leaves after expansion. ``check`` refuses
(strict path, imported files); ``repair`` drops the offending entries with a note (lenient
path, model output)."""

from __future__ import annotations

from typing import Any

MAX_LEAVES = 28
MAX_DEPTH = 4
MAX_DEFS = 8

Entry = dict[str, Any]
Defs = dict[str, Entry]


class ManifestError(ValueError):
    """A manifest that the strict path refuses; the message starts with the offending path."""


def kind_of(entry: Entry) -> str:
    """``"ref"``, ``"group"`` or ``"leaf"``."""
    if "ref" in entry:
        return "ref"
    return "group" if "group" in entry else "leaf"


def def_height(name: str, defs: Defs) -> int:
    """Levels a def adds below the ref that places it (defs must be acyclic)."""
    body = defs[name]
    return max(height(child, defs) for child in body["children"]) if "children" in body else 1


def height(entry: Entry, defs: Defs) -> int:
    """Levels from an entry down to its deepest leaf, the entry included."""
    kind = kind_of(entry)
    if kind == "ref":
        return 1 + def_height(entry["ref"], defs)
    if kind == "group":
        return 1 + max(height(child, defs) for child in entry["children"])
    return 1


def leaf_count(entry: Entry, defs: Defs) -> int:
    """Leaves an entry expands to."""
    kind = kind_of(entry)
    if kind == "ref":
        body = defs[entry["ref"]]
        return sum(leaf_count(c, defs) for c in body["children"]) if "children" in body else 1
    if kind == "group":
        return sum(leaf_count(c, defs) for c in entry["children"])
    return 1


def _refs(items: list[Entry], path: str) -> list[tuple[str, Entry]]:
    """Every ref in a list of entries, through inline groups, with its path."""
    found: list[tuple[str, Entry]] = []
    for i, item in enumerate(items):
        kind = kind_of(item)
        if kind == "ref":
            found.append((f"{path}[{i}]", item))
        elif kind == "group":
            found += _refs(item["children"], f"{path}[{i}].children")
    return found


def _cycle(defs: Defs) -> tuple[str, str, Entry] | None:
    """The first ref that closes a cycle, in def order: (path, "a -> b -> a", the ref)."""
    state: dict[str, int] = {}  # 1 visiting, 2 done

    def visit(name: str, stack: list[str]) -> tuple[str, str, Entry] | None:
        state[name] = 1
        body = defs[name]
        for path, ref in _refs(body.get("children", []), f"defs.{name}.children"):
            target = ref["ref"]
            if target not in defs:
                continue
            if state.get(target) == 1:
                chain = [*stack[stack.index(target) :], target]
                return path, " -> ".join(chain), ref
            if target not in state and (found := visit(target, [*stack, target])):
                return found
        state[name] = 2
        return None

    for name in defs:
        if name not in state and (found := visit(name, [name])):
            return found
    return None


def check(manifest: dict[str, Any]) -> None:
    """Refuse a validated manifest that breaks a tree rule; the message names the path."""
    defs: Defs = manifest.get("defs", {})
    parts: list[Entry] = manifest["parts"]
    if manifest["version"] == 1:
        if "defs" in manifest:
            raise ManifestError("defs: defs require version 2")
        for i, part in enumerate(parts):
            if kind_of(part) != "leaf":
                raise ManifestError(f"parts[{i}]: refs and groups require version 2")
    if len(defs) > MAX_DEFS:
        raise ManifestError(f"defs: {len(defs)} defs; at most {MAX_DEFS}")
    everything = _refs(parts, "parts")
    for name, body in defs.items():
        everything += _refs(body.get("children", []), f"defs.{name}.children")
    for path, ref in everything:
        if ref["ref"] not in defs:
            raise ManifestError(f"{path}.ref: no def named {ref['ref']!r}")
    if (cycle := _cycle(defs)) is not None:
        raise ManifestError(f"{cycle[0]}.ref: ref cycle {cycle[1]}")
    _check_depth(parts, "parts", 1, defs)
    leaves = sum(leaf_count(p, defs) for p in parts)
    if leaves > MAX_LEAVES:
        raise ManifestError(f"parts: {leaves} leaves after expansion; at most {MAX_LEAVES}")


def _check_depth(items: list[Entry], path: str, depth: int, defs: Defs) -> None:
    for i, item in enumerate(items):
        if kind_of(item) == "group":
            _check_depth(item["children"], f"{path}[{i}].children", depth + 1, defs)
        elif depth + height(item, defs) - 1 > MAX_DEPTH:
            raise ManifestError(f"{path}[{i}]: nesting deeper than {MAX_DEPTH}")


def repair(parts: list[Entry], defs: Defs, notes: list[str]) -> tuple[list[Entry], Defs]:
    """Drop what breaks a tree rule, each with a note, until nothing does (§3.8 leniency)."""
    while True:
        before = len(notes)
        while (cycle := _cycle(defs)) is not None:
            path, chain, ref = cycle
            notes.append(f"dropped {path} — ref cycle {chain}")
            ref["ref"] = None  # marked; removed by _prune below
        for name in list(defs):
            if "children" in defs[name]:
                kept = _prune(defs[name]["children"], f"defs.{name}.children", None, defs, notes)
                if not kept:
                    notes.append(f"dropped defs.{name} — an empty group")
                    del defs[name]
                else:
                    defs[name] = {"children": kept}
        parts = _prune(parts, "parts", 1, defs, notes)
        if len(notes) == before:
            break
    return _limit(parts, defs, notes), defs


def _prune(
    items: list[Entry], path: str, depth: int | None, defs: Defs, notes: list[str]
) -> list[Entry]:
    out: list[Entry] = []
    for i, item in enumerate(items):
        where, kind = f"{path}[{i}]", kind_of(item)
        if kind == "ref":
            if item["ref"] is None:
                continue  # a cycle-closing ref, already noted
            if item["ref"] not in defs:
                notes.append(f"dropped {where} — ref to unknown def {item['ref']!r}")
                continue
        elif kind == "group":
            if depth is not None and depth >= MAX_DEPTH:
                notes.append(f"dropped {where} — nesting deeper than {MAX_DEPTH}")
                continue
            inner = None if depth is None else depth + 1
            children = _prune(item["children"], f"{where}.children", inner, defs, notes)
            if not children:
                notes.append(f"dropped {where} — an empty group")
                continue
            item = {**item, "children": children}
        if depth is not None and depth + height(item, defs) - 1 > MAX_DEPTH:
            notes.append(f"dropped {where} — nesting deeper than {MAX_DEPTH}")
            continue
        out.append(item)
    return out


def _limit(parts: list[Entry], defs: Defs, notes: list[str]) -> list[Entry]:
    """Keep the first 28 leaves in expansion order (a ref is kept whole or not at all)."""
    total = sum(leaf_count(p, defs) for p in parts)
    if total <= MAX_LEAVES:
        return parts
    if all(kind_of(p) == "leaf" for p in parts):
        notes.append(f"kept the first {MAX_LEAVES} of {total} parts")
        return parts[:MAX_LEAVES]
    room = [MAX_LEAVES]

    def take(items: list[Entry]) -> list[Entry]:
        kept: list[Entry] = []
        for item in items:
            if kind_of(item) == "group":
                children = take(item["children"])
                if children:
                    kept.append({**item, "children": children})
                if room[0] < 0 or len(children) < len(item["children"]):
                    room[0] = -1
            elif room[0] >= (n := leaf_count(item, defs)):
                room[0] -= n
                kept.append(item)
            else:
                room[0] = -1
            if room[0] < 0:
                break
        return kept

    kept = take(parts)
    left = sum(leaf_count(p, defs) for p in kept)
    notes.append(f"kept the first {left} of {total} leaves after expansion (at most {MAX_LEAVES})")
    return kept
