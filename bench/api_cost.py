"""What one Bot API call costs the bot's process, layer by layer.

The stand-in (standin/) runs in its own process on 127.0.0.1, so the CPU measured
here (time.process_time of this process) is the sending side only: building the request,
the rate limiter, the HTTP client, the kernel's send and reading the answer back. Each
stack sends the same calls one after another, the stacks interleaved round by round so a
busy machine slows them alike; the figure is the median over rounds of CPU per call.

    python bench/api_cost.py                 # answerCallbackQuery and sendMessage, 6 rounds
    python bench/api_cost.py --calls 500 --rounds 4

Stacks, each adding one layer to the one before:
  raw        aiohttp's client: a POST of a JSON body (HTTP client and socket; the floor)
  request    the project's transport (bot.http.ApiRequest, on aiohttp) through PTB's
             BaseRequest.post
  bot        PTB's ExtBot over it (parameters, defaults, the answer's de_json)
  limiter    + PTB's AIORateLimiter (caps lifted as in the load bench)
  app        the bot's own stack as bot.app builds it: MeteredRequest, MeteredRateLimiter
             (RetryingRateLimiter, AIORateLimiter), Defaults (HTML, no link previews)
sendMessage carries a wizard step's 12-button keyboard, built for each message: as PTB
objects in every stack but `app`, which sends it as the bot does (bot.replies.markup, JSON
through api_kwargs); `app before` is the bot's stack before that.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import aiohttp  # noqa: E402
import orjson  # noqa: E402
from telegram import InlineKeyboardButton, InlineKeyboardMarkup, LinkPreviewOptions  # noqa: E402
from telegram.constants import ParseMode  # noqa: E402
from telegram.ext import AIORateLimiter, Defaults, ExtBot  # noqa: E402
from telegram.request import RequestData  # noqa: E402
from telegram.request._requestparameter import RequestParameter  # noqa: E402

from bot import event_loop  # noqa: E402
from bot.http import ApiRequest  # noqa: E402
from bot.metrics import MeteredRateLimiter, MeteredRequest, Metrics  # noqa: E402
from bot.replies import markup  # noqa: E402
from standin import STANDIN_TOKEN  # noqa: E402

STANDIN = """
import asyncio, sys
from standin import FakeTelegram
async def main():
    async with FakeTelegram() as tg:
        print(tg.base_url, flush=True)
        await asyncio.sleep(3600)
