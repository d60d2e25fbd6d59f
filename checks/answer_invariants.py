"""An answer never contradicts itself: invariants checked over a recommendation AND the text
rendered from it (tests/test_answer_invariants.py runs them over generated questions).

Each check returns problems as (rule, detail). The rules, written apart from the engine
(nothing here calls the engine's own verdict or guide logic to judge it):

- headline_figure: the headline's per-card figure is the estimate its terms, band and the
  picks for the same setup show, and the one the verdict is judged against.
- pick_vs_warning: no pick (rental, or a lab's own machine chosen) is a card that a ⛔ line of
  the same answer, or a hardware fact below, says cannot run the job.
- fits_verdict: ✅ / ⚠️ tight / ❌ agree with figure vs usable memory and the 20% headroom.
- guide_direction: the guide line quoted holds the headline figure and count.
- count_priced: the count shown is the count priced (card price × count).
- cost: a whole-job cost is the hourly rate × the hours shown.
- assumptions: the runtime, format, context and batch stated are those the figure used.
- band: the range shown brackets the figure.
- budget: picks within the budget asked, or the answer (and the inline article) says none is.
- grid: the "can my card run it?" grid never judges a narrower format worse than a wider one
  at the same length, nor a longer length better than a shorter one in the same format, and
  its cell for the asked format and length is the verdict's.
- headroom_policy: a recommended pick has 20% of each card free as it stands, or its own
  lines name the change that brings it to 20% ("✅ Fits with <change> → X GiB (N% …)").
- headline_vs_fix: no "does not fit" headline above a change that makes it fit; the change
  is said to make it fit, in both languages (answer, inline article, first reply).
- short_reply: the first reply (and the inline article) is at most 900 visible characters,
  in the reader's language.
- headroom_said: every headroom share the answer states of the headline setup (the verdict,
  the "Watch out" line) is one number, in both languages, and "below the guide's 20%" is
  never said of 20% or more.
"""

from __future__ import annotations

import re

from advisor import catalog
from advisor.catalog import GpuSpec
from advisor.models import Kind, Mode, Runtime
from advisor.recommend import Recommendation
from advisor.recommend.fix_candidates import VLLM_FLAG_CODES
from advisor.recommend.owned import OwnedAnswer
from advisor.recommend.pricing import card_prices
from advisor.render import gib, label, render
from checks.figures import figures_disagree

HEADROOM = 0.20  # the guide's "VRAM misestimate" rule, restated here on purpose
MIN_FREE = 0.01  # under 1% free is shown as "0% headroom": not a card that runs the job
Problem = tuple[str, str]

# Hardware facts from vendor and project docs, restated apart from capabilities.toml:
# (what the job uses, the card it cannot run on).
SERVING = (Runtime.vllm, Runtime.sglang, Runtime.tgi)


def hardware_conflicts(rec: Recommendation, gpu: GpuSpec) -> list[str]:
    """What the job asks that this card cannot do, by facts written here: vLLM/SGLang on
    anything older than Volta or off CUDA/ROCm, AWQ kernels on Volta, FP8 W8A8 without FP8
    tensor cores, fp8 checkpoints in a serving engine before Ampere, bf16 training named on
    a card without bf16, FlashAttention-2 before Ampere, FP4 before Blackwell."""
    s = rec.setup or rec.result
    w = s.workload
    fmt = w.weights_format or ""
    out = []
    if gpu.vendor != "NVIDIA" and gpu.architecture == "?":
        return out  # a card known by its memory only
    runtime = w.runtime or (s.estimate.runtime if s.estimate else None)  # asked, else assumed
    serving = runtime in SERVING
    if serving and gpu.vendor == "NVIDIA" and gpu.cc < 7.0:
        out.append("serving engine before Volta")
    if serving and gpu.vendor not in ("NVIDIA", "AMD"):
        out.append("serving engine off CUDA/ROCm")
    if serving and fmt == "awq-4bit" and gpu.vendor == "NVIDIA" and gpu.cc < 7.5:
        out.append("AWQ in a serving engine on Volta")
    if fmt == "fp8-w8a8" and not gpu.fp8_supported:
        out.append("FP8 W8A8 without FP8 tensor cores")
    if serving and fmt == "fp8" and gpu.vendor == "NVIDIA" and gpu.cc < 8.0:
        out.append("fp8 checkpoint in a serving engine before Ampere")
    if fmt == "nvfp4" and gpu.cc < 10.0:
        out.append("FP4 before Blackwell")
    if w.mode.is_training and w.compute_dtype == "bf16" and not gpu.bf16_supported:
        out.append("bf16 training without bf16")
    attention = getattr(w, "attention", None)
    if attention is not None and attention.value == "flash" and gpu.cc < 8.0:
        out.append("FlashAttention-2 before Ampere")
    if fmt in ("nf4", "nf4-dq", "fp4") and gpu.vendor != "NVIDIA":
        out.append("bitsandbytes off CUDA")
    return out


def picks(rec: Recommendation) -> list:
    return [o for o in (rec.cheapest, rec.best_value, rec.fastest) if o is not None]


