"""The engine's fast paths give what the plain paths give: grouped word
alternations match the same spans as one alternative per word, and the shared cheap-fix
search (CheapFixes) finds the fix `fixes_for` finds, card by card. eval/golden.py checks
whole answers; these pin the two rewrites that are not expression-for-expression copies."""

from __future__ import annotations

import contextlib
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from unittest.mock import patch

import pytest

from advisor import catalog, memo, memory
from advisor.memory.terms import LeanTerm
from advisor.models.estimate import Term
from advisor.parse import parse_query, vocab
from advisor.recommend import Recommendation, recommend, recommend_query
from advisor.recommend.card_counts import workload_for
from advisor.recommend.estimates import estimate, trial_estimate, workload_key
from advisor.recommend.fix_candidates import candidate_fixes
from advisor.recommend.fixes import CheapFixes, fixes_for
from checks.answer_questions import questions, wizard_questions

DATA = Path(__file__).parent / "data"


def _plain_alternation(words: tuple[str, ...]) -> str:
    """vocab.alternation as it was: every word its own alternative, longest first."""
    ordered = sorted({w.lower() for w in words}, key=len, reverse=True)
    return "(?:" + "|".join(vocab.phrase(w) for w in ordered) + ")"


def _lines() -> list[str]:
    out: list[str] = []
    for table in sorted(DATA.glob("parse_lines*.toml")):
        out += [row["t"] for row in tomllib.loads(table.read_text())["line"]]
    return out


def test_grouped_alternations_match_what_one_alternative_per_word_matches() -> None:
    lines = _lines()
    word_lists = _alternations_used()
    assert len(word_lists) > 30
    texts = [vocab.CJK_LATIN_EDGE.sub(" ", line.lower()) for line in lines]
    for words in word_lists:
        grouped = re.compile(vocab.alternation(words), re.I)
        plain = re.compile(_plain_alternation(words), re.I)
        for text in texts:
            a, b = grouped.search(text), plain.search(text)
            assert (a and a.span()) == (b and b.span()), (words[:3], text)


def _alternations_used() -> list[tuple[str, ...]]:
    """Every word list of the vocab files (advisor/data/vocab/*.toml) and every word table's
    words: what the recognizers turn into alternations."""
    out: list[tuple[str, ...]] = []

    def walk(node: object) -> None:
        if isinstance(node, list) and node and all(isinstance(x, str) for x in node):
            out.append(tuple(node))
        elif isinstance(node, dict):
            scalars = [k for k, v in node.items() if not isinstance(v, dict | list)]
            if scalars:
                out.append(tuple(scalars))
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    for path in sorted(vocab.VOCAB_DIR.glob("*.toml")):
        walk(vocab.load(path.stem))
    return list(dict.fromkeys(out))


@pytest.mark.parametrize("q", questions(60, seed=18))
def test_cheap_fix_search_finds_what_fixes_for_finds_on_every_card(q: str) -> None:
    w = parse_query(q).workload
    assert w is not None
    cheap = CheapFixes()
    checked = 0
    for count in (1, 2, 4):
        result = estimate(workload_for(w, count))
        if result.estimate is None:
            continue  # rendering, video: no memory formula, no fixes
        for gpu in catalog.gpus().values():
            for blocked in (False, True):
                expected = fixes_for(result, gpu, only_cheap=True, limit=1, blocked=blocked)
                got = cheap.first(result, gpu, blocked)
                want = (expected[0][0], expected[0][1].estimate.total_bytes) if expected else None
                have = (got[0], got[1].estimate.total_bytes) if got else None
                assert have == want, (count, gpu.id, blocked)
                checked += 1
    if checked == 0:
        pytest.skip("a job with no memory formula has no fixes to compare")


def _trial_workloads(q: str) -> list:
    """The question's workload on 1, 2 and 4 cards and every change a recommendation tries
    on each (fixes.candidate_fixes): the workloads lean estimates are made for."""
    w = parse_query(q).workload
    assert w is not None
    out = []
    for count in (1, 2, 4):
        trial = workload_for(w, count)
        out.append(trial)
        result = estimate(trial)
        if result.estimate is not None:
            out += [make() for _, make in candidate_fixes(result)]
    return out


