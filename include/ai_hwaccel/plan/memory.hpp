// ai-hwaccel plan: how much memory a model needs to serve.
//
// Three parts, each an estimate: the weights as a runtime stores them, the KV cache for a
// given context, batch and cache type, and the compute buffers plus a runtime allowance.
//
// Weights. Every format is charged its true bits per weight (core/quantization.hpp, block
// scales included), and tensors are charged as the runtimes that use the format store them:
//  - GGUF (llama.cpp `llama_tensor_get_type`, src/llama-quant.cpp): the output head is kept
//    at Q6_K (Q5_K for the IQ1/IQ2 recipes, Q8_0 for Q8_0 and MXFP4 files) and the token
//    embedding at the recipe's base block type (Q2_K for IQ1_S/IQ1_M/IQ2_XXS/IQ2_XS,
//    IQ3_S for IQ2_S, IQ2_M and the IQ3 files). The K-quant mixes' table cost is a
//    whole-file average at Llama-3-8B; the cost of their transformer blocks is that average
//    with Llama-3-8B's embedding and head taken out, so a model with a different vocabulary
//    share gets the right total. The uniform formats also get the recipe's per-tensor
//    changes inside the blocks, by tensor class, sized from the model's shape
//    (`gguf_block_types_of`, `layout_of(model, format)`): attn_v, attn_q/attn_k,
//    attn_output, the first eighth of the ffn_down tensors and (IQ3_XS) the middle three
//    quarters of ffn_gate/ffn_up. So do the IQ mixes IQ3_M, IQ3_XS and IQ2_M, whose blocks
//    start from the ggml type llama.cpp builds the file on (`gguf_default_bpw`: IQ3_S,
//    IQ3_S, IQ2_S; and IQ2_XS for an IQ2_S file). Rules that depend on an importance matrix
//    are taken with one for the IQ formats (tools/quantize refuses IQ1_S/IQ1_M/IQ2_XXS/
//    IQ2_XS/IQ2_S without one; the IQ3_XXS file sizes fit only that reading) and without
//    one for the legacy and K formats. Arch and size-class rules (Falcon, LLM_TYPE_70B's
//    attn_v, which puts 70B-class IQ3 files 0.3 % above our figure) and fused attn_qkv
//    tensors (Phi-3) are not modelled.
//    Re-released QAT files may store the tied embedding otherwise than the rule (Google's
//    Gemma 3 QAT Q4_0 GGUFs keep it in F16); nothing in a model_spec says so, so those
//    files come out small (calibration row 816).
//  - MXFP4 (llama.cpp MOSTLY_MXFP4_MOE): the experts' FFN matrices in MXFP4, every other
//    matrix in Q8_0.
//  - fp8, int8, int4 (GPTQ/AWQ) and NVFP4 checkpoints quantize the transformer blocks and
//    keep the token embedding and the output head in 16 bits (vLLM / llm-compressor /
//    AutoGPTQ / ModelOpt practice).
//  - fp32, bf16, fp16: every tensor in that type.
// Norm vectors (a few hidden-size vectors per layer) are charged at the format's rate;
// they are under 0.01 % of any catalogue model.
//
// KV cache: layers x kv_values_per_token() (MLA models: the compressed vector) x cached
// tokens x batch x the cache type's bytes per value; a sliding-window layer caches the
// window of every sequence and one micro-batch more (llama.cpp's iSWA cache, sized
// n_swa x n_seq + n_ubatch in llama-kv-cache-iswa.cpp, so that a micro-batch can be
// written before the oldest tokens leave), never more than the full context.
//
// Overhead: the compute buffer of one micro-batch (llama.cpp's default n_ubatch, 512
// tokens) in f32 — logits (vocab) plus the widest FFN activation plus two hidden-size
// activations, which reproduces llama.cpp's reported compute buffer for Llama 3.3 70B
// within 3 % (calibration row 765) — plus a fixed runtime allowance (see
// `runtime_allowance_bytes`). Flash attention is assumed, so the attention score matrix is
// never materialized.
#pragma once

#include "ai_hwaccel/config.hpp"
#include "ai_hwaccel/core/quantization.hpp"
#include "ai_hwaccel/core/units.hpp"
#include "ai_hwaccel/plan/model.hpp"
#include "ai_hwaccel/plan/models.hpp"