def _state(o) -> str:  # noqa: ANN001
    if o.blocked:
        return "blocked"
    if o.per_gpu_bytes > o.usable_bytes * (1 - MIN_FREE):
        return "no_fit"
    return "tight" if o.per_gpu_bytes > o.usable_bytes * (1 - HEADROOM) else "fits"


def check_structure(parsed, rec: Recommendation) -> list[Problem]:  # noqa: ANN001
    """What the recommendation itself says."""
    out: list[Problem] = []
    h, e = rec.headline, (rec.setup or rec.result).estimate
    if h is not None and e is not None:
        if h.per_gpu_bytes != e.total_bytes:
            out.append(("headline_figure", f"headline {h.per_gpu_bytes} vs terms {e.total_bytes}"))
        if not e.low_bytes <= e.total_bytes <= e.high_bytes:
            out.append(("band", f"{e.low_bytes}..{e.high_bytes} vs {e.total_bytes}"))
        v = rec.verdict
        if v is not None and v.state == "split":
            if h.fits or _state(h) not in ("fits", "tight"):
                out.append(("fits_verdict", f"split verdict beside fits={h.fits}, {_state(h)}"))
        elif v is not None and v.state != "blocked" and v.state != _state(h):
            out.append(("fits_verdict", f"verdict {v.state}, figure says {_state(h)}"))
        if v is not None and v.state != "blocked":
            shown = 1 - h.per_gpu_bytes / h.usable_bytes
            if abs(shown - v.headroom_fraction) > 0.0051:
                out.append(("fits_verdict", f"headroom {v.headroom_fraction} vs {shown:.3f}"))
    for o in picks(rec):
        gpu = catalog.gpus()[o.gpu_id]
        if o.blocked or any(p.severity == "error" for p in o.notes):
            out.append(("pick_vs_warning", f"pick {o.gpu_id} blocked {o.blocked}"))
        for p in rec.pitfalls:
            about = p.params.get("gpu") == gpu.name  # at this count, when it names one
            if (
                p.severity == "error"
                and about
                and p.params.get("count", str(o.count)) == str(o.count)
            ):
                out.append(("pick_vs_warning", f"pick {o.gpu_id} beside ⛔ {p.code}"))
        for fact in hardware_conflicts(rec, gpu):
            out.append(("pick_vs_warning", f"pick {o.gpu_id}: {fact}"))
        if not o.fits or _state(o) == "no_fit":
            out.append(("fits_verdict", f"pick {o.gpu_id} does not fit"))
        if o.fits != (o.per_gpu_bytes <= o.usable_bytes * (1 - MIN_FREE)) and o.count == 1:
            out.append(("fits_verdict", f"pick {o.gpu_id} fits={o.fits}"))
        if o.risky != (_state(o) == "tight"):
            out.append(("fits_verdict", f"pick {o.gpu_id} risky={o.risky} vs {_state(o)}"))
        out += _priced(rec, o)
    if rec.named is not None and rec.verdict is not None and rec.verdict.state != "blocked":
        for fact in hardware_conflicts(rec, catalog.gpus().get(rec.named.gpu_id) or _mem_card()):
            out.append(("pick_vs_warning", f"named {rec.named.gpu_id} judged runnable: {fact}"))
    out += _guide(rec)
    out += _grid(rec)
    out += _budget(parsed, rec)
    out += _pitfalls_agree(rec)
    return out


def _pitfalls_agree(rec: Recommendation) -> list[Problem]:
    """The "Watch out" list says of the headline setup what its verdict says."""
    h, v = rec.headline, rec.verdict
    if h is None or v is None:
        return []
    out: list[Problem] = []
    for p in rec.pitfalls:
        same = p.params.get("gpu") == h.gpu_name and p.params.get("count") == str(h.count)
        if p.code == "oom" and same and v.state in ("fits", "tight", "split"):
            out.append(("fits_verdict", f"⛔ not enough VRAM beside a {v.state} verdict"))
        if p.code == "tight_headroom" and v.state == "fits":
            out.append(("fits_verdict", "a tight-headroom warning beside ✅ fits"))
    one_card = [o for o in picks(rec) if o.count == 1 and o.fits and not o.blocked]
    for p in rec.pitfalls:
        if p.code == "full_finetune_multi_gpu" and one_card:
            out.append(("claim_vs_pick", f"'does not fit one card' beside 1× {one_card[0].gpu_id}"))
    return out


_ZERO_RUNS = {
    "en": re.compile(r"(✅ Fits|Runs, tight)[^\n]*?\(0% headroom"),
    "zh": re.compile(r"(✅ 装得下|能跑，但偏紧)[^\n]*?余量 0%"),
}
_BAND_OVER = {
    "en": re.compile(r"above the estimate, about ([\d.]+ GiB), more than the ([\d.]+ GiB) usable"),
    "zh": re.compile(r"实测最多比估算高 \d+%，即约 ([\d.]+ GiB)，超过可用的 ([\d.]+ GiB)"),
}


