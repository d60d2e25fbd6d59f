"""bot.callbacks.pack: what it accepts is exactly what unpack reads back as the same button
(its check is done per kind and arguments, the id apart; this pins it against the check of
the whole payload)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bot.callbacks import MAX_BYTES, pack, unpack

KINDS = st.sampled_from(["w", "a", "c", "h", "l", "f", "m", "x", "", "w|1"])
IDS = st.one_of(
    st.integers(min_value=-(10**16), max_value=10**16),
    st.sampled_from([0, -1, 10**15 - 1, 10**15, -(10**15) + 1, -(10**15)]),
    st.booleans(),
)
ARGS = st.lists(
    st.one_of(
        st.integers(-5, 50),
        st.sampled_from(["c", "budget", "model_image", "x", "a.b-c", "", "a|b", "中文", "n" * 25]),
        st.text(max_size=6),
    ),
    max_size=4,
)


def whole_payload_check(kind: str, ident: object, args: list) -> str | None:
    """The payload checked whole, as pack did before, and read back as the same kind (a
    kind of several letters, "w|1", made a payload of another id): None where refused."""
    data = "|".join([kind, str(ident), *(str(a) for a in args)])
    back = unpack(data) if len(data.encode()) <= MAX_BYTES else None
    return data if back is not None and back.kind == kind else None


@given(KINDS, IDS, ARGS)
def test_pack_accepts_exactly_what_the_whole_payload_check_accepts(
    kind: str, ident: int, args: list
) -> None:
    expected = whole_payload_check(kind, ident, args)
    try:
        got = pack(kind, ident, *args)
    except ValueError:
        got = None
    assert got == expected
    if got is not None:
        back = unpack(got)
        assert back is not None and back.kind == kind and back.id == int(ident)