#include <cstdint>

AI_HWACCEL_NAMESPACE_BEGIN

/// What is being served: context per sequence, sequences decoded together, cache type.
struct inference_shape {
    std::uint32_t context = 4096;              ///< tokens held in the KV cache per sequence
    std::uint32_t batch = 1;                   ///< sequences decoded together
    quant_format kv_cache = quant_format::fp16; ///< KV cache element type (fp16, q8_0, q4_0, fp8)
    /// Tokens of the prompt the prefill rate is for, prefilled from an empty cache; 0: a
    /// prompt as long as `context` (a longer one is held to it). Memory and decode do
    /// not read it.
    std::uint32_t prompt = 0;
    /// Tokens already in the KV cache when the prompt is prefilled (a conversation's earlier
    /// turns; llama-bench's `-d`): the prompt attends to them as well. 0: an empty cache. Held
    /// so that they and the prompt fit the context (prompt_start).
    std::uint32_t prompt_depth = 0;
};

/// The prompt length `s` gives the prefill rate: its prompt, else its context; at most
/// the context and at least one token.
constexpr std::uint32_t prompt_tokens(const inference_shape& s) noexcept {
    const std::uint32_t n = s.prompt && s.prompt < s.context ? s.prompt : s.context;
    return n ? n : 1;
}

/// Where the prompt of prompt_tokens(s) starts: `s.prompt_depth` cached tokens before it, at
/// most what the context leaves beside the prompt.
constexpr std::uint32_t prompt_start(const inference_shape& s) noexcept {
    const std::uint32_t p = prompt_tokens(s);
    const std::uint32_t room = s.context > p ? s.context - p : 0;
    return s.prompt_depth < room ? s.prompt_depth : room;
}

/// Memory an inference deployment needs, in bytes (an estimate).
struct memory_estimate {
    std::uint64_t weights_bytes = 0;
    std::uint64_t kv_cache_bytes = 0;
    std::uint64_t overhead_bytes = 0; ///< compute buffers + runtime allowance
    constexpr std::uint64_t total_bytes() const noexcept {
        return detail::sat_add(detail::sat_add(weights_bytes, kv_cache_bytes), overhead_bytes);
    }
};

/// Tokens per micro-batch the compute buffer is sized for (llama.cpp's default n_ubatch).
inline constexpr std::uint32_t compute_ubatch_tokens = 512;
/// Fixed allowance for the runtime itself (CUDA/Metal context, library workspaces) on top
/// of the buffers the model allocates. A planning margin chosen, not fitted: the
/// calibration data hold no clean measurement of it.
inline constexpr std::uint64_t runtime_allowance_bytes = 256 * units::mib;