def contradictions(text: str, lang: str) -> list[Problem]:
    """What one rendered answer says against itself: a card "runs" or "fits" with 0%
    headroom; a measured high end said to exceed the usable memory while the two figures
    shown are the same."""
    out: list[Problem] = []
    for m in _ZERO_RUNS[lang].finditer(text):
        out.append(("zero_headroom_runs", m.group(0)[:80]))
    for m in _BAND_OVER[lang].finditer(text):
        if m.group(1) == m.group(2):
            out.append(("band_over_equal", m.group(0)))
    return out


_STATE_RANK = {"ok": 0, "tight": 1, "no": 2}  # split / unsupported / beyond: not ordered


def _bits(fmt: str) -> float:
    spec = catalog.find_format(fmt)
    return spec.bits if spec is not None else 16.0


def _scope(fmt: str) -> str:
    """What a format's bits cover: "all" (GGUF, bf16) or "linear" (fp8, AWQ: embeddings and
    lm_head stay 16-bit), so nominal bits order formats only within one scope."""
    spec = catalog.find_format(fmt)
    return spec.scope if spec is not None else "all"


def _grid(rec: Recommendation) -> list[Problem]:
    """Fewer bits never need more memory, a longer length never less: a cell worse than a
    wider format's at the same length (INT4 128k ⚠️ beside FP8 128k ✅), or better than a
    shorter length's in its row, judges a different job than its neighbours."""
    cells = [c for c in rec.grid if c.state in _STATE_RANK]
    # A 4-bit base can train with more memory than a 16-bit one: bitsandbytes' 4-bit layers
    # (before 0.43.2) keep their input for backward. Only inference is ordered by width.
    by_width = not (rec.setup or rec.result).workload.mode.is_training
    out: list[Problem] = []
    for a in cells:
        for b in cells:
            worse = _STATE_RANK[a.state] > _STATE_RANK[b.state]
            if (
                by_width
                and a.context_tokens == b.context_tokens
                and _bits(a.format) < _bits(b.format)
                and _scope(a.format) == _scope(b.format)
                and worse
            ):
                out.append(
                    ("grid", f"{a.format} {a.context_tokens} {a.state} vs {b.format} {b.state}")
                )
            if a.format == b.format and a.context_tokens < b.context_tokens and worse:
                out.append(
                    (
                        "grid",
                        f"{a.format} {a.context_tokens} {a.state} vs {b.context_tokens} {b.state}",
                    )
                )
    out += _grid_asked_cell(rec)
    return out


def _grid_asked_cell(rec: Recommendation) -> list[Problem]:
    """The cell of the asked format at the asked length is the verdict above it."""
    s, v = rec.setup or rec.result, rec.verdict
    if not rec.grid or v is None or s.estimate is None or rec.recipe or rec.budget_fix:
        return []
    w = s.workload
    assumed = {a.field: a.value for a in s.assumed}
    field = "seq_len" if w.mode.is_training else "context_tokens"
    length = getattr(w, field) or assumed.get(field)
    fmt = w.weights_format or assumed.get("weights_format")
    want = {"fits": "ok", "tight": "tight", "no_fit": "no", "split": "split"}.get(v.state)
    # the grid judges a vLLM cell that runs only with the lean flag set as ⚠️ (grid.py),
    # where the verdict above says "does not fit as asked; fits with these flags"
    fixes = [v.fix] if v.fix else []
    lean = any(f.partition(":")[0] in VLLM_FLAG_CODES for f in fixes + list(rec.fixes))
    accepted = {"ok", "tight"} if lean else {want}
    shown = {c.format for c in rec.grid} | (
        {"bf16"} if "fp16" in {c.format for c in rec.grid} else set()
    )
    if fmt and w.mode not in (Mode.full, Mode.pretrain) and str(fmt) not in shown:
        return [("grid", f"the answer's {fmt} has no row in {sorted(shown)}")]
    for c in rec.grid:
        same_fmt = c.format == fmt or (c.format == "fp16" and fmt == "bf16")
        warned = "beyond_model_context" in {p.code for p in rec.pitfalls}
        if c.state == "beyond" and warned:
            continue  # the answer says the asked length is past the model's window
        if (
            same_fmt
            and length
            and c.context_tokens == int(length)
            and want
            and c.state not in accepted
        ):
            return [("grid", f"cell {c.format} {c.context_tokens} {c.state} vs verdict {v.state}")]
    return []


def _budget(parsed, rec: Recommendation) -> list[Problem]:  # noqa: ANN001
    """Picks within the budget asked, unless the answer says nothing runs within it."""
    if rec.over_budget or parsed.budget is None:
        return []
    out: list[Problem] = []
    for o in picks(rec):
        p = o.price_per_hour
        if rec.budget_per_hour is not None and p is not None and p.amount > rec.budget_per_hour:
            out.append(("budget", f"{o.gpu_id} at {p.amount}/h over {rec.budget_per_hour}/h"))
        total = rec.budget_total
        if total is not None and o.job_cost is not None and o.job_cost > total + 0.01:
            out.append(("budget", f"{o.gpu_id}: job {o.job_cost} over {total}"))
    return out


def _mem_card() -> GpuSpec:
    return GpuSpec(
        id="?",
        name="?",
        vendor="?",
        segment="?",
        architecture="?",
        vram_gb=1,
        usable_vram_gib=1,
        memory_bandwidth_gbs=0,
        spec_confidence="unknown",
        spec_read_date="-",
    )