@pytest.mark.parametrize("q", questions(40, seed=1818))
def test_a_lean_estimate_has_the_full_estimates_numbers(q: str) -> None:
    checked = 0
    for w in _trial_workloads(q):
        try:
            full = memory.estimate(w)
        except ValueError as exc:
            with pytest.raises(type(exc)):
                memory.estimate(w, lean=True)
            continue
        lean = memory.estimate(w, lean=True)
        assert lean.assumed == full.assumed and lean.model == full.model
        if full.estimate is None:
            assert lean.estimate is None
            continue
        a, b = full.estimate, lean.estimate
        assert b is not None
        assert all(isinstance(t, LeanTerm) for t in b.terms)
        assert [(t.name, t.bytes) for t in b.terms] == [(t.name, t.bytes) for t in a.terms]
        numbers = ("total_bytes", "allocated_bytes", "low_bytes", "high_bytes", "runtime")
        numbers += ("kv_bytes_per_token", "non_kv_bytes", "confidence", "num_gpus")
        assert [getattr(b, n) for n in numbers] == [getattr(a, n) for n in numbers], w
        checked += 1
    assert checked > 0


def _terms_of(rec: Recommendation) -> list:
    out = []
    for result in (rec.result, rec.setup, rec.asked):
        if result is not None and result.estimate is not None:
            out += result.estimate.terms
    return out


@pytest.mark.parametrize("q", questions(30, seed=1819))
def test_an_answer_shows_no_lean_estimate(q: str) -> None:
    """Lean estimates (the changes tried, the grid's cells) are kept apart from full ones:
    an answer's breakdowns are full terms, with their text, even after the same workload was
    estimated lean first (a change tried on one question is another question's setup)."""
    parsed = parse_query(q)
    if parsed.workload is None:
        pytest.skip("not a question about a workload")
    memo.clear_questions()
    for w in _trial_workloads(q):  # every workload of the search, lean first
        with contextlib.suppress(ValueError):
            trial_estimate(w)
    try:
        rec = recommend_query(parsed)
    except ValueError:
        pytest.skip("the engine refuses this question")
    terms = _terms_of(rec)
    assert all(isinstance(t, Term) for t in terms)
    assert all(t.formula for t in terms)
    for w in _trial_workloads(q)[:6]:
        try:
            shown = estimate(w)
        except ValueError:
            continue
        if shown.estimate is not None:
            assert all(isinstance(t, Term) for t in shown.estimate.terms)


def test_the_estimate_key_tells_apart_what_the_json_tells_apart() -> None:
    w = parse_query("训练 llama3-8b lora").workload
    assert w is not None
    same = w.model_copy()
    assert workload_key(same) == workload_key(w)
    changed = [
        w.model_copy(update={"num_gpus": 2}),
        w.model_copy(update={"chunked_loss": True}),
        w.model_copy(update={"seq_len": 1024}),
        w.model_copy(update={"batch_size": 1}),  # None -> 1
        w.model_copy(update={"lora_rank": True}),  # 1 and True: equal, not the same
        w.model_copy(update={"lora_rank": 1}),
    ]
    keys = [workload_key(c) for c in changed]
    assert len(set(keys)) == len(keys) and workload_key(w) not in keys
    jsons = {c.model_dump_json() for c in changed}
    assert w.model_dump_json() not in jsons


def _recommendations(n: int, seed: int) -> Iterator[tuple[str, Recommendation]]:
    """Generated questions that parse to a workload, with their recommendations."""
    for q in questions(n, seed=seed):
        parsed = parse_query(q)
        if parsed.workload is None:
            continue
        try:
            yield q, recommend_query(parsed)
        except ValueError:
            continue


def test_the_verdicts_fix_search_stops_where_the_answer_stops_reading() -> None:
    """`fixes_by_cost` with the search stopped at four same-card changes gives the list the
    full search (up to six) gives, for the setups the generated questions lead to."""
    from advisor.recommend.verdict import fixes_by_cost, four_on_the_same_cards

    compared = 0
    for q, rec in _recommendations(120, seed=1820):
        if rec.verdict is None or rec.verdict.state not in ("tight", "no_fit", "blocked"):
            continue
        gpu = catalog.gpus().get(rec.headline.gpu_id) if rec.headline else None
        if gpu is None:
            continue
        for state in ("tight", "no_fit"):
            stopped = fixes_by_cost(rec.setup, gpu, state)
            with patch("advisor.recommend.verdict.four_on_the_same_cards", lambda found: False):
                full = fixes_by_cost(rec.setup, gpu, state)
            assert stopped == full, q
            compared += 1
        assert four_on_the_same_cards([]) is False
    assert compared > 20


