"""Training activations: what the forward saves for backward under the checkpointing
recipe, one layer's backward transient, and the loss's logits (`add_activations`)."""

from __future__ import annotations

from advisor.memory import distributed, encoder, quantizers, stacks
from advisor.memory.terms import Breakdown
from advisor.memory.training_recipe import PEFT_FRAMEWORKS
from advisor.memory.training_setup import TrainingSetup
from advisor.memory.transformer import (
    ENCODER_FAMILIES,
    activation_bytes_per_token_layer,
    lora_target_dims,
)
from advisor.models.choices import Attention, Kind, Mode

# Unsloth computes the loss with Cut Cross-Entropy (Wijmans et al. 2024, arXiv 2411.09009):
# the lm_head matmul and the log-softmax are fused per vocabulary block.
CUT_CROSS_ENTROPY_FRAMEWORKS = {"unsloth"}

# Log-probs of the kept logits as TRL's online trainers take them (selective_log_softmax on
# 16-bit logits, one sequence at a time, trl f2cd577 2026-07-24): the 16-bit logits, each
# row's 16-bit log-softmax saved for backward, and the logits' 16-bit gradient.
LOGPROB_BYTES_PER_LOGIT = 6.0


def _logprob_logits(t: TrainingSetup, acc: Breakdown) -> int:
    """The logits over the completion only (`loss_tokens` of each sequence), as log-probs."""
    w, arch = t.w, t.arch
    kept = max(t.batch * min(w.loss_tokens or t.seq, t.seq) // t.pp, 1)
    logits = kept * arch.vocab * LOGPROB_BYTES_PER_LOGIT / t.tp
    if acc.lean:
        return acc.add("logits", logits, "")
    return acc.add(
        "logits",
        logits,
        f"{kept} completion tokens x {arch.vocab} vocab x {LOGPROB_BYTES_PER_LOGIT:g} B (log-probs)",
        key="logits.logprobs",
        tokens=kept,
        vocab=arch.vocab,
        bytes_per_logit=LOGPROB_BYTES_PER_LOGIT,
    )


def _liger_logits(t: TrainingSetup, acc: Breakdown, tokens: int) -> int:
    """Liger's fused linear cross-entropy: one logit chunk and the input's gradient, never
    the whole logits (distributed.liger_loss_bytes)."""
    lm_head_trains = t.full or t.w.trainable_embeddings
    liger = distributed.liger_loss_bytes(t.arch, tokens, lm_head_trains, t.param_bytes)
    return acc.add(
        "logits",
        liger / t.tp,
        f"Liger fused linear cross-entropy: one logit chunk + grad_input over {tokens} tokens",
        key="logits.liger",
        tokens=tokens,
        vocab=t.arch.vocab,
    )


def add_activations(t: TrainingSetup, acc: Breakdown) -> tuple[int, int, float, float]:
    """Saved activations under the checkpointing recipe, and the loss's logits: (saved,
    logits, one layer's backward transient, the checkpoints themselves). Each family of
    terms is its own function: the bytes a layer saves a token (`_saved_bytes_per_token`),
    what the checkpointing recipe keeps of them (`_add_saved_activations`), the loss's
    logits by loss path (`_add_loss_logits`) and DINOv2's reference scores
    (`reference_scores`)."""
    reference = encoder.reference_score_bytes(t.w, t.spec, t.fmt, t.compute)
    per_layer_tok, seq_eff, sp_loss = _saved_bytes_per_token(t, acc, reference)
    a_b, one_block, ckpt = _add_saved_activations(t, acc, per_layer_tok, seq_eff, sp_loss)
    logits_b = 0
    if not (t.spec is not None and t.spec.family in ENCODER_FAMILIES):
        logits_b, scores_follow = _add_loss_logits(t, acc)
        if not scores_follow:
            return a_b, logits_b, one_block / 2, ckpt
    transient = one_block / 2  # backward of one layer: gradients of its activations
    if reference is not None:
        scores_b, scores_transient = reference_scores(t, acc, reference)
        a_b += scores_b
        transient += scores_transient
    return a_b, logits_b, transient, ckpt


def _saved_bytes_per_token(
    t: TrainingSetup, acc: Breakdown, reference: float | None
) -> tuple[float, int, float]:
    """What one layer saves for backward a token (Korthikanti 2022), with what the stack
    adds or removes: Liger's fused kernels, sequence-parallel gathers, PEFT's fp32 adapter
    inputs, the legacy bitsandbytes layer's kept input. (bytes a token a layer, the
    sequence length it runs, the loss's sequence-parallel bytes a token)."""
    w, arch = t.w, t.arch
    dropout = (t.spec is not None and t.spec.family in ENCODER_FAMILIES) or (
        t.model.kind == Kind.classic
    )
    seq_eff = t.seq + (200 if w.mode == Mode.prompt_tuning else 0)
    attention = t.attention
    if reference is not None:
        # DINOv2's own blocks: no dropout, and their score matrices are a term of their own
        # (reference_scores below), the rest of the block as any block's.
        dropout, attention = False, Attention.sdpa
    keys = t.attention_keys or seq_eff  # a speech model's frames and labels (speech_training)
    per_layer_tok = activation_bytes_per_token_layer(arch, keys, attention, t.elem, dropout) / t.tp
    if w.liger_kernel:
        per_layer_tok -= distributed.liger_activation_saving_per_token(arch, t.elem) / t.tp
    sp_block, sp_loss = 0.0, 0.0
    if t.tp > 1 and distributed.fsdp2_stack(t.framework):
        sp_block, sp_loss = distributed.sequence_parallel_extra_per_token(arch.hidden, t.elem, t.tp)
        per_layer_tok += sp_block
    if w.mode in (Mode.lora, Mode.dora, Mode.qlora) and t.framework in PEFT_FRAMEWORKS:
        dims = lora_target_dims(arch, w.lora_targets)
        per_layer_tok += sum(4 * i for i, _ in dims)  # PEFT casts each adapter input to fp32
    if not t.full and quantizers.bnb_legacy_saves_inputs(t.fmt, t.framework):
        # the 4-bit layer keeps its input as cast to the compute dtype (16-bit under an
        # fp32 residual stream, stacks.kbit_activation_bytes)
        kept = t.elem if t.compute == "fp32" or t.elem <= 2.5 else 2.0
        per_layer_tok += quantizers.bnb_legacy_saved_bytes_per_token(arch, kept) / t.tp
        acc.assume("qlora_kernel", "bnb_keeps_inputs")
    return per_layer_tok, seq_eff, sp_loss


def _add_saved_activations(
    t: TrainingSetup, acc: Breakdown, per_layer_tok: float, seq_eff: int, sp_loss: float
) -> tuple[int, float, float]:
    """The activations term under the checkpointing recipe: every layer's (none), the
    layer inputs and one layer recomputed (full checkpointing, on the card or offloaded),
    or torchtitan's selective share; DoRA's weight-norm products and the loss's
    sequence-parallel gathers on top. (bytes added, one block's activations, the
    checkpoints themselves)."""
    w, arch, tokens, layers = t.w, t.arch, t.tokens, t.layers
    one_layer = per_layer_tok * t.batch * seq_eff
    # A recomputed block (and its backward) holds one micro-batch: under pipeline
    # parallelism the schedule runs backward micro-batch by micro-batch.
    one_block = one_layer / t.pp
    ckpt = 0.0
    fraction = 1.0
    if t.gc and w.selective_checkpointing:
        # torchtitan's op-level SAC keeps the block input, every second matmul output and
        # the attention output (data/distributed.toml); backward recomputes the rest of
        # one block at a time.
        sac_tok = min(
            distributed.selective_saved_bytes_per_token(arch, t.elem) / t.tp, per_layer_tok
        )
        fraction = sac_tok / per_layer_tok
        saved = one_layer * fraction * layers + one_block * (1 - fraction)
        formula = f"selective checkpointing: {fraction:.2f} x {layers} layers x {tokens} tokens + one block recomputed"
    elif t.gc:
        # Unsloth's default use_gradient_checkpointing="unsloth" offloads the checkpoints
        # to CPU memory, as torchtune's enable_activation_offloading does.
        # Releases before 2024.4 kept them on the card (training_stacks.toml [unsloth_release]).
        offloaded = w.activation_offload or (
            t.framework in CUT_CROSS_ENTROPY_FRAMEWORKS
            and not stacks.unsloth_before(w.unsloth_version, "offloaded_checkpoints")
        )
        per_value = _checkpoint_bytes(t, acc)
        ckpt = 0.0 if offloaded else arch.hidden * per_value * tokens * layers / t.tp
        if not offloaded and t.framework in CUT_CROSS_ENTROPY_FRAMEWORKS:
            acc.assume("unsloth_checkpoints", "on_card_before_offload")
        saved = ckpt + one_block
        formula = f"checkpointed: {layers} layer inputs x {tokens} tokens + one layer recomputed"
    else:
        saved = one_layer * layers
        formula = f"{layers} layers x {tokens} tokens x {per_layer_tok / 1024:.0f} KiB (Korthikanti 2022, {t.attention.value})"
    if w.mode == Mode.dora:
        saved += sum(i * o for i, o in lora_target_dims(arch, w.lora_targets)) * 4 * arch.layers
        formula += " + DoRA weight-norm products"
    if sp_loss:
        saved += sp_loss * tokens // t.pp
        formula += " + sequence-parallel gathers"
    if acc.lean:  # a lean breakdown keeps no text (terms.Breakdown)
        return acc.add("activations", saved, ""), one_block, ckpt
    recipe = (
        "selective" if t.gc and w.selective_checkpointing else "checkpointed" if t.gc else "full"
    )
    a_b = acc.add(
        "activations",
        saved,
        formula,
        key=f"activations.{recipe}",
        layers=layers,
        tokens=tokens,
        kib_per_token_layer=round(per_layer_tok / 1024, 1),
        fraction=round(fraction, 2),
    )
    return a_b, one_block, ckpt


def _checkpoint_bytes(t: TrainingSetup, acc: Breakdown) -> float:
    """Bytes a value of a checkpointed layer's input: the residual stream's dtype. Under
    autocast over fp32 weights the stream is fp32 (the embedding is not autocast and the
    residual add promotes: data/training_stacks.toml [amp_fp32_weights]), said as the
    activations' dtype; where the stack casts the parameters first it is 16-bit."""
    if not stacks.autocast_over_fp32(t.fmt, t.compute, t.par, t.framework):
        return t.elem
    acc.assume("activation_dtype", "fp32_residual_amp")
    return float(stacks.amp_fp32_weights()["checkpoint_bytes"])


def _classifier_logits(t: TrainingSetup, acc: Breakdown, tokens: int) -> int:
    """A task head's logits (a few labels a token), no vocabulary-sized tensor: nothing the
    breakdown shows (data/training_stacks.toml [classifier_head]), said as the loss path."""
    acc.assume("loss_path", "classifier_head")
    per_token = stacks.stack_defaults()["classifier_head"]["logit_bytes_per_token"]
    return int(tokens * per_token / t.tp)


def _add_loss_logits(t: TrainingSetup, acc: Breakdown) -> tuple[int, bool]:
    """A language model's loss logits by loss path: log-probs of the completion only,
    none under Cut Cross-Entropy, Liger's fused chunk, a chunked loss, or transformers'
    full fp32 upcast. (bytes added, whether DINOv2's reference scores are still counted
    after them: the completion-only, Liger and lean paths returned before that term, and
    still do.)"""
    w, arch = t.w, t.arch
    # Under pipeline parallelism the last stage runs the loss one micro-batch at a time
    # (torch.distributed.pipelining schedules), and torchtitan splits the local batch into
    # as many micro-batches as pipeline ranks by default (config_manager.py 2024-12:
    # "The default value will be the number of pipeline stages").
    tokens = max(t.loss_positions // t.pp, 1)  # a speech model's labels only
    if w.loss_tokens is not None:
        return _logprob_logits(t, acc), False
    if w.classifier_head:
        return _classifier_logits(t, acc, tokens), True
    # 16-bit logits + fp32 copy + log-softmax + its gradient at the start of backward;
    # a chunked loss keeps the 16-bit logits and one fp32 chunk at a time. Checked
    # 2026-11-30 against transformers' loss_utils.ForCausalLMLoss (v4.46+): it upcasts
    # the whole [tokens, vocab] tensor (`logits = logits.float()`, not per chunk) and
    # pads the labels instead of copying shifted logits; the peak is the log-softmax
    # backward: its saved fp32 output + nll's fp32 gradient + the fp32 gradient it
    # returns = 12 B per logit. Only torchtune's CEWithChunkedOutputLoss, Liger and
    # Unsloth (CUT_CROSS_ENTROPY_FRAMEWORKS) avoid the full fp32 tensor.
    # (by the matmuls' dtype, not the saved activations': an fp32 residual stream under
    # a bitsandbytes model still gives 16-bit logits under autocast)
    per = 2.5 if w.chunked_loss else (12.0 if t.compute != "fp32" else 16.0)
    own = stacks.stack_loss_bytes(t.framework, w.chunked_loss, w.torch_compile)
    if t.framework in CUT_CROSS_ENTROPY_FRAMEWORKS:
        per = 0.0  # logits are never materialized: a vocabulary chunk at a time
        if stacks.unsloth_before(w.unsloth_version, "cut_cross_entropy"):
            # its Fast_CrossEntropyLoss saves the whole 16-bit logits, gradient in place
            per = stacks.unsloth_logit_bytes()
            acc.assume("loss_path", "unsloth_fast_ce")
    elif w.liger_kernel:
        return _liger_logits(t, acc, tokens), False
    elif own is not None:  # the stack's own chunked loss, as its code holds it
        per = own[0]
        acc.assume("loss_path", own[1])
    elif not w.chunked_loss:
        # The loss path by transformers era, checked against the code 2026-11-30:
        # < 4.46 (LlamaForCausalLM: `logits = logits.float()`, a shifted `.contiguous()`
        # copy, CrossEntropyLoss) holds fp32 logits + the shifted copy + log-softmax's
        # output at the forward's end, and log-softmax's saved output + the incoming and
        # outgoing gradients in backward: 12 B per logit, as the modern path (the 16-bit
        # logits are freed by the upcast; Trainer.compute_loss drops the outputs before
        # backward). Remote-code models of that era (Qwen-7B modeling_qwen.py, GPT-2
        # style) shift and cross-entropy the 16-bit logits: 6 B. So the modern figure
        # bounds both; the assumption says which path it is.
        acc.assume("loss_path", "fp32_logits")
    logits = tokens * arch.vocab * per / t.tp
    if acc.lean:  # a lean breakdown keeps no text (terms.Breakdown)
        return acc.add("logits", logits, ""), False
    chunked = bool(w.chunked_loss) or own is not None
    fast_ce = t.framework in CUT_CROSS_ENTROPY_FRAMEWORKS
    path = (
        "Unsloth's cross-entropy kernel"
        if fast_ce
        else "chunked"
        if chunked
        else "16-bit + fp32 loss"
    )
    logits_b = acc.add(
        "logits",
        logits,
        f"{tokens} tokens x {arch.vocab} vocab x {per:g} B ({path})",
        key="logits.unsloth_fast_ce" if fast_ce else "logits.chunked" if chunked else "logits",
        tokens=tokens,
        vocab=arch.vocab,
        bytes_per_logit=per,
    )
    return logits_b, True


def reference_scores(t: TrainingSetup, acc: Breakdown, per_score: float) -> tuple[int, float]:
    """DINOv2's reference attention (Attention.forward without xFormers): every block keeps
    its softmax output for backward, `per_score` bytes a score, and one block's backward
    holds the scores' gradient twice (data/vision_encoders.toml [reference_attention]).
    (bytes added, the backward's transient)."""
    table = encoder.reference_attention()
    blocks = 1 if t.gc else t.layers
    scores = t.batch * t.arch.heads * t.seq * t.seq / t.tp
    grad_bytes = 4 if t.fmt == "fp32" else 2
    transient = table["backward_score_gradients"] * scores * grad_bytes
    if acc.lean:
        return acc.add("reference_scores", scores * per_score * blocks, ""), transient
    added = acc.add(
        "reference_scores",
        scores * per_score * blocks,
        f"{blocks} blocks x {t.batch} x {t.arch.heads} heads x {t.seq}^2 scores x {per_score:g} B"
        " (DINOv2's own attention, softmax kept)",
        key="reference_scores",
        blocks=blocks,
        tokens=t.seq,
        bytes_per_score=per_score,
    )
    return added, transient