def _priced(rec: Recommendation, o) -> list[Problem]:  # noqa: ANN001
    out: list[Problem] = []
    p = o.price_per_hour
    if p is None:
        return [("count_priced", f"pick {o.gpu_id} has no price")]
    card = card_prices(None, rec.currency, rec.region).get(o.gpu_id)
    if card is None or card.platform != p.platform:
        out.append(("count_priced", f"{o.gpu_id}: priced on {p.platform}, listed elsewhere"))
    elif abs(card.amount * o.count - p.amount) > 0.011 * o.count:
        out.append(("count_priced", f"{o.count}× {o.gpu_id}: {p.amount} vs {card.amount}"))
    job = o.job_cost
    if job is not None and o.train_hours is not None and not _near(job, p.amount * o.train_hours):
        out.append(("cost", f"{o.gpu_id}: {job} vs {p.amount}×{o.train_hours}"))
    return out


def _near(shown: float, computed: float) -> bool:
    """Equal as rounded to the cent (and a tenth of a percent for large sums)."""
    return abs(shown - computed) <= 0.011 + 0.001 * abs(computed)


def _guide(rec: Recommendation) -> list[Problem]:
    task, h = rec.guide_task, rec.headline
    if task is None or h is None:
        return []
    lo, _, hi = task.cards.partition("-")
    if not int(lo) <= h.count <= int(hi or lo):
        return [("guide_direction", f"guide {task.id} cards {task.cards} vs {h.count}")]
    if (rec.setup or rec.result).estimate is None:
        return []
    gb = h.per_gpu_bytes / 1e9
    if not task.vram_gb[0] / 2 <= gb <= task.vram_gb[1]:
        return [("guide_direction", f"guide {task.id} {task.vram_gb} GB vs {gb:.1f} GB")]
    return []


# --- the English text -----------------------------------------------------------------------

_HEAD = re.compile(r"^(\d+)× (.+?) \(.*?\): VRAM per card ~([\d.]+ GiB) of ([\d.]+ GiB) usable")
_RANGE = re.compile(r"^range ([\d.]+) GiB–([\d.]+) GiB, confidence")
_FITS = re.compile(r"^✅ Fits \((\d+)% headroom")
_TIGHT = re.compile(r"^⚠️ Runs, tight \((\d+)% headroom")
_NOFIT = re.compile(r"^❌ Does not fit \(([\d.]+ GiB) needed per card, ([\d.]+ GiB) usable\)")
_PICK = re.compile(r"^• (\d+)× (.+?) — (?:[¥$]([\d,.]+)/h)?(?:.*?; ~[¥$]([\d,.]+)/h at )?")
_PICK_FIGURE = re.compile(r"^  ([\d.]+ GiB) per card of ([\d.]+ GiB)")
# "$0.96/h (all 8 cards, $0.12/h each; …)": the total and one card's rate agree.
_EACH = re.compile(r"— [¥$]([\d,.]+)/h \((?:both|all (\d+)) cards, [¥$]([\d,.]+)/h each; ")
_JOB = re.compile(r"; ~([\d,.]+) h(?: \(~\d+ days\))?, whole job ~[¥$]([\d,.]+)")


def _num(shown: str) -> tuple[float, float]:
    """A figure as shown ("20.8", "32,544") and half a unit of its last digit: money is
    shown to three significant digits or whole units (render.figure), so a product of
    shown figures is checked within what their rounding allows."""
    value = float(shown.replace(",", ""))
    return value, 0.5 * 10 ** -len(shown.partition(".")[2])


_ASSUMED = re.compile(r"^Assumed: (.*) — tell me if not\.$")


def _g(text: str) -> float:
    return float(text.split()[0])


def check_english(rec: Recommendation, text: str) -> list[Problem]:
    """The rendered English answer: headline, band, verdict, each pick and its lines."""
    out: list[Problem] = []
    lines = text.splitlines()
    head = None
    for i, line in enumerate(lines):
        if m := _HEAD.match(line):
            head = m
            h = rec.headline
            if h is not None and m.group(3) != gib(h.per_gpu_bytes):
                out.append(("headline_figure", f"shown {m.group(3)} vs {gib(h.per_gpu_bytes)}"))
            verdict = lines[i + 1] if i + 1 < len(lines) else ""
            if verdict[:1] in "❌⛔" and re.search(r"tok/s|; ~[\d.,]+ h\b", line):
                out.append(("fits_verdict", f"a speed or time beside {verdict[:30]}"))
        elif head is not None and (_RANGE.match(line) or line[:1] in "✅⚠❌"):
            out += _beside_head(head, line)
        elif m := _PICK.match(line):
            out += _pick_lines(m, lines[i + 1 : i + 8], head)
    for line in lines:  # a ⛔ line naming a card that is a pick (at the pick's count)
        if line.startswith("⛔"):
            out += _warned_picks(rec, line)
    out += _assumed_in_text(rec, lines)
    out += [("fits_verdict", d) for d in figures_disagree(text)]
    out += headroom_said(text, "en")
    return out