def test_a_cards_table_of_what_it_lacks_says_what_checking_each_row_says() -> None:
    from advisor.constraints import (
        Requirement,
        _card_has,
        _missing,
        advisories_table,
        requirements,
    )

    rows = [*requirements(), *advisories_table()]
    # a row built elsewhere (not the catalog's): checked on the card itself
    other = Requirement(id="test_needs_cc9", min_cc=9.0, source="test", read_date="2026-12-01")
    lacking = 0
    for gpu in catalog.gpus().values():
        expected = [r.id for r in [*rows, other] if not _card_has(r, gpu)]
        assert _missing([*rows, other], gpu) == expected, gpu.id
        lacking += len(expected)
    assert lacking > 50


@pytest.mark.parametrize("q", questions(20, seed=1830))
def test_a_workloads_copy_is_the_one_pydantic_makes(q: str) -> None:
    """Workload.model_copy writes out the shallow copy with an update: the same values in
    the same field order, the same fields set, no extra fields, no private attributes."""
    from pydantic import BaseModel

    compared = 0
    for w in _trial_workloads(q):
        for update in ({"num_gpus": 4}, {"lora_targets": "all-linear", "seq_len": 512}, {}):
            ours, theirs = w.model_copy(update=update), BaseModel.model_copy(w, update=update)
            assert list(ours.__dict__.items()) == list(theirs.__dict__.items())
            assert ours.model_fields_set == theirs.model_fields_set
            assert ours.__pydantic_extra__ is None and theirs.__pydantic_extra__ is None
            assert ours.__pydantic_private__ is None and theirs.__pydantic_private__ is None
            assert ours.model_dump_json() == theirs.model_dump_json()
            assert ours.__dict__ is not w.__dict__
            compared += 1
    assert compared >= 3


def test_recommendations_built_without_validation_are_what_validation_builds() -> None:
    """recommend._answer constructs its Recommendation from values of the field types:
    validating the same arguments gives an equal model, the same fields set and the same
    JSON (budgets given as whole numbers among the questions: "¥3/h")."""
    seen = budgets = 0
    for _, rec in _recommendations(120, seed=1833):
        given = {k: getattr(rec, k) for k in rec.model_fields_set}
        validated = Recommendation(**given)
        assert validated == rec and validated.model_fields_set == rec.model_fields_set
        assert validated.model_dump_json() == rec.model_dump_json()
        seen += 1
        budgets += rec.budget_per_hour is not None or rec.budget_total is not None
    assert seen > 80 and budgets > 0, (seen, budgets)
    # a caller's whole-number budget is stored as validation stores it, a float
    w = parse_query("qwen2.5-14b lora").workload
    assert w is not None
    rec = recommend(w, budget_per_hour=3, budget_total=50)
    validated = Recommendation(**{k: getattr(rec, k) for k in rec.model_fields_set})
    assert validated.model_dump_json() == rec.model_dump_json()
    assert type(rec.budget_per_hour) is type(validated.budget_per_hour) is float
    assert type(rec.budget_total) is float


def test_pitfalls_built_without_validation_are_what_validation_builds() -> None:
    """pitfalls.pitfall.pitfall constructs each Pitfall from values of the field types: validating the
    same arguments gives an equal model with the same fields set."""
    from advisor.pitfalls import Pitfall

    seen = 0
    for _, rec in _recommendations(80, seed=1831):
        notes = [n for o in (rec.cheapest, rec.best_value, rec.named) if o for n in o.notes]
        for p in [*rec.pitfalls, *notes]:
            given = {k: getattr(p, k) for k in p.model_fields_set}
            validated = Pitfall(**given)
            assert validated == p and validated.model_fields_set == p.model_fields_set
            assert validated.model_dump_json() == p.model_dump_json()
            seen += 1
    assert seen > 200


@pytest.mark.parametrize("q", questions(40, seed=1832))
def test_no_cheap_fix_comes_after_the_settings(q: str) -> None:
    """CheapFixes lists the setting fixes alone: every CHEAP candidate is among them, and
    the candidate list is the settings followed by the costlier fixes."""
    from advisor.recommend.fix_candidates import CHEAP, costlier_fixes, setting_fixes

    w = parse_query(q).workload
    assert w is not None
    for count in (1, 2, 4):
        result = estimate(workload_for(w, count))
        if result.estimate is None:
            continue
        costlier = [code for code, _ in costlier_fixes(result)]
        assert not [c for c in costlier if c.partition(":")[0] in CHEAP], costlier
        settings = [code for code, _ in setting_fixes(result)]
        assert [code for code, _ in candidate_fixes(result)] == settings + costlier