namespace detail {
// Bits per weight of ggml block types that are no row of quant_table of their own
// (ggml-common.h block_q2_K 84 B, block_q3_K 110 B, block_q4_K 144 B, block_q5_K 176 B,
// each per 256 weights).
inline constexpr double ggml_q2_k_bpw = 84.0 * 8 / 256;
inline constexpr double ggml_q3_k_bpw = 110.0 * 8 / 256;
inline constexpr double ggml_q4_k_bpw = 144.0 * 8 / 256;
inline constexpr double ggml_q5_k_bpw = 176.0 * 8 / 256;

/// Bits per weight of the three kinds of matrices, for one format.
struct weight_layout {
    double block_bpw = 0;     ///< transformer blocks (dense FFN, attention)
    double expert_bpw = 0;    ///< MoE expert FFN matrices
    double embedding_bpw = 0; ///< token embedding
    double output_bpw = 0;    ///< output head (or the tied embedding when there is no head)
};

/// Base block type of a GGUF recipe for its token embedding.
constexpr double gguf_embedding_bpw(quant_format q) noexcept {
    switch (q) {
    case quant_format::q5_k_m:
    case quant_format::q5_k_s: return ggml_q5_k_bpw;
    case quant_format::q4_k_m:
    case quant_format::q4_k_s: return ggml_q4_k_bpw;
    case quant_format::q3_k_l:
    case quant_format::q3_k_m:
    case quant_format::q3_k_s: return ggml_q3_k_bpw;
    case quant_format::q2_k: return ggml_q2_k_bpw;
    case quant_format::iq2_xxs:
    case quant_format::iq2_xs:
    case quant_format::iq1_s:
    case quant_format::iq1_m: return ggml_q2_k_bpw;
    case quant_format::iq2_s:
    case quant_format::iq2_m:
    case quant_format::iq3_xxs:
    case quant_format::iq3_xs:
    case quant_format::iq3_m: return bits_per_weight(quant_format::iq3_s);
    default: return bits_per_weight(q);
    }
}
constexpr double gguf_output_bpw(quant_format q) noexcept {
    switch (q) {
    case quant_format::q8_0:
    case quant_format::mxfp4: return bits_per_weight(quant_format::q8_0);
    case quant_format::iq2_xxs:
    case quant_format::iq2_xs:
    case quant_format::iq3_xxs:
    case quant_format::iq1_s:
    case quant_format::iq2_s:
    case quant_format::iq2_m:
    case quant_format::iq1_m: return ggml_q5_k_bpw;
    default: return bits_per_weight(quant_format::q6_k);
    }
}

/// Bits per weight of the ggml type llama.cpp quantizes a file's tensors to before its
/// recipe changes some of them (`llama_ftype_get_default_type`, src/llama-quant.cpp), for
/// the formats whose recipe is modelled tensor by tensor; 0 for the others (K-quant mixes,
/// non-GGUF formats). An IQ2_S file is built on IQ2_XS blocks, not IQ2_S ones: the quantizer
/// maps that file type to GGML_TYPE_IQ2_XS and IQ2_M to GGML_TYPE_IQ2_S, so most of an
/// IQ2_S file is IQ2_XS (its stated 2.5 bpw is IQ2_XS plus the IQ3_S upgrades).
constexpr double gguf_default_bpw(quant_format q) noexcept {
    switch (q) {
    case quant_format::iq2_s: return bits_per_weight(quant_format::iq2_xs);
    case quant_format::iq2_m: return bits_per_weight(quant_format::iq2_s);
    case quant_format::iq3_xs:
    case quant_format::iq3_m: return bits_per_weight(quant_format::iq3_s);
    default: return info(q).scheme == quant_scheme::gguf_block ? bits_per_weight(q) : 0.0;
    }
}

// Llama-3-8B, the model the mixes' whole-file averages were measured on.
inline constexpr double mix_reference_parameters = 8'030'261'248.0;
inline constexpr double mix_reference_embedding = 128256.0 * 4096.0;

constexpr weight_layout layout_of(quant_format q) noexcept {
    const auto& r = info(q);
    weight_layout l{r.bits_per_weight, r.bits_per_weight, r.bits_per_weight, r.bits_per_weight};
    switch (r.scheme) {
    case quant_scheme::plain_float:
        // fp8 checkpoints quantize the blocks' matrices only (see the header).
        if (r.bits_per_weight < 16.0) l.embedding_bpw = l.output_bpw = 16.0;
        break;
    case quant_scheme::plain_int:
    case quant_scheme::microscaling:
        if (q == quant_format::mxfp4) {
            l.block_bpw = l.embedding_bpw = l.output_bpw = bits_per_weight(quant_format::q8_0);
            // llama.cpp's recipe puts only 3-D (expert) tensors in MXFP4: a dense model is all Q8_0
        } else {
            l.embedding_bpw = l.output_bpw = 16.0;
        }
        break;
    case quant_scheme::gguf_block:
        l.embedding_bpw = gguf_embedding_bpw(q);
        l.output_bpw = gguf_output_bpw(q);
        break;
    case quant_scheme::gguf_mix: {
        l.embedding_bpw = gguf_embedding_bpw(q);
        l.output_bpw = gguf_output_bpw(q);
        // The IQ mixes' table rate is already what their blocks average.
        if (gguf_default_bpw(q) > 0) break;
        const double outside = mix_reference_embedding * (l.embedding_bpw + l.output_bpw);
        const double blocks = mix_reference_parameters - 2.0 * mix_reference_embedding;
        l.block_bpw = l.expert_bpw = (r.bits_per_weight * mix_reference_parameters - outside) / blocks;
        break;
    }
    }
    return l;
}

/// Parameters of one block by the tensor classes llama.cpp's recipes tell apart, from the
/// shape (0 where the shape does not say: latent-attention models name and size their
/// attention tensors otherwise).
struct block_matrices {
    double attn_q = 0;      ///< hidden x heads x head_dim (attn_output has the same size)
    double attn_kv = 0;     ///< hidden x kv_heads x head_dim, each of attn_k and attn_v
    double ffn_down = 0;    ///< hidden x intermediate of the dense FFN (0 for MoE)
    double expert_down = 0; ///< every routed expert's down projection (MoE only)
};

constexpr block_matrices matrices_of(const model_spec& m) noexcept {
    block_matrices b;
    if (m.hidden_size == 0 || m.attention_heads == 0) return b;
    const double hidden = m.hidden_size;
    const double hd = m.head_dim ? m.head_dim : hidden / m.attention_heads;
    if (m.kv_values_per_token_per_layer == 0) {
        b.attn_q = hidden * m.attention_heads * hd;
        b.attn_kv = hidden * (m.kv_heads ? m.kv_heads : m.attention_heads) * hd;
    }
    const double ffn = hidden * m.intermediate_size;
    if (m.is_moe()) b.expert_down = ffn * m.experts;
    else b.ffn_down = ffn;
    return b;
}

/// Bits per weight of each tensor class of a GGUF recipe modelled tensor by tensor.
/// Follows llama.cpp `llama_tensor_get_type_impl` (src/llama-quant.cpp); the recipe's
/// default type (gguf_default_bpw) everywhere else. `ffn_down_first` holds the first n/8
/// layers' ffn_down, or with `down_more_bits` the layers llama.cpp's use_more_bits picks;
/// `ffn_gate_up_middle` the ffn_gate and ffn_up of layers n/8 to 7n/8.
struct gguf_block_types {
    double attn_q, attn_k, attn_v, attn_output, ffn_down_first, ffn_down_rest, ffn_gate_up_middle;
    bool down_more_bits = false;
};

/// llama.cpp's use_more_bits: the first and last eighth of the layers and every third between.
constexpr bool gguf_use_more_bits(std::uint32_t i, std::uint32_t n) noexcept {
    return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
}

constexpr gguf_block_types gguf_block_types_of(const model_spec& m, quant_format q) noexcept {
    const double base = gguf_default_bpw(q);
    gguf_block_types t{base, base, base, base, base, base, base};
    const double gqa = m.kv_heads ? static_cast<double>(m.attention_heads) / m.kv_heads : 1.0;
    const bool eight_experts = m.experts == 8;
    const double q2k = ggml_q2_k_bpw, q4k = ggml_q4_k_bpw, q5k = ggml_q5_k_bpw;
    const double iq3s = bits_per_weight(quant_format::iq3_s);
    switch (q) {
    case quant_format::iq1_s:
    case quant_format::iq1_m:
    case quant_format::iq2_xxs:
    case quant_format::iq2_xs:
    case quant_format::iq2_s:
    case quant_format::iq2_m: {
        // The IQ1/IQ2 branch: attn_v, the first n/8 ffn_down, attn_output (and attn_k of
        // 8-expert models) go up; IQ2_S and IQ2_M files to IQ3_S, the others to Q2_K.
        const bool iq2_s_or_m = q == quant_format::iq2_s || q == quant_format::iq2_m;
        const double up = iq2_s_or_m ? iq3s : q2k;
        t.attn_v = gqa >= 4 || m.experts >= 4 ? q4k : up;
        if (eight_experts) t.attn_k = q4k;
        t.ffn_down_first = up;
        if (eight_experts) t.attn_output = q5k;
        else if (q == quant_format::iq1_s || q == quant_format::iq1_m)
            t.attn_output = bits_per_weight(quant_format::iq2_xxs);
        else if (iq2_s_or_m) t.attn_output = iq3s;
        return t;
    }
    case quant_format::iq3_xxs:
        // With an importance matrix attn_v stays IQ3_XXS below GQA 4 and ffn_down is untouched.
        if (gqa >= 4) t.attn_v = q4k;
        t.attn_k = t.attn_q = bits_per_weight(quant_format::iq2_s);
        t.attn_output = eight_experts ? q5k : iq3s;
        break;
    case quant_format::iq3_xs: {
        // Queries, keys and the middle layers' ffn_gate/ffn_up drop to IQ3_XXS.
        const double iq3xxs = bits_per_weight(quant_format::iq3_xxs);
        if (gqa >= 4) t.attn_v = q4k;
        t.attn_q = t.attn_k = t.ffn_gate_up_middle = iq3xxs;
        if (eight_experts) t.attn_output = q5k;
        break;
    }
    case quant_format::iq3_s:
        if (gqa >= 4) t.attn_v = q4k;
        if (eight_experts) t.attn_output = q5k;
        break;
    case quant_format::iq3_m:
        // attn_v at Q4_K whatever the GQA; attn_output and the first ffn_down at Q4_K
        // (8-expert models: attn_output Q5_K, ffn_down Q4_K on the use_more_bits layers).
        t.attn_v = t.ffn_down_first = q4k;
        t.attn_output = eight_experts ? q5k : q4k;
        t.down_more_bits = eight_experts;
        break;
    case quant_format::iq4_nl:
    case quant_format::iq4_xs:
        if (gqa >= 4) t.attn_v = q5k;
        if (eight_experts) t.attn_output = q5k;
        break;
    default: break;
    }
    // Outside the IQ1/IQ2 branch, a model llama.cpp types as 70B (80 layers with grouped-
    // query attention, in its Llama and Qwen2 architectures) has an attn_v of Q4_K raised to
    // Q5_K, and 8-expert models keep attn_v and attn_k at Q8_0.
    const bool type_70b = m.layers == 80 && m.kv_heads != 0 && m.kv_heads < m.attention_heads &&
                          (m.family == "llama"sv || m.family == "qwen2"sv);
    if (type_70b && t.attn_v == q4k) t.attn_v = q5k;
    if (eight_experts) t.attn_v = t.attn_k = bits_per_weight(quant_format::q8_0);
    return t;
}

constexpr std::uint64_t bits_to_bytes(double weights, double bpw) noexcept {
    const double bytes = weights * bpw / 8.0;
    if (!(bytes > 0)) return 0;
    if (bytes >= 1.8e19) return ~std::uint64_t{0};
    const auto whole = static_cast<std::uint64_t>(bytes);
    return static_cast<double>(whole) < bytes ? whole + 1 : whole;
}

/// How a model's parameters divide: token embedding, output head, and per block the expert
/// FFN weights and the rest. Derived from the published total where there is one (so
/// biases, shared experts and MLA projections land in the blocks), else from the shape;
/// for a MoE model whose shape overstates its experts, from the published active count.
struct parameter_parts {
    double embedding = 0;    ///< vocab x hidden (0 when the shape is unknown)
    double output = 0;       ///< vocab x hidden unless tied, + the final norm
    double block_other = 0;  ///< per block: attention, dense FFN, norms, router
    double block_experts = 0; ///< per block: routed experts' FFN matrices
};

constexpr parameter_parts parts_of(const model_spec& m) noexcept {
    parameter_parts p;
    const double total = static_cast<double>(m.parameters ? m.parameters : estimate_parameters(m));
    const double emb = static_cast<double>(m.vocab_size) * static_cast<double>(m.hidden_size);
    p.embedding = emb;
    p.output = (m.tied_embeddings ? 0.0 : emb) + static_cast<double>(m.hidden_size);
    if (p.embedding + p.output > total) p.embedding = p.output = 0; // inconsistent shape: no split
    const double inside = total - p.embedding - p.output;
    if (m.layers == 0) {
        p.block_other = inside; // a bare parameter count: one "block" holding everything
        return p;
    }
    const double layers = static_cast<double>(m.layers);
    if (m.is_moe()) {
        const double experts = static_cast<double>(m.experts) * m.ffn_matrices() * static_cast<double>(m.hidden_size) *
                               static_cast<double>(m.intermediate_size) * layers;
        double e = experts < inside ? experts : inside;
        // A shape that claims every block's FFN as routed experts can hold more than the
        // published total (DeepSeek V3: its first layers are dense and a shared expert
        // runs beside the routed ones, which a model_spec cannot say). The published
        // active count then splits the blocks: it is the embedding, the head, the rest of
        // the blocks and experts_per_token / experts of the routed experts.
        const double routed = m.experts_per_token ? static_cast<double>(m.experts_per_token) / m.experts : 1.0;
        const double read = static_cast<double>(m.active_parameters) - p.embedding - p.output;
        if (experts >= inside && m.active_parameters < m.parameters && routed < 1.0 && read > 0 && read < inside) {
            const double split = (inside - read) / (1.0 - routed);
            if (split < inside) e = split;
        }
        p.block_experts = e / layers;
        p.block_other = (inside - e) / layers;
    } else {
        p.block_other = inside / layers;
    }
    return p;
}

/// `layout_of(q)` for model `m`: the block and expert rates of a GGUF format whose recipe
/// is modelled (gguf_default_bpw) become the averages over the recipe's tensor classes
/// (gguf_block_types_of), sized from the shape; the per-layer rules (first n/8 ffn_down,
/// middle ffn_gate/ffn_up) are spread over all blocks, so every block costs the same.
/// Other formats, and shapes that do not fit the parameter split, keep the table rate.
/// `p`: parts_of(m).
constexpr weight_layout layout_of(const model_spec& m, quant_format q, const parameter_parts& p) noexcept {
    weight_layout l = layout_of(q);
    const double base = gguf_default_bpw(q);
    if (!(base > 0) || m.layers == 0) return l;
    const auto b = matrices_of(m);
    const auto t = gguf_block_types_of(m, q);
    const std::uint32_t n = m.layers;
    std::uint32_t first_layers = n / 8;
    if (t.down_more_bits) {
        first_layers = 0;
        for (std::uint32_t i = 0; i < n; ++i) first_layers += gguf_use_more_bits(i, n) ? 1 : 0;
    }
    const double first = static_cast<double>(first_layers) / n;
    const double middle = static_cast<double>(7 * n / 8 - n / 8) / n;
    // Each per-layer rate less the default, averaged over the layers.
    const double down = first * t.ffn_down_first + (1.0 - first) * t.ffn_down_rest - base;
    const double gate_up = middle * (t.ffn_gate_up_middle - base);
    // ffn_gate (where there is one) and ffn_up have ffn_down's size; they count only where
    // the recipe moves them.
    const double ffn = gate_up != 0 ? static_cast<double>(m.ffn_matrices()) : 1.0;
    const double shaped = 2.0 * b.attn_q + 2.0 * b.attn_kv + ffn * b.ffn_down;
    if (shaped > 0 && shaped <= p.block_other) {
        const double extra = b.attn_q * (t.attn_q - base) + b.attn_q * (t.attn_output - base) +
                             b.attn_kv * (t.attn_k - base) + b.attn_kv * (t.attn_v - base) + b.ffn_down * down +
                             (m.ffn_matrices() - 1.0) * b.ffn_down * gate_up;
        l.block_bpw = base + extra / p.block_other;
    }
    if (b.expert_down > 0 && ffn * b.expert_down <= p.block_experts)
        l.expert_bpw = base + b.expert_down * (down + (m.ffn_matrices() - 1.0) * gate_up) / p.block_experts;
    return l;
}

constexpr weight_layout layout_of(const model_spec& m, quant_format q) noexcept { return layout_of(m, q, parts_of(m)); }

constexpr double layer_count(const model_spec& m) noexcept { return m.layers ? m.layers : 1.0; }

/// The bytes of `m`'s weights in `q` by where they sit, from one parameter split and
/// layout: layer_weight_bytes, non_layer_weight_bytes and weight_bytes at once.
struct weight_split {
    std::uint64_t layer = 0;     ///< one block
    std::uint64_t experts = 0;   ///< the routed experts of one block (part of `layer`)
    std::uint64_t non_layer = 0; ///< token embedding, output head, final norm
    std::uint64_t embedding = 0; ///< of which the token embedding (a tied matrix: all of it)
    std::uint64_t total = 0;
};
constexpr weight_split split_weights(const model_spec& m, quant_format q) noexcept {
    weight_split w;
    const auto p = parts_of(m);
    const auto l = layout_of(m, q, p);
    w.experts = bits_to_bytes(p.block_experts, l.expert_bpw);
    w.layer = bits_to_bytes(p.block_other, l.block_bpw) + w.experts;
    // A tied head is stored once, as the runtime stores the output matrix.
    const auto table = layout_of(q);
    const auto scheme = info(q).scheme;
    const bool gguf = scheme == quant_scheme::gguf_mix || scheme == quant_scheme::gguf_block;
    const double emb_bpw = m.tied_embeddings && gguf ? table.output_bpw : table.embedding_bpw;
    // GGUF recipes store the two at different types (the head at Q6_K/Q8_0 in most).
    w.embedding = bits_to_bytes(p.embedding, emb_bpw);
    w.non_layer = w.embedding + bits_to_bytes(p.output, table.output_bpw);
    if (m.parameters == 0 && m.layers == 0) return w; // total 0: nothing is known
    const double blocks = layer_count(m);
    w.total = sat_add(bits_to_bytes(p.block_other * blocks, l.block_bpw) +
                          bits_to_bytes(p.block_experts * blocks, l.expert_bpw),
                      w.non_layer);
    return w;
}

// Tokens one layer caches over the whole batch (see the header comment).
constexpr std::uint64_t tokens_cached(const model_spec& m, const inference_shape& s, bool sliding) noexcept {
    const std::uint64_t batch = s.batch ? s.batch : 1; // a batch of 0 is read as 1, as throughput.hpp does
    const std::uint64_t all = sat_mul(s.context, batch);
    if (!sliding || m.sliding_window == 0 || m.sliding_window >= s.context) return all;
    const std::uint64_t window = sat_add(sat_mul(m.sliding_window, batch), compute_ubatch_tokens);
    return window < all ? window : all;
}
} // namespace detail