# The headline verdict's share and the "Watch out" line's, in each language.
_SAID = {
    "en": (
        re.compile(r"^⚠️ Runs, tight \((\d+)% headroom", re.M),
        re.compile(r"^⚠️ Runs, tight: only (\d+)% headroom, below the guide's 20%", re.M),
    ),
    "zh": (
        re.compile(r"^⚠️ 能跑，但偏紧（余量 (\d+)%", re.M),
        re.compile(r"^⚠️ 能跑，但偏紧：余量只有 (\d+)%，低于指南建议的 20%", re.M),
    ),
}


def headroom_said(text: str, lang: str) -> list[Problem]:
    """One answer states one headroom for its headline setup ("19% headroom" above, "only
    20% headroom, below the guide's 20%" below was the same 19.6%)."""
    verdict, warning = _SAID[lang]
    v, w = verdict.search(text), warning.search(text)
    out: list[Problem] = []
    if w and int(w.group(1)) >= 20:
        out.append(("headroom_said", f"{lang}: {w.group(0)}"))
    if v and w and v.group(1) != w.group(1):
        out.append(("headroom_said", f"{lang}: verdict {v.group(1)}% vs warning {w.group(1)}%"))
    return out


def _beside_head(head: re.Match, line: str) -> list[Problem]:
    """The band and the verdict under the headline agree with its figure."""
    need, usable = _g(head.group(3)), _g(head.group(4))
    if m := _RANGE.match(line):
        if not float(m.group(1)) <= need <= float(m.group(2)):
            return [("band", f"range {m.group(1)}–{m.group(2)} vs {head.group(3)}")]
        return []
    out: list[Problem] = []
    if m := _FITS.match(line) or _TIGHT.match(line):
        comfortable = line.startswith("✅")
        if need > usable or (comfortable and need > usable * (1 - HEADROOM) + 0.1):
            out.append(("fits_verdict", f"{line[:40]} beside {need} of {usable}"))
        if abs(int(m.group(1)) - (1 - need / usable) * 100) > 1.5:
            out.append(("fits_verdict", f"{m.group(1)}% beside {need} of {usable}"))
    elif (m := _NOFIT.match(line)) and (_g(m.group(1)) <= usable or m.group(1) != head.group(3)):
        out.append(("fits_verdict", f"{line[:60]} beside {need} of {usable}"))
    return out


def _pick_lines(m: re.Match, after: list[str], head: re.Match | None) -> list[Problem]:
    """One pick: its figure fits its card, matches the headline for the same setup, no ⛔
    under it, and its whole-job cost is its rate × the hours shown."""
    out: list[Problem] = []
    count, name = m.group(1), m.group(2)
    block = after[: next((k for k, b in enumerate(after) if not b.startswith("  ")), len(after))]
    figure = _PICK_FIGURE.match(block[0]) if block else None
    if figure and _g(figure.group(1)) > _g(figure.group(2)):
        out.append(("fits_verdict", f"pick {name}: {figure.group(0)}"))
    same = head is not None and (count, name) == head.group(1, 2)
    if same and figure and figure.group(1) != head.group(3):
        out.append(("headline_figure", f"{name}: {figure.group(1)} vs the headline"))
    shown_rate = m.group(4) or m.group(3)  # converted: the answer's own currency
    if each := _EACH.search(m.string):
        (total, st), n, (one, so) = (
            _num(each.group(1)),
            int(each.group(2) or 2),
            _num(each.group(3)),
        )
        if n != int(count) or abs(one * n - total) > so * n + st + 0.01:
            out.append(("cost", f"{name}: {count}× at {one}/h each vs {total}/h in all"))
    elif int(count) > 1 and m.group(3):
        out.append(("cost", f"{name}: {count} cards priced without saying it is all of them"))
    out += _pick_policy(name, figure, block)
    for b in block:
        if b.strip().startswith("⛔"):
            out.append(("pick_vs_warning", f"pick {name}: {b.strip()[:80]}"))
        if (j := _JOB.search(b)) and shown_rate:
            out += _job_cost(name, shown_rate, j.group(1), j.group(2))
    return out


# "⚠️ Fits by the estimate (N% headroom), but may not fit: measured setups like this ran
# up to N% above the estimate, about X": a fit by the estimate with the band's high end over the card, said beside it.
_PICK_FITS = re.compile(r"^  (?:✅ Fits|⚠️ Fits by the estimate) \((\d+)% headroom\)")
_PICK_FITS_WITH = re.compile(r"^  ✅ Fits with .+ → ([\d.]+ GiB) per card \((\d+)% headroom; as is")