def _over_budget_changes() -> Iterator[tuple[str, str, object, float | None, float | None]]:
    """(question, currency, a budget fix's changed workload, per hour, total) for every
    budget fix a recommendation tries: the generated questions with a budget that no pick
    meets as asked."""
    from advisor.recommend.answer import search_cards
    from advisor.recommend.budget_fixes import budget_fixes
    from advisor.recommend.search import Setups

    for q in wizard_questions(200) + questions(400, seed=1919):
        parsed = parse_query(q)
        b = parsed.budget
        if parsed.workload is None or b is None or parsed.gpu_id or parsed.vram_gib:
            continue
        per_hour, total = (b.amount, None) if b.per_hour else (None, b.amount)
        base = Setups(parsed.workload)
        if base.base.estimate is None:
            continue
        if not search_cards(base, None, b.currency, None, per_hour, total).over_budget:
            continue
        for _, changed in budget_fixes(base.base):
            yield q, b.currency, changed, per_hour, total


def test_a_budget_fix_left_unsearched_is_one_whose_search_ends_over_budget() -> None:
    """recommend skips the search of a budget fix's changed job when `may_meet_budget`
    says no card at any count could be a pick within the budget: the search must then end
    over budget (the fix would not have been taken). Both outcomes occur here."""
    from advisor.recommend.answer import search_cards
    from advisor.recommend.pricing import card_prices
    from advisor.recommend.search import Setups, may_meet_budget

    said = {True: 0, False: 0}
    for q, currency, changed, per_hour, total in _over_budget_changes():
        setups = Setups(changed)  # type: ignore[arg-type]
        may = may_meet_budget(setups, card_prices(None, currency, None), per_hour, total)
        said[may] += 1
        if not may:
            found = search_cards(Setups(changed), None, currency, None, per_hour, total)  # type: ignore[arg-type]
            assert found.over_budget, q
    assert said[False] >= 5 and said[True] >= 5, said


def _within_a_week_plain(setups, gpu, opt, price):  # type: ignore[no-untyped-def]
    """The search's week rule as it was written: an option built at every count tried."""
    from advisor.constraints import speed_constants
    from advisor.recommend.card_counts import COUNTS
    from advisor.recommend.rank import option

    limit = speed_constants()["max_job_hours"]
    if opt.train_hours is None or opt.train_hours <= limit or opt.count >= 8:
        return opt
    for count in (c for c in COUNTS if opt.count < c <= 8):
        more = option(setups.at(count), gpu, count, price, blocked=[])
        if not more.fits:
            return opt
        opt = more
        if more.train_hours is not None and more.train_hours <= limit:
            break
    return opt


def test_the_week_rule_keeps_the_option_building_each_count_keeps() -> None:
    """search._InAWeek reads each count's fit and hours and builds only the option kept:
    on every card that fits, the option it keeps is the one the plain rule keeps, for the
    generated questions that name how many tokens to train on."""
    from advisor.constraints import speed_constants
    from advisor.recommend.pricing import card_prices
    from advisor.recommend.rank import option
    from advisor.recommend.search import Setups, _InAWeek, rentable_cards

    prices = card_prices(None, "CNY", None)
    limit = speed_constants()["max_job_hours"]
    checked = moved = 0
    for q in [q for q in wizard_questions(200) if " tokens" in q]:
        w = parse_query(q).workload
        assert w is not None
        setups = Setups(w)
        week = _InAWeek(setups, prices, limit)
        for count in (1, 2, 4):
            for card in rentable_cards():
                gpu, price = card.gpu, prices[card.gpu.id]
                start = option(setups.at(count), gpu, count, price, blocked=[])
                if not start.fits or start.train_hours is None or start.train_hours <= limit:
                    continue
                want = _within_a_week_plain(setups, gpu, start, price)
                got = week.option(card, week.count_for(card, count))
                assert got == want, (q, count, gpu.id)
                checked += 1
                moved += want.count != count
    assert checked >= 50 and moved >= 20, (checked, moved)
