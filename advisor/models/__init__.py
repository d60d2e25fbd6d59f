"""Typed inputs and outputs of the engine, one module per thing: the choices a workload
names (`choices`), a transformer's shape (`architecture`), the question (`workload`), the
memory estimate (`estimate`) and the result that carries it (`result`).

Units live in field names (`*_bytes`, `*_b` for billions, `*_tokens`) so a number never
travels without its unit. Every bound exists to turn absurd input (10^30 parameters, a
batch of a billion) into a validation error naming the field instead of a nonsense answer.
"""
