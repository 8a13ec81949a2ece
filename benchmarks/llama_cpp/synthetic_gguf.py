#!/usr/bin/env python3
"""Write a GGUF file of a Llama-architecture model with made-up weights, for timing llama.cpp.

How fast llama.cpp decodes depends on the shape of the model and the storage format of each
tensor, not on what the weights are. On a machine that cannot download a model, this script
writes one of the same shape and the same tensor formats as llama.cpp's own quantizer would
give it, so that `llama-bench` can time it. The weights are a repeated block of
pseudo-random bytes whose scale fields are set to small finite half-precision values (no
NaN or infinity), so the arithmetic is that of real data. The output text is meaningless.

Python 3 standard library only. Shapes are given as options; `--preset` names the ones
the calibration data measures:

  synthetic_gguf.py --preset llama-3-8b --format Q4_K_M -o llama-3-8b-Q4_K_M.gguf

Formats: F16, Q8_0 (every matrix in that format) and Q4_K_M (llama.cpp's mix for a Llama
model: Q4_K, with Q6_K for the output head and for attn_v and ffn_down in the layers
llama.cpp's `use_more_bits` picks, and Q5_K for the other attn_v of an 80-layer model).
"""

import argparse
import random
import struct
import sys

PRESETS = {
    # layers, hidden, ffn, heads, kv heads, vocab, context, rope base
    "llama-3-8b": (32, 4096, 14336, 32, 8, 128256, 8192, 500000.0),
    "llama-3-70b": (80, 8192, 28672, 64, 8, 128256, 8192, 500000.0),
    "llama-2-7b": (32, 4096, 11008, 32, 32, 32000, 4096, 10000.0),
}

# ggml type id, elements per block, bytes per block, offsets of the half-precision scale
# fields inside a block (ggml-common.h)
TYPES = {
    "F32": (0, 1, 4, ()),
    "F16": (1, 1, 2, ()),
    "Q8_0": (8, 32, 34, (0,)),
    "Q4_K": (12, 256, 144, (0, 2)),
    "Q5_K": (13, 256, 176, (0, 2)),
    "Q6_K": (14, 256, 210, (208,)),
}
FILE_TYPES = {"F16": 1, "Q8_0": 7, "Q4_K_M": 15}
ALIGNMENT = 32

# GGUF value types
U32, I32, F32, BOOL, STRING, ARRAY = 4, 5, 6, 7, 8, 9