/// Bytes of one transformer block's weights (every expert included) in format `q`.
constexpr std::uint64_t layer_weight_bytes(const model_spec& m, quant_format q) {
    return detail::split_weights(m, q).layer;
}

/// Bytes of the weights outside the blocks: token embedding, output head, final norm.
constexpr std::uint64_t non_layer_weight_bytes(const model_spec& m, quant_format q) {
    return detail::split_weights(m, q).non_layer;
}

/// Bytes of all the weights in format `q` (an estimate of the file size for GGUF formats).
constexpr std::uint64_t weight_bytes(const model_spec& m, quant_format q) { return detail::split_weights(m, q).total; }

/// KV cache bytes of one full-attention layer (the largest layer cache; a sliding-window
/// layer holds at most `sliding_window` tokens per sequence).
constexpr std::uint64_t layer_kv_cache_bytes(const model_spec& m, const inference_shape& s) {
    const std::uint64_t values = detail::sat_mul(m.kv_values_per_token(), detail::tokens_cached(m, s, false));
    return ai_hwaccel::weight_bytes(values, s.kv_cache);
}

/// KV cache bytes of the whole model: every layer, sliding-window layers capped.
constexpr std::uint64_t kv_cache_bytes(const model_spec& m, const inference_shape& s) {
    const std::uint64_t per_token = m.kv_values_per_token();
    const std::uint64_t sliding = m.sliding_window_layers < m.layers ? m.sliding_window_layers : m.layers;
    const std::uint64_t full = m.layers - sliding;
    const std::uint64_t full_values = detail::sat_mul(detail::sat_mul(per_token, full), detail::tokens_cached(m, s, false));
    const std::uint64_t swa_values = detail::sat_mul(detail::sat_mul(per_token, sliding), detail::tokens_cached(m, s, true));
    return detail::sat_add(ai_hwaccel::weight_bytes(full_values, s.kv_cache),
                           ai_hwaccel::weight_bytes(swa_values, s.kv_cache));
}