def _pick_policy(name: str, figure: re.Match | None, block: list[str]) -> list[Problem]:
    """A recommended pick keeps the guide's 20% as it stands ("✅ Fits (N% headroom)", N ≥ 20)
    or names, in its own lines, the change that brings it there ("✅ Fits with <change> →
    X GiB per card (N% headroom …", N ≥ 20). Under the "keep at least 20% free" heading,
    "⚠️ Tight as is (3% headroom)" was a recommendation that broke the rule it stood under."""
    if figure is None:
        return []
    need, usable = _g(figure.group(1)), _g(figure.group(2))
    fits = next((m for b in block if (m := _PICK_FITS.match(b))), None)
    fixed = next((m for b in block if (m := _PICK_FITS_WITH.match(b))), None)
    if any(b.startswith("  ⚠️ Runs, tight") for b in block):
        return [("headroom_policy", f"pick {name} recommended while tight")]
    if fixed is not None:
        after = _g(fixed.group(1))
        if int(fixed.group(2)) < 20 or after > usable * (1 - HEADROOM) + 0.05:
            return [("headroom_policy", f"pick {name}: its change leaves {fixed.group(0)[:90]}")]
        return []
    if fits is None:
        return [("headroom_policy", f"pick {name}: no verdict in its lines")]
    if int(fits.group(1)) < 20 or need > usable * (1 - HEADROOM) + 0.05:
        return [("headroom_policy", f"pick {name}: {need} of {usable} recommended as it stands")]
    return []


def headline_vs_fix(rec: Recommendation, text: str, lang: str) -> list[Problem]:
    """Never "does not fit" above a change that makes it fit: when the headline setup has a
    change that fits (the verdict's fix), the headline says "fits with <change>"."""
    v = rec.verdict
    if v is None or v.state not in ("no_fit", "split"):
        return []
    no = ("❌ Does not", "❌ 装不下", "❌ 这个卡数")
    said_no = [line for line in text.splitlines() if line.startswith(no)]
    fits_with = {"en": ("Fits with", "Runs, tight, with"), "zh": ("就装得下", "能跑但偏紧")}[lang]
    if v.fix and said_no:
        return [("headline_vs_fix", f"{lang}: {said_no[0][:60]} above the change {v.fix}")]
    if v.fix and not any(w in text for w in fits_with):
        return [("headline_vs_fix", f"{lang}: the change {v.fix} is not said to make it fit")]
    return []


def check_policy(rec: Recommendation) -> list[Problem]:
    """The headroom policy on the recommendation itself: each pick has 20% free as it
    stands, or a change (`fix`) whose figure (`fixed_bytes`) leaves 20%."""
    out: list[Problem] = []
    for o in picks(rec):
        if o.per_gpu_bytes <= o.usable_bytes * (1 - HEADROOM):
            continue
        if o.fix is None or o.fixed_bytes is None:
            out.append(("headroom_policy", f"pick {o.gpu_id}: {o.headroom_fraction} and no change"))
        elif o.fixed_bytes > o.usable_bytes * (1 - HEADROOM):
            out.append(("headroom_policy", f"pick {o.gpu_id}: {o.fix} leaves under 20%"))
    return out


SHORT_LIMIT = 900  # visible characters of a first reply (docs/answers.md)


def check_short(rec: Recommendation, text: str, lang: str) -> list[Problem]:
    """The first reply: at most SHORT_LIMIT visible characters, in the reader's language, and
    its verdict kept to the headroom policy (`headline_vs_fix`)."""
    from bot.replies import visible_len

    out = headline_vs_fix(rec, text, lang)
    if (n := visible_len(text)) > SHORT_LIMIT:
        out.append(("short_reply", f"{lang}: {n} visible characters"))
    cjk = len(re.findall(r"[\u4e00-\u9fff]", text))
    if lang == "zh" and cjk < 4:
        out.append(("short_reply", "a Chinese first reply with no Chinese in it"))
    if lang == "en" and re.search(r"[\u4e00-\u9fff]{4}", re.sub(r"<b>.*?</b>|\(.*?\)", "", text)):
        out.append(("short_reply", "an English first reply in Chinese"))
    return out


def _job_cost(name: str, shown_rate: str, shown_hours: str, shown_cost: str) -> list[Problem]:
    (rate, sr), (hours, slack), (cost, sc) = _num(shown_rate), _num(shown_hours), _num(shown_cost)
    if hours == 0 and cost >= 0.01:
        return [("cost", f"{name}: 0 h shown beside a cost of {cost}")]
    low, high = (rate - sr) * (hours - slack) - sc, (rate + sr) * (hours + slack) + sc
    if not low - 0.01 <= cost <= high + 0.01:
        return [("cost", f"{name}: {rate}/h × {hours} h ≠ {cost}")]
    return []


def _warned_picks(rec: Recommendation, line: str) -> list[Problem]:
    named = _cards_named(line)
    out: list[Problem] = []
    for o in picks(rec):
        counted = re.search(rf"(\d+)× {re.escape(o.gpu_name)}", line)
        if o.gpu_name in named and (counted is None or int(counted.group(1)) == o.count):
            out.append(("pick_vs_warning", f"⛔ names pick {o.gpu_name}: {line[:80]}"))
    return out


def _cards_named(line: str) -> set[str]:
    """Catalog card names in a line, without one that is part of a longer one named there
    ("GeForce RTX 4090" inside "GeForce RTX 4090 Laptop GPU")."""
    found = {g.name for g in catalog.gpus().values() if g.name in line}
    return {n for n in found if not any(n != m and n in m for m in found)}


_CTX = re.compile(r"(?:context|sequences) (\d+k|\d+)\b")


