"""The cache that ChatGLM2/3 and GLM-4's own modeling code (trust_remote_code) builds while
it prefills a prompt, and what that leaves reserved by PyTorch's caching allocator.

THUDM's modeling_chatglm.py keeps the prefill's cache as one tensor and grows it layer by
layer ("prefilling in decoding, use tensor format to save cuda memory"):

    kv_cache = torch.cat((key_layer.unsqueeze(0).unsqueeze(0),
                          value_layer.unsqueeze(0).unsqueeze(0)), dim=1)   # SelfAttention
    presents = torch.cat((presents, kv_cache), dim=0)                      # GLMTransformer

Each layer allocates a block one layer's cache larger than the last and frees the last; the
allocator keeps the freed blocks, and the layer's transients (the fused MLP output, the
fp32 RMSNorm copies) fit only some of them. The tensors alive never exceed what the layer
loop holds anyway, but the segments the allocator reserves do: that difference is what
nvidia-smi shows above the tensors. It is computed by replaying the layer loop, with and
without the growing concatenation, through the allocator model (advisor/memory/allocator.py).
Shapes in the timeline follow the same file (read 2026-12-07 at THUDM/glm-4-9b-chat and
THUDM/chatglm3-6b): RMSNorm upcasts to fp32 (`hidden_states.to(torch.float32).pow(2)`, then
`hidden_states * torch.rsqrt(...)` and `self.weight * ...` in fp32), the fused query_key_value
Linear, rotary embedding over half of each head (`apply_rotary_pos_emb`: a reshaped copy,
four products, a stack and a cat), keys and values expanded to every head for
scaled_dot_product_attention, and the MLP's fused dense_h_to_4h whose output stays alive
through swiglu (`torch.chunk` views, `F.silu(x[0]) * x[1]`).
"""

from __future__ import annotations

from functools import lru_cache

from advisor.memory.allocator import replay

F32 = 4


def prefill_events(
    layers: int,
    tokens: int,
    hidden: int,
    heads: int,
    kv_heads: int,
    head_dim: int,
    inter: int,
    elem: int,
    stacked: bool,
) -> tuple[tuple[str, int], ...]:
    """The prefill's allocations and frees, layer by layer ((name, bytes) / (name, 0))."""
    t, h = tokens, hidden
    q, kv = heads * head_dim, kv_heads * head_dim
    rot = head_dim // 2  # rotary over half of each head (RotaryEmbedding(rotary_dim // 2))
    ev: list[tuple[str, int]] = [("x0", t * h * elem)]

    def alloc(name: str, size: int) -> None:
        ev.append((name, size))

    def free(*names: str) -> None:
        ev.extend((n, 0) for n in names)

    def rmsnorm(out: str) -> None:
        alloc("f32", t * h * F32)
        alloc("pow", t * h * F32)
        free("f32", "pow")
        alloc("scaled", t * h * F32)
        alloc("weighted", t * h * F32)
        free("scaled")
        alloc(out, t * h * elem)
        free("weighted")

    presents = ""
    for i in range(layers):
        rmsnorm("ln")
        alloc("qkv", t * (q + 2 * kv) * elem)
        alloc("shaped", t * heads * rot * elem)
        for a, b, c in (("p1", "p2", "sub"), ("p3", "p4", "add")):
            alloc(a, t * heads * rot // 2 * elem)
            alloc(b, t * heads * rot // 2 * elem)
            alloc(c, t * heads * rot // 2 * elem)
            free(a, b)
        alloc("stack", t * heads * rot * elem)
        free("sub", "add", "shaped")
        alloc("q", t * q * elem)
        free("stack")
        alloc("k", t * kv * elem)
        alloc(f"kv{i}", t * 2 * kv * elem)
        expanded = kv_heads < heads
        if expanded:
            alloc("k_all", t * q * elem)
            alloc("v_all", t * q * elem)
        alloc("attn", t * q * elem)
        free("q", "k", "qkv", *(("k_all", "v_all") if expanded else ()))
        alloc("context", t * q * elem)
        free("attn")
        alloc("dense", t * h * elem)
        free("context")
        alloc("residual", t * h * elem)
        free("dense")
        rmsnorm("ln2")
        free("ln")
        alloc("h_to_4h", t * 2 * inter * elem)
        alloc("silu", t * inter * elem)
        alloc("gated", t * inter * elem)
        free("silu", "h_to_4h")
        alloc("mlp_out", t * h * elem)
        free("gated")
        alloc(f"x{i + 1}", t * h * elem)
        free("mlp_out", "residual", "ln2", f"x{i}")
        if not stacked:
            continue  # each layer's cache kept as it is (a tuple per layer)
        if i == 0:
            presents = "kv0"  # presents = kv_cache: the first layer's tensor itself
            continue
        alloc(f"presents{i}", (i + 1) * t * 2 * kv * elem)
        free(presents, f"kv{i}")
        presents = f"presents{i}"
    return tuple(ev)


# Bounded: prompt lengths come from users' numbers (a long-running bot must not grow it).
@lru_cache(maxsize=256)
def reserve_bytes(
    layers: int,
    tokens: int,
    hidden: int,
    heads: int,
    kv_heads: int,
    head_dim: int,
    inter: int,
    elem: int,
) -> int:
    """Bytes the allocator reserves beyond the same loop with a cache kept per layer."""
    shape = (layers, tokens, hidden, heads, kv_heads, head_dim, inter, elem)
    _, grown = replay(list(prefill_events(*shape, stacked=True)))
    _, per_layer = replay(list(prefill_events(*shape, stacked=False)))
    return max(grown - per_layer, 0)
