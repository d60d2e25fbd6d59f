"""Golden check for engine speed work: the engine's outputs must not change when only its
cost does. For every question of a large corpus it hashes what leaves the engine:

- `parse`: the parsed question (`ParsedQuery.model_dump_json()`) and its canonical line;
- `json_zh`, `json_en`: the CLI's `--json` recommendation (advisor.report), in yuan and
  dollars, or the `/fit` table for a "what fits this card" question;
- `text_zh`, `text_en`: the rendered answer (the bot's template, HTML);
- `full`: the whole `Recommendation` model dump for both currencies (stricter than what is
  shown: a difference here alone is an internal field, not a user-visible one);
- `lab`: the lab-machine judgement (advisor.recommend.owned) for a few machine sets.

    python eval/golden.py --write /tmp/golden-main.tsv   # on the reference branch
    python eval/golden.py --check /tmp/golden-main.tsv   # after a change: n identical
    python eval/golden.py --show "13b fp16" --part json_en   # one output in full

The hash file is a tab-separated line per question (question, then one short hash per
part): small enough to keep beside a branch, not a fixture in the repository, since every
legitimate catalog change alters it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from advisor import memo  # noqa: E402
from advisor.parse import canonical_query, parse_query  # noqa: E402
from advisor.recommend import recommend_query  # noqa: E402
from advisor.report import recommendation_json  # noqa: E402

PARTS = ("parse", "json_zh", "json_en", "text_zh", "text_en", "full", "lab")
LANG_CURRENCY = (("zh", "CNY"), ("en", "USD"))


def corpus() -> list[str]:
    """The quick questions bench/speed.py times, the parser's tables, the generated answer questions and the
    guided conversation's end questions; each once, in a fixed order."""
    from checks import answer_questions as aq

    lines: list[str] = list(aq.QUICK_QUESTIONS)
    for table in sorted((ROOT / "tests" / "data").glob("*.toml")):
        lines += [row["t"] for row in tomllib.loads(table.read_text())["line"]]
    lines += aq.questions() + aq.wizard_questions()
    seen: set[str] = set()
    return [q for q in lines if not (q in seen or seen.add(q))]


def outputs(q: str) -> dict[str, str]:
    """Every part's text for one question (the values hashed)."""
    from advisor import catalog
    from advisor.fit import fit_for_gpu
    from advisor.recommend import card_with
    from advisor.render import render

    parsed = parse_query(q)
    out = {"parse": parsed.model_dump_json() + "\n" + canonical_query(parsed)}
    if parsed.ask_fit:
        gpu = catalog.gpus()[parsed.gpu_id] if parsed.gpu_id else card_with(parsed.vram_gib or 0)
        fit = fit_for_gpu(gpu, parsed.gpu_count or 1).model_dump()
        out["json_zh"] = out["json_en"] = json.dumps({"fit": fit, "gpu": gpu.id})
        return out
    if not parsed.ok or parsed.workload is None:
        return out
    full = []
    for lang, currency in LANG_CURRENCY:
        try:
            rec = recommend_query(parsed, default_currency=currency)
        except Exception as exc:  # noqa: BLE001 - an engine error is an output too
            out[f"json_{lang}"] = f"error: {type(exc).__name__}: {exc}"
            continue
        js = recommendation_json(rec, lang)
        out[f"json_{lang}"] = json.dumps(js, ensure_ascii=False, sort_keys=True)
        out[f"text_{lang}"] = render(
            "answer", lang, rec=rec, parsed=parsed, canonical=canonical_query(parsed)
        )
        full.append(rec.model_dump_json())
    out["full"] = "\n".join(full)
    return out


def lab_outputs(qs: list[str]) -> dict[str, str]:
    """The lab judgement of every fifth question against each machine set."""
    from advisor.recommend.owned import judge_machines
    from checks import answer_questions as aq

    out: dict[str, str] = {}
    for q in qs[::5]:
        parsed = parse_query(q)
        if not parsed.ok or parsed.workload is None:
            continue
        parts = []
        for machines in aq.LABS:
            own = judge_machines(parsed.workload, machines)
            parts.append(own.model_dump_json() if own is not None else "none")
        out[q] = "\n".join(parts)
    return out


def digest(text: str | None) -> str:
    return "-" if text is None else hashlib.sha256(text.encode()).hexdigest()[:16]


def table(each: Callable[[str], None] | None = None) -> dict[str, list[str]]:
    qs = corpus()
    labs = lab_outputs(qs)
    rows: dict[str, list[str]] = {}
    for q in qs:
        memo.clear_questions()  # a new question each time, as the bot sees it first
        o = outputs(q)
        o["lab"] = labs.get(q)
        rows[q] = [digest(o.get(p)) for p in PARTS]
        if each is not None:
            each(q)
    return rows


def _key(q: str) -> str:
    return q.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", type=Path, help="write the hash file")
    ap.add_argument("--check", type=Path, help="compare with a hash file")
    ap.add_argument("--show", help="print one question's outputs")
    ap.add_argument("--part", choices=PARTS, help="with --show: only this part")
    args = ap.parse_args()
    if args.show:
        o = outputs(args.show)
        for p in PARTS:
            if (args.part in (None, p)) and p in o:
                print(f"== {p}\n{o[p]}")
        return 0
    rows = table()
    if args.write:
        args.write.write_text(
            "".join(f"{_key(q)}\t{chr(9).join(h)}\n" for q, h in rows.items()), encoding="utf-8"
        )
        print(f"{len(rows)} questions written to {args.write}")
        return 0
    if args.check:
        ref: dict[str, list[str]] = {}
        for line in args.check.read_text(encoding="utf-8").splitlines():
            q, *h = line.split("\t")
            ref[q] = h
        same, differ, missing = 0, 0, 0
        by_part = dict.fromkeys(PARTS, 0)
        for q, h in rows.items():
            r = ref.get(_key(q))
            if r is None:
                missing += 1
                print(f"new question (not in reference): {q}")
                continue
            bad = [p for p, a, b in zip(PARTS, h, r, strict=True) if a != b]
            if bad:
                differ += 1
                for p in bad:
                    by_part[p] += 1
                print(f"DIFF {','.join(bad):30} {q}")
            else:
                same += 1
        print(
            f"{len(rows)} questions: {same} identical, {differ} different, {missing} new; "
            f"different by part: {by_part}"
        )
        return 0 if differ == 0 and missing == 0 else 1
    ap.print_usage()
    return 2


if __name__ == "__main__":
    sys.exit(main())