/// Compute buffers of one micro-batch plus the runtime allowance (see the header comment).
constexpr std::uint64_t overhead_bytes(const model_spec& m, const inference_shape& s) {
    std::uint64_t tokens = detail::sat_mul(s.context, s.batch);
    if (tokens > compute_ubatch_tokens || tokens == 0) tokens = compute_ubatch_tokens;
    const std::uint64_t ffn = m.is_moe() ? detail::sat_mul(m.intermediate_size, m.experts_per_token ? m.experts_per_token : 1)
                                         : m.intermediate_size;
    const std::uint64_t width = detail::sat_add(detail::sat_add(m.vocab_size, ffn), detail::sat_mul(2, m.hidden_size));
    return detail::sat_add(detail::sat_mul(detail::sat_mul(tokens, 4), width), runtime_allowance_bytes);
}

/// The part of overhead_bytes every device of a split model holds: the runtime allowance
/// and the activation buffers. The logits buffer (vocabulary wide) is the last stage's
/// alone.
constexpr std::uint64_t device_overhead_bytes(const model_spec& m, const inference_shape& s) {
    model_spec no_vocab = m;
    no_vocab.vocab_size = 0;
    return overhead_bytes(no_vocab, s);
}

/// Weights + KV cache + overhead for serving `m` in format `q` (an estimate).
constexpr memory_estimate estimate_memory(const model_spec& m, quant_format q, const inference_shape& s = {}) {
    memory_estimate e;
    e.weights_bytes = weight_bytes(m, q);
    e.kv_cache_bytes = kv_cache_bytes(m, s);
    e.overhead_bytes = overhead_bytes(m, s);
    return e;
}