def gguf_string(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def kv(key, vtype, value):
    out = gguf_string(key) + struct.pack("<I", vtype)
    if vtype == STRING:
        return out + gguf_string(value)
    if vtype == ARRAY:
        etype, items = value
        out += struct.pack("<IQ", etype, len(items))
        if etype == STRING:
            return out + b"".join(gguf_string(i) for i in items)
        fmt = {F32: "<f", I32: "<i", U32: "<I"}[etype]
        return out + b"".join(struct.pack(fmt, i) for i in items)
    fmt = {U32: "<I", I32: "<i", F32: "<f", BOOL: "<?"}[vtype]
    return out + struct.pack(fmt, value)


def use_more_bits(i, n):
    """llama.cpp's choice of the layers that get more bits in the _M mixes."""
    return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2


def tensor_list(layers, hidden, ffn, heads, kv_heads, vocab, fmt):
    """(name, dims with the fastest-varying first as GGUF stores them, type) per tensor."""
    kv_dim = hidden // heads * kv_heads

    def matrix(role, layer):
        if fmt != "Q4_K_M":
            return fmt
        if role == "output":
            return "Q6_K"
        if role in ("attn_v", "ffn_down") and use_more_bits(layer, layers):
            return "Q6_K"
        if role == "attn_v" and layers == 80:  # llama.cpp's LLM_TYPE_70B rule
            return "Q5_K"
        return "Q4_K"

    out = [("token_embd.weight", (hidden, vocab), matrix("token_embd", -1))]
    for i in range(layers):
        p = "blk.%d." % i
        out += [
            (p + "attn_norm.weight", (hidden,), "F32"),
            (p + "attn_q.weight", (hidden, hidden), matrix("attn_q", i)),
            (p + "attn_k.weight", (hidden, kv_dim), matrix("attn_k", i)),
            (p + "attn_v.weight", (hidden, kv_dim), matrix("attn_v", i)),
            (p + "attn_output.weight", (hidden, hidden), matrix("attn_output", i)),
            (p + "ffn_norm.weight", (hidden,), "F32"),
            (p + "ffn_gate.weight", (hidden, ffn), matrix("ffn_gate", i)),
            (p + "ffn_up.weight", (hidden, ffn), matrix("ffn_up", i)),
            (p + "ffn_down.weight", (ffn, hidden), matrix("ffn_down", i)),
        ]
    out += [("output_norm.weight", (hidden,), "F32"), ("output.weight", (hidden, vocab), matrix("output", -1))]
    return out


def nbytes(dims, tname):
    _, per_block, block_bytes, _ = TYPES[tname]
    n = 1
    for d in dims:
        n *= d
    if n % per_block:
        sys.exit("a tensor of %s does not fill whole %s blocks" % (dims, tname))
    return n // per_block * block_bytes


def pattern(tname, rng, size=1 << 20):
    """About `size` bytes of whole blocks: random bytes, scale fields set to small finite halves."""
    _, _, block_bytes, scales = TYPES[tname]
    if tname == "F32":
        return struct.pack("<f", 1.0) * (size // 4)  # the norms' weights
    if tname == "F16":
        return b"".join(struct.pack("<e", rng.gauss(0.0, 0.02)) for _ in range(size // 2))
    blocks = bytearray(rng.randbytes(size // block_bytes * block_bytes))
    for b in range(0, len(blocks), block_bytes):
        for off in scales:
            blocks[b + off:b + off + 2] = struct.pack("<e", rng.uniform(1e-4, 1e-3))
    return bytes(blocks)


def pad(n):
    return (ALIGNMENT - n % ALIGNMENT) % ALIGNMENT


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--preset", choices=sorted(PRESETS))
    ap.add_argument("--layers", type=int)
    ap.add_argument("--hidden", type=int)
    ap.add_argument("--ffn", type=int)
    ap.add_argument("--heads", type=int)
    ap.add_argument("--kv-heads", type=int)
    ap.add_argument("--vocab", type=int)
    ap.add_argument("--context", type=int)
    ap.add_argument("--format", choices=sorted(FILE_TYPES), required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--header-only", action="store_true",
                    help="write the metadata and tensor list alone (what header readers read), no weights")
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()

    shape = list(PRESETS[a.preset]) if a.preset else [None] * 7 + [500000.0]
    for i, name in enumerate(["layers", "hidden", "ffn", "heads", "kv_heads", "vocab", "context"]):
        if getattr(a, name) is not None:
            shape[i] = getattr(a, name)
    if None in shape:
        ap.error("give --preset or every one of --layers --hidden --ffn --heads --kv-heads --vocab --context")
    layers, hidden, ffn, heads, kv_heads, vocab, context, rope_base = shape
    if hidden % heads or heads % kv_heads or vocab < 259:
        ap.error("hidden must be a multiple of heads, heads of kv-heads, and vocab at least 259")

    # A SentencePiece-style vocabulary: <unk>, <s>, </s>, the 256 byte tokens, then fillers.
    tokens = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % b for b in range(256)]
    tokens += ["t%d" % i for i in range(vocab - len(tokens))]
    token_types = [2, 3, 3] + [6] * 256 + [1] * (vocab - 259)
    meta = [
        kv("general.architecture", STRING, "llama"),
        kv("general.name", STRING, "synthetic %s %s" % (a.preset or "llama", a.format)),
        kv("general.file_type", U32, FILE_TYPES[a.format]),
        kv("general.alignment", U32, ALIGNMENT),
        kv("llama.block_count", U32, layers),
        kv("llama.context_length", U32, context),
        kv("llama.embedding_length", U32, hidden),
        kv("llama.feed_forward_length", U32, ffn),
        kv("llama.attention.head_count", U32, heads),
        kv("llama.attention.head_count_kv", U32, kv_heads),
        kv("llama.rope.dimension_count", U32, hidden // heads),
        kv("llama.rope.freq_base", F32, rope_base),
        kv("llama.attention.layer_norm_rms_epsilon", F32, 1e-5),
        kv("llama.vocab_size", U32, vocab),
        kv("tokenizer.ggml.model", STRING, "llama"),
        kv("tokenizer.ggml.tokens", ARRAY, (STRING, tokens)),
        kv("tokenizer.ggml.scores", ARRAY, (F32, [0.0] * vocab)),
        kv("tokenizer.ggml.token_type", ARRAY, (I32, token_types)),
        kv("tokenizer.ggml.bos_token_id", U32, 1),
        kv("tokenizer.ggml.eos_token_id", U32, 2),
        kv("tokenizer.ggml.unknown_token_id", U32, 0),
    ]
    tensors = tensor_list(layers, hidden, ffn, heads, kv_heads, vocab, a.format)

    infos, offset = [], 0
    for name, dims, tname in tensors:
        infos.append(gguf_string(name) + struct.pack("<I", len(dims)) +
                     b"".join(struct.pack("<Q", d) for d in dims) + struct.pack("<IQ", TYPES[tname][0], offset))
        size = nbytes(dims, tname)
        offset += size + pad(size)

    rng = random.Random(a.seed)
    patterns = {}
    with open(a.output, "wb") as f:
        head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(meta)) + b"".join(meta) + b"".join(infos)
        f.write(head + b"\0" * pad(len(head)))
        for name, dims, tname in [] if a.header_only else tensors:
            if tname not in patterns:
                patterns[tname] = pattern(tname, rng)
            block = patterns[tname]
            size = nbytes(dims, tname)
            left = size
            while left:
                n = min(left, len(block))
                f.write(block[:n])
                left -= n
            f.write(b"\0" * pad(size))
    print("%s: %d tensors, %d bytes of weights%s, %d bytes in all" % (
        a.output, len(tensors), offset - sum(pad(nbytes(d, t)) for _, d, t in tensors),
        " (not written)" if a.header_only else "", len(head) + pad(len(head)) + (0 if a.header_only else offset)))


if __name__ == "__main__":
    main()
