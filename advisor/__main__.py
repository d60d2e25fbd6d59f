"""Command line: `python -m advisor "qwen2.5-72b int4 32k" [--json] [--lang zh|en]`
or `python -m advisor --workload FILE.json --json`. A Hub repo id the catalog lacks
(`python -m advisor "allenai/OLMo-2-0325-32B 2x4090"`) is looked up on the Hub and cached
in `--db`; `--offline` uses the catalog and that cache only."""

from __future__ import annotations

import argparse
import json
import signal
import sys
from pathlib import Path

from pydantic import ValidationError

from advisor.memory import UnknownFormatError, UnknownModelError, estimate
from advisor.models.workload import Workload
from advisor.parse import canonical_query, parse_query
from advisor.recommend import recommend_query
from advisor.report import estimate_json, recommendation_json


def _print_kind(parsed, lang: str, as_json: bool) -> int | None:
    """A question of a kind with its own answer (advisor/kinds): "3090 最大能跑多大的模型",
    "预算8万配一台", "4090还是3090", "你好". None: answered as `fit` below."""
    from advisor.kinds import answer_kind, kind_json

    result = answer_kind(parsed, "CNY" if lang == "zh" else "USD")
    if result is None:
        return None
    if as_json:
        print(json.dumps(kind_json(parsed, result), ensure_ascii=False, indent=2))
        return 0
    from advisor.render import render

    ctx = {"result": result, "parsed": parsed, "unknown_card": parsed.unknown_card}
    print(render(parsed.question_kind, lang, plain=True, **ctx))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m advisor", description="GPU advisor engine")
    ap.add_argument("query", nargs="?", help='one line, e.g. "13B fp16" or "训练 llama3-8b lora"')
    ap.add_argument("--workload", type=Path, help="a Workload as JSON (see README)")
    ap.add_argument("--json", action="store_true", help="print JSON")
    ap.add_argument("--lang", choices=("zh", "en"), default="en")
    ap.add_argument("--offline", action="store_true", help="catalog and Hub cache only")
    ap.add_argument(
        "--db",
        type=Path,
        help="the Hub cache, a SQLite file (default: data/hub-cache.sqlite3; the bot's DATABASE_PATH shares its cache)",
    )
    args = ap.parse_args(argv)

    if args.workload:
        try:
            w = Workload.model_validate_json(args.workload.read_text(encoding="utf-8"))
            out = estimate_json(estimate(w))
        except (ValidationError, UnknownModelError, UnknownFormatError, ValueError) as exc:
            print(json.dumps({"error": _error_text(exc)}, ensure_ascii=False))
            return 2
        print(json.dumps(out, ensure_ascii=False, indent=2))
        return 0
    if not args.query:
        ap.print_usage()
        return 2

    parsed = parse_query(args.query)
    answered = _print_kind(parsed, args.lang, args.json)
    if answered is not None:
        return answered
    hub = None
    unknown = not parsed.ok and parsed.error and parsed.error.code in ("unknown_model", "no_model")
    if unknown or parsed.unrecognized is not None:  # or "olmo2:7b": searched on the Hub
        # the CLI shell, not the engine, reaches the network (hublookup/)
        from hublookup.cli import lookup

        found = lookup(args.query, parsed, args.db, args.offline)
        if found is not None:
            parsed, hub = found
            if hub is not None and hub.model is None and not parsed.ok:
                return _hub_error(hub, args.json, args.lang)
    if not parsed.ok:
        if args.json:
            print(
                json.dumps(
                    {
                        "question_kind": parsed.question_kind,
                        "error": parsed.error.model_dump() if parsed.error else None,
                        "understood": parsed.understood,
                        "ignored": parsed.ignored,
                    },
                    ensure_ascii=False,
                )
            )
        else:
            from advisor.render import render

            print(render("error", args.lang, error=parsed.error, parsed=parsed, plain=True))
        return 2
    assert parsed.workload is not None
    try:
        rec = recommend_query(parsed, default_currency="CNY" if args.lang == "zh" else "USD")
    except (UnknownModelError, UnknownFormatError, ValidationError, ValueError) as exc:
        print(json.dumps({"error": _error_text(exc)}, ensure_ascii=False))
        return 2
    if args.json:
        out = {"question_kind": parsed.question_kind, **recommendation_json(rec, args.lang)}
        out["understood"], out["ignored"] = parsed.understood, parsed.ignored
        out["canonical"] = canonical_query(parsed)
        if parsed.unrecognized is not None:  # the figures are a generic model's of that size
            out["unrecognized"] = {
                "name": parsed.unrecognized.detail,
                "hub_suggestions": hub.suggestions if hub is not None else [],
                "hub_reached": hub is not None and hub.error is None,
            }
        if parsed.unknown_card is not None:  # a card the catalog lacks: the picks are rentals
            out["unknown_card"] = parsed.unknown_card
        if hub is not None and hub.model is not None:
            out["hub"] = {
                "repo_id": hub.model.spec.id,
                "source": hub.model.spec.source,
                "read_at": hub.model.read_at,
                "params_from": hub.model.params_from,
                "stale": hub.stale,
            }
        print(json.dumps(out, ensure_ascii=False, indent=2))
        return 0
    from advisor.render import render

    print(
        render(
            "answer",
            args.lang,
            rec=rec,
            parsed=parsed,
            canonical=canonical_query(parsed),
            hub=hub,
            plain=True,
        )
    )
    return 0


def _hub_error(hub: object, as_json: bool, lang: str) -> int:
    if as_json:
        print(json.dumps({"error": hub.model_dump(include={"repo_id", "error", "suggestions"})}))  # type: ignore[attr-defined]
    else:
        from advisor.render import render

        print(render("hub_error", lang, hub=hub, plain=True))
    return 2


def _error_text(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        return f"{'.'.join(str(p) for p in first['loc'])}: {first['msg']}"
    return str(exc)


if __name__ == "__main__":
    if hasattr(signal, "SIGPIPE"):  # `python -m advisor … | head`: stop quietly, no traceback
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main())