// Examples a reader can check by hand.
// Llama 3 8B at 8192 tokens, f16 cache: 32 layers x 2 x 8 x 128 values x 2 B x 8192 = 1 GiB
// (llama.cpp prints "KV self size = 1024.00 MiB").
static_assert(kv_cache_bytes(*find_model("llama-3-8b"), {.context = 8192}) == units::gib);
// Llama 2 7B has no GQA: 32 x 2 x 32 x 128 x 2 B = 512 KiB per token.
static_assert(kv_cache_bytes(*find_model("llama-2-7b"), {.context = 4096}) == 2 * units::gib);
// A 7B model at Q4_K_M with a 4k context fits in 8 GiB.
static_assert(estimate_memory(*find_model("llama-2-7b"), quant_format::q4_k_m).total_bytes() < 8 * units::gib);
static_assert(estimate_memory(*find_model("mistral-7b"), quant_format::q4_k_m).total_bytes() < 8 * units::gib);
// bf16 weights are exactly two bytes per parameter.
static_assert(weight_bytes(*find_model("llama-3.1-8b"), quant_format::bf16) == 2 * 8'030'261'248ull);
// Llama-3-8B Q4_K_M reproduces the table's whole-file average (4.58 GiB) by construction.
static_assert(weight_bytes(*find_model("llama-3-8b"), quant_format::q4_k_m) > 4'917'000'000ull &&
              weight_bytes(*find_model("llama-3-8b"), quant_format::q4_k_m) < 4'919'000'000ull);
// IQ1_S keeps attn_v, attn_output, the first ffn_down tensors, embedding and head above
// 1.5625 bits: Llama 3 70B's file is 14.29 GiB, not the 12.8 GiB of IQ1_S throughout.
static_assert(weight_bytes(*find_model("llama-3-70b"), quant_format::iq1_s) > 15'200'000'000ull &&
              weight_bytes(*find_model("llama-3-70b"), quant_format::iq1_s) < 15'500'000'000ull);
// IQ3_M is IQ3_S with attn_v, attn_output and the first ffn_down tensors at Q4_K: Llama 3
// 70B's file is 29.74 GiB (31.93e9 bytes; ours is 0.3 % small, its attn_v is Q5_K there).
static_assert(weight_bytes(*find_model("llama-3-70b"), quant_format::iq3_m) > 31'700'000'000ull &&
              weight_bytes(*find_model("llama-3-70b"), quant_format::iq3_m) < 32'000'000'000ull);
// Sliding windows cap the cache: Gemma 3 27B at 128k caches its 10 global layers at full
// length and its 52 sliding layers at its 1024-token window and a 512-token micro-batch
// (4096 values of 2 B per token and layer).
static_assert(kv_cache_bytes(*find_model("gemma-3-27b"), {.context = 131072}) ==
              4096ull * 2 * (10 * 131072 + 52 * (1024 + 512)));
// MLA: DeepSeek V3 caches 576 values per token and layer.
static_assert(kv_cache_bytes(*find_model("deepseek-v3"), {.context = 1}) == 61ull * 576 * 2);

AI_HWACCEL_NAMESPACE_END