asyncio.run(main())
"""

TEXT = "<b>Step 2 of 4</b> · model\nPick one, or type it (e.g. <code>qwen2.5-7b</code>)."
# A wizard step's keyboard: nine choices, then back / skip / cancel
ROWS = [
    [(f"Qwen2.5-{i}B", f"w|10001|c|model_llm|{i}") for i in r]
    for r in ((0, 1, 2), (3, 4, 5), (6, 7, 8))
] + [[("Back", "w|10001|b"), ("Skip", "w|10001|s|model_llm"), ("Cancel", "w|10001|x")]]


def ptb_keyboard() -> InlineKeyboardMarkup:
    """The keyboard as PTB objects, built per message as the bot did before bot.replies.markup."""
    return InlineKeyboardMarkup(
        [[InlineKeyboardButton(text, callback_data=data) for text, data in row] for row in ROWS]
    )


def make_bot(base: str, stack: str) -> ExtBot:
    if stack == "bot":
        return ExtBot(STANDIN_TOKEN, base_url=base, request=ApiRequest())
    if stack == "limiter":
        limiter = AIORateLimiter(overall_max_rate=100000, group_max_rate=1000000)
        return ExtBot(STANDIN_TOKEN, base_url=base, request=ApiRequest(), rate_limiter=limiter)
    metrics = Metrics()
    limiter = MeteredRateLimiter(
        metrics,
        overall_max_rate=100000,
        overall_time_period=1,
        group_max_rate=1000000,
        group_time_period=60,
        max_retries=3,
    )
    defaults = Defaults(
        parse_mode=ParseMode.HTML, link_preview_options=LinkPreviewOptions(is_disabled=True)
    )
    return ExtBot(
        STANDIN_TOKEN,
        base_url=base,
        request=MeteredRequest(metrics),
        rate_limiter=limiter,
        defaults=defaults,
    )


async def measure(n: int, call: Callable[[int], Awaitable[object]]) -> float:
    """CPU µs per call of `n` calls made one after another."""
    start = time.process_time()
    for i in range(n):
        await call(i)
    return (time.process_time() - start) * 1e6 / n


async def run(args: argparse.Namespace) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", STANDIN, cwd=str(ROOT), stdout=asyncio.subprocess.PIPE
    )
    assert proc.stdout is not None
    base = (await proc.stdout.readline()).decode().strip()
    chat_id = 10001
    ids = iter(range(10**9))
    session = aiohttp.ClientSession()
    request = ApiRequest()
    await request.initialize()
    bots = {s: make_bot(base, s) for s in ("bot", "limiter", "app before", "app")}
    for b in bots.values():
        await b.initialize()

    def raw(method: str, params: dict) -> Callable[[int], Awaitable[object]]:
        async def call(_: int) -> object:
            body = orjson.dumps(params | {"callback_query_id": str(next(ids))})
            async with session.post(
                f"{base}{STANDIN_TOKEN}/{method}",
                data=body,
                headers={"Content-Type": "application/json"},
            ) as r:
                return orjson.loads(await r.read())

        return call

    def via_request(method: str, params: dict) -> Callable[[int], Awaitable[object]]:
        async def call(_: int) -> object:
            p = params | {"callback_query_id": str(next(ids))}
            data = RequestData([RequestParameter.from_input(k, v) for k, v in p.items()])
            return await request.post(f"{base}{STANDIN_TOKEN}/{method}", data)

        return call

    def answer(bot: ExtBot) -> Callable[[int], Awaitable[object]]:
        return lambda _: bot.answer_callback_query(str(next(ids)))

    def send(bot: ExtBot) -> Callable[[int], Awaitable[object]]:
        return lambda _: bot.send_message(chat_id, TEXT, reply_markup=ptb_keyboard())

    def send_lean(bot: ExtBot) -> Callable[[int], Awaitable[object]]:
        return lambda _: bot.send_message(chat_id, TEXT, api_kwargs={"reply_markup": markup(ROWS)})

    send_params = {"chat_id": chat_id, "text": TEXT, "reply_markup": markup(ROWS)}
    cases: dict[str, dict[str, Callable[[int], Awaitable[object]]]] = {
        "answerCallbackQuery": {
            "raw": raw("answerCallbackQuery", {}),
            "request": via_request("answerCallbackQuery", {}),
            **{s: answer(b) for s, b in bots.items() if s != "app before"},
        },
        "sendMessage": {
            "raw": raw("sendMessage", send_params),
            "request": via_request("sendMessage", send_params),
            **{s: send(b) for s, b in bots.items() if s != "app"},
            "app": send_lean(bots["app"]),
        },
    }
    try:
        for method, stacks in cases.items():
            for call in stacks.values():  # warm: connections open, code paths hot
                await measure(20, call)
            seen: dict[str, list[float]] = {s: [] for s in stacks}
            for _ in range(args.rounds):
                for stack, call in stacks.items():
                    seen[stack].append(await measure(args.calls, call))
            print(f"{method}: CPU µs per call, median of {args.rounds} rounds of {args.calls}")
            floor = statistics.median(seen["raw"])
            for stack, values in seen.items():
                med = statistics.median(values)
                print(f"  {stack:15s} {med:7.1f}  ({med - floor:+6.1f} over raw)")
    finally:
        for b in bots.values():
            await b.shutdown()
        await request.shutdown()
        await session.close()
        proc.terminate()
        await proc.wait()


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--calls", type=int, default=400, help="calls per stack per round")
    ap.add_argument("--rounds", type=int, default=6)
    event_loop.run(run(ap.parse_args()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