def _assumed_in_text(rec: Recommendation, lines: list[str]) -> list[Problem]:
    """The context the header and "Assumed:" state is the one the figure used."""
    s = rec.setup or rec.result
    if s.estimate is None or rec.recipe:
        return []
    w = s.workload
    used = w.seq_len if w.mode.is_training else w.context_tokens
    assumed = {a.field: a.value for a in s.assumed}
    used = used or assumed.get("seq_len" if w.mode.is_training else "context_tokens")
    out: list[Problem] = []
    header = lines[0] if lines else ""
    if any(" video frames" in line for line in lines) and any("images/min" in x for x in lines):
        out.append(("assumptions", "an image rate beside the video frames it ignores"))
    if w.mode.is_training and any("context cut to" in line for line in lines):
        out.append(("assumptions", "a training run's fix names its sequences 'context'"))
    if used and (m := _CTX.search(header)):
        n = int(m.group(1)[:-1]) * 1024 if m.group(1).endswith("k") else int(m.group(1))
        if n != int(used):
            out.append(("assumptions", f"header context {m.group(1)} vs used {used}"))
    batch = w.batch_size or assumed.get("batch_size")
    if batch and (m := re.search(r" · batch (\d+)", header)) and int(m.group(1)) != int(batch):
        out.append(("assumptions", f"header batch {m.group(1)} vs used {batch}"))
    fmt = w.weights_format or assumed.get("weights_format")
    parts = header.split(" · ")
    if (
        fmt
        and len(parts) > 2
        and re.fullmatch(r"[\w.-]+", parts[2])
        and not re.match(r"(?:context|sequences|batch) ", parts[2])
    ):
        shown = parts[2]
        if shown != fmt and not (shown == "fp16" and fmt == "bf16"):
            out.append(("assumptions", f"header format {shown} vs used {fmt}"))
    runtime = (w.runtime.value if w.runtime else None) or assumed.get("runtime")
    h = rec.headline
    card = catalog.gpus().get(h.gpu_id) if h is not None else None
    no_bf16 = card is not None and card.vendor == "NVIDIA" and not card.bf16_supported
    for line in lines:
        # a change offered for a transformers run is one transformers has (its generate()
        # has no fp8 KV cache; "vLLM --kv-cache-dtype fp8" was offered as the fix)
        fix_line = "Fits with" in line or "Runs, tight" in line
        if runtime == "transformers" and fix_line and "vLLM --kv-cache-dtype" in line:
            out.append(("assumptions", f"a vLLM flag offered to a transformers run: {line[:60]}"))
        if no_bf16 and _ASSUMED.match(line) and re.search(r"\bin bf16\b", line):
            out.append(("assumptions", f"an assumed bf16 on {card.name}, which has none"))
        if m := _ASSUMED.match(line):
            said = m.group(1)
            word = label("en", f"value.{runtime}") if runtime else ""
            if runtime and "runtime: " in said and f"runtime: {word}" not in said:
                r = re.search(r"runtime: ([^;]+)", said)
                out.append(("assumptions", f"runtime {r.group(1) if r else '?'} vs {runtime}"))
    return out


_SMI_ANSWER = re.compile(r"nvidia-smi view ([\d.]+ GiB)")
_SMI_DETAILS = re.compile(
    r"Total (?:per card |\(nvidia-smi view\) )([\d.]+ GiB)(?:; nvidia-smi shows ([\d.]+ GiB))?"
)


def check_views(rec: Recommendation, answer: str, details: str) -> list[Problem]:
    """The answer and its details give one per-card figure and one nvidia-smi figure; the
    nvidia-smi view is never under the figure, and a larger one is explained."""
    a, d = _SMI_ANSWER.search(answer), _SMI_DETAILS.search(details)
    h = rec.headline
    if a is None or d is None:
        return []
    out: list[Problem] = []
    smi = d.group(2) or d.group(1)
    if a.group(1) != smi:
        out.append(("headline_figure", f"nvidia-smi {a.group(1)} in the answer, {smi} in details"))
    if h is not None and d.group(1) != gib(h.per_gpu_bytes):
        out.append(("headline_figure", f"details total {d.group(1)} vs {gib(h.per_gpu_bytes)}"))
    if _g(smi) < _g(d.group(1)):
        out.append(("headline_figure", f"nvidia-smi {smi} under the figure {d.group(1)}"))
    if d.group(2) and "pre-allocates" not in answer:
        out.append(("assumptions", "an engine's nvidia-smi share shown without saying why"))
    return out


_WEIGHTS_LINE = re.compile(
    r"^([\d.]+)B params (?:on the card \(.*?\) )?× ([\d.]+) bits \(([^)]+)\)"
    r"(?: \+ ([\d.]+)B kept in 16-bit \(.*?\))?(?: / (\d+) card\(s\))? = ([\d.]+) GiB$",
    re.M,
)


def weights_arithmetic(details: str) -> list[Problem]:
    """The details' weights line is arithmetic that holds: params × bits / 8 / cards is the
    GiB it shows ("14.77B params × 8.5 bits (q8_0) = 13.84 GiB" did not: llama.cpp keeps
    the token embedding in host RAM, and the line did not count it out)."""
    out: list[Problem] = []
    for m in _WEIGHTS_LINE.finditer(details):
        params, bits, kept = float(m[1]), float(m[2]), float(m[4] or 0)
        cards, shown = int(m[5] or 1), float(m[6])
        computed = (params * bits / 8 + kept * 2) * 1e9 / cards / 2**30
        if abs(computed - shown) > 0.02 * shown + 0.02:
            out.append(("headline_figure", f"{m[0]!r} computes {computed:.2f} GiB"))
    return out


def check_inline(rec: Recommendation, text: str) -> list[Problem]:
    """The inline article's figure and verdict are the full answer's."""
    out: list[Problem] = []
    h = rec.headline
    # its header names the length as the answer's does: a training run's "sequences 2k"
    # read "context 2k" here
    head = text.split("\n", 1)[0]
    training = (rec.setup or rec.result).workload.mode.is_training
    if re.search(r" · context \d" if training else r" · sequences \d", head):
        out.append(("assumptions", f"inline header {head!r} for a training={training} run"))
    m = re.search(r"VRAM per card ~([\d.]+ GiB) on (\d+)× ", text)
    if h is not None and m and m.group(1) != gib(h.per_gpu_bytes):
        out.append(("headline_figure", f"inline {m.group(1)} vs {gib(h.per_gpu_bytes)}"))
    if rec.verdict is not None and h is not None:
        marks = {
            "fits": "✅ Fits (",
            "fits_with": "✅ Fits with ",
            "tight": "⚠️ Runs, tight (",
            "tight_with": "⚠️ Runs, tight, with ",
            "no_fit": "❌ Does not fit",
            "blocked": "⛔",
            "split": "❌ Does not split",
        }
        if rec.verdict.measured_up_to_bytes and rec.verdict.state == "fits":
            marks["fits"] = "⚠️ Fits by the estimate ("
        if marks[rec.verdict.word] not in text:
            out.append(("fits_verdict", f"inline lacks the {rec.verdict.word} verdict"))
    pick = rec.cheapest
    if pick is not None and re.search(rf"⛔.*{re.escape(pick.gpu_name)}", text):
        out.append(("pick_vs_warning", f"inline top pick {pick.gpu_name} beside ⛔"))
    # a pick over the asked budget, or figures for a changed job, say so here as in the answer
    if pick is not None and rec.over_budget and "fits a budget of" not in text:
        out.append(("budget", "inline top pick over the budget, unsaid"))
    if rec.budget_fix and "as asked within your budget" not in text:
        out.append(("assumptions", f"inline figures for {rec.budget_fix}, unsaid"))
    if rec.recipe and rec.asked and rec.asked.estimate and "🔧" not in text:
        out.append(("assumptions", f"inline figures for the recipe {rec.recipe}, unsaid"))
    return out


def check_owned(rec: Recommendation, own: OwnedAnswer, text: str) -> list[Problem]:
    """A lab's machines: the one to use runs the job; every state agrees with its figure."""
    out: list[Problem] = []
    for f in own.machines:
        o, v = f.option, f.verdict
        gpu = catalog.gpus()[f.machine.gpu_id]
        if v.state not in ("blocked", "split") and v.state != _state(o):
            out.append(("fits_verdict", f"lab {f.machine.name}: {v.state} vs {_state(o)}"))
        if f.cards > f.machine.count:
            out.append(("count_priced", f"lab {f.machine.name}: {f.cards} of {f.machine.count}"))
        rate = f.machine.price_per_card_hour
        if (
            f.cost_per_hour is not None
            and rate is not None
            and not _near(f.cost_per_hour, rate * f.cards)
        ):
            out.append(("count_priced", f"lab {f.machine.name}: cost {f.cost_per_hour}"))
        if f is own.best:
            if v.state not in ("fits", "tight") or o.blocked:
                out.append(("pick_vs_warning", f"lab best {f.machine.name} is {v.state}"))
            for fact in hardware_conflicts(rec, gpu):
                out.append(("pick_vs_warning", f"lab best {f.machine.name}: {fact}"))
    m = re.search(r"Use (.+?) \((\d+)× .+?\): (✅ Fits|⚠️ Runs, tight) on (\d+) of its", text)
    if own.best is not None and m is None:
        out.append(("pick_vs_warning", "lab text names no machine to use"))
    if m and own.best is not None and int(m.group(4)) != own.best.cards:
        out.append(("count_priced", f"lab text {m.group(4)} cards vs {own.best.cards}"))
    return out


def rendered(rec: Recommendation, parsed, q: str) -> dict[str, str]:  # noqa: ANN001
    """Every view of one answer, in both languages (the first reply as `<lang>/short`)."""
    out = {}
    for lang in ("en", "zh"):
        for template in ("answer", "details", "inline"):
            out[f"{lang}/{template}"] = render(
                template, lang, rec=rec, parsed=parsed, canonical=q, plain=True
            )
        out[f"{lang}/short"] = render(
            "answer", lang, rec=rec, parsed=parsed, canonical=q, plain=True, view="short"
        )
    return out


def is_llm(rec: Recommendation) -> bool:
    return rec.result.model.kind == Kind.llm
