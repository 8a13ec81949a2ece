// ai-hwaccel plan: how fast one device runs a model (an estimate).
//
// Decode (one new token per sequence) is bound by memory bandwidth: every token reads the
// weights it uses — all of a dense model's blocks, of a MoE model's the share of the routed
// experts the batch's tokens go to (detail::routed_share), and the output head (the token
// embedding is a lookup of one row, not a read of the matrix) — plus the whole KV cache at
// the current depth. Time per token =
// bytes / (spec bandwidth x efficiency) + a fixed cost per layer and token (kernel
// launches, synchronisation, sampling), or the compute time when that is larger.
//
// Prefill (the prompt) is bound by compute: 2 x active parameters FLOPs per token (the
// output head once per prompt: only the last position's logits are wanted), plus
// attention's quadratic term (QK^T and AV over the causal prefix, which includes the
// tokens already cached when the prompt follows earlier turns: 2 x depth x heads x
// head_dim per layer and token on average), over the device's dense peak for the data
// type the format computes in, times an efficiency; or by memory when the weights a
// micro-batch's tokens use (a MoE model's routed share for that many tokens), read once
// per micro-batch, take longer. (A micro-batch also reads the cache it attends to; that is
// left out of the memory side, where prefill is seldom bound: at 32k cached tokens Llama
// 3 8B's cache is about the size of its Q4_K_M weights, read once for 512 tokens.)
//
// Which peak: formats a runtime dequantizes on the fly (GGUF, GPTQ/AWQ int4, MXFP4:
// `quant_info::dequantizable`) multiply in fp16 after dequantization — the measured
// llama.cpp prefill rates follow the fp16 peak, not the int8 one (A100 and RTX 4090 keep
// the same Q4_K_M : F16 ratio though their int8 : fp16 peaks differ 2 : 4) — at a lower
// efficiency than plain fp16 weights (the dequantization). Other formats use their
// `native_compute` type where the device supports it (fp8 on Hopper, fp4 on Blackwell),
// else fp16, bf16, fp32 in that order (FP8 and NVFP4 weights elsewhere are dequantized,
// at the dequantized efficiency: dequantized_on_gpus_only). A device known only by its
// fp32 rate (no matrix units, or none the catalogue quotes: Apple's M1 and M2 GPUs run
// fp16 at the fp32 rate) gets its own efficiency, as runtimes come closer to a vector ALU
// peak than to a tensor one.
//
// Units: bandwidth decimal GB/s, peaks TFLOPS dense, results tokens per second per
// sequence. The constants are fitted by tools/calibrate.py on
// /work/shared/data/calibration-measurements.csv (llama.cpp rows); tests/calibration/
// REPORT.md gives the fit and its errors. A device whose bandwidth (decode) or peak
// (prefill) is unknown gets 0 for that rate: unknown, not zero speed.
//
// Where the estimate is known to run high (README, "out of sample"; the rows are in
// tests/calibration/h200/): a batch's decode counts the weights read once per step and
// the matrix peak, which llama.cpp does not reach with a cache per sequence (on an H200,
// 0.9 times the measured rate at 2 sequences, 5.0 at 128 in Q4_K_M); and prefill on
// Hopper, fitted on older devices, comes out 1.4 to 2.7 times llama.cpp's measured rate.
// Read those as what the hardware allows, not what llama.cpp delivers.
#pragma once

#include "ai_hwaccel/config.hpp"
#include "ai_hwaccel/core/profile.hpp"
#include "ai_hwaccel/core/quantization.hpp"
#include "ai_hwaccel/plan/memory.hpp"
#include "ai_hwaccel/plan/model.hpp"

#include <cstdint>

AI_HWACCEL_NAMESPACE_BEGIN

/// The fitted constants of the throughput model. Defaults are the fitted values.
struct throughput_constants {
    /// Fraction of the spec memory bandwidth decode achieves: 0.819, fitted (least squares
    /// on log error, tools/calibrate.py) on the 107 llama.cpp decode rows of the training
    /// devices in calibration-measurements.csv.
    double decode_bandwidth_efficiency = 0.819;
    /// Fixed cost per layer and decoded token: 124 us (kernel launches, synchronisation,
    /// sampling spread over the layers), fitted jointly with the efficiency above.
    double decode_seconds_per_layer = 124e-6;
    /// Fraction of the dense peak prefill achieves with plain float weights: 0.422, fitted
    /// on the 80 llama.cpp prefill rows of the training devices with a known peak.
    double prefill_compute_efficiency = 0.422;
    /// Multiplier on that efficiency (or on the vector one below) for formats dequantized
    /// on the fly: 0.840, fitted jointly on the same rows.
    double prefill_dequantized_factor = 0.840;
    /// Fraction of the peak prefill achieves when that peak is the fp32 rate of plain
    /// vector ALUs (compute_rate::vector: the catalogue gives the device no half-precision
    /// or matrix-unit figure, as for Apple's M1 and M2 GPUs): runtimes reach a larger
    /// share of a vector peak than of a matrix-unit peak. Replaces
    /// prefill_compute_efficiency there: 0.756, fitted jointly on the same rows (37 of
    /// them have such a peak).
    double prefill_vector_efficiency = 0.756;
    /// Efficiency of the attention FLOPs relative to the matrix multiplies' (attention
    /// kernels run far below the matmul peak): 0.207, fitted jointly on the same rows.
    double prefill_attention_efficiency = 0.207;
    /// Tokens per micro-batch in prefill: the weights are read once per micro-batch.
    /// llama.cpp's default n_ubatch.
    std::uint32_t prefill_ubatch_tokens = 512;
    /// Tokens per logical batch in prefill: llama.cpp's default n_batch. On a pipeline of
    /// devices (layer split) the micro-batches of one batch follow each other through the
    /// stages, each stage working on one while the next works on the one before; the
    /// pipeline drains between batches. See pipelined_prefill_seconds. Not fitted: the
    /// runtime's setting. 0: no overlap (a runtime that runs one micro-batch at a time).
    std::uint32_t prefill_batch_tokens = 2048;
    /// The runtime multiplies fp16 matrices with fp16 accumulation (llama.cpp's cuBLAS
    /// path does). GeForce boards run that at twice the fp32-accumulate rate the
    /// catalogue quotes for them (core/catalogue/nvidia.inc: GeForce tensor cores run
    /// fp16 with fp32 accumulate at half rate); data-centre and workstation boards run
    /// both at the quoted rate. Not fitted: a property of the boards.
    bool fp16_accumulate = true;
};

/// Decode and prefill rates of one device (estimates).
struct throughput_estimate {
    double decode_tokens_per_second = 0;  ///< per sequence at the shape's depth; 0 = unknown
    double prefill_tokens_per_second = 0; ///< for a prompt of prompt_tokens(shape); 0 = unknown
    double decode_bytes_per_token = 0;    ///< what decode reads per step (all sequences)
    bool decode_memory_bound = true;
};

namespace detail {
/// The share of a MoE block's routed experts that one decode step of `batch` sequences
/// reads. Each sequence's token goes to k of the E experts, so an expert is left idle by
/// all of them with probability (1 - k/E)^batch when routing is uniform: a step reads
/// 1 - (1 - k/E)^batch of the experts, k/E for one sequence and nearly all of them for a
/// large batch. Real routers favour some experts, which leaves more of them idle; uniform
/// routing reads the most, so the share is an upper bound. 1 for a dense model.
constexpr double routed_share(const model_spec& m, std::uint32_t batch) noexcept {
    if (!m.is_moe() || m.experts == 0 || m.experts_per_token == 0 || m.experts_per_token >= m.experts) return 1.0;
    double idle = 1.0 - static_cast<double>(m.experts_per_token) / static_cast<double>(m.experts);
    double all_idle = 1.0; // idle^batch by squaring
    for (std::uint32_t b = batch ? batch : 1; b != 0 && all_idle > 0; b >>= 1) {
        if (b & 1u) all_idle *= idle;
        idle *= idle;
    }
    return 1.0 - all_idle;
}

/// Bytes of weights one decode step of `batch` sequences reads: every block (only the
/// routed share of the experts, see routed_share) and the output head; the embedding
/// lookup reads one row per sequence.
constexpr double decode_weight_bytes(const model_spec& m, quant_format q, std::uint32_t batch = 1) noexcept {
    const auto p = parts_of(m);
    const auto l = layout_of(m, q, p);
    const double blocks = layer_count(m);
    const double routed = routed_share(m, batch);
    const auto scheme = info(q).scheme;
    const bool gguf = scheme == quant_scheme::gguf_mix || scheme == quant_scheme::gguf_block;
    const double head_bpw = m.tied_embeddings && !gguf ? l.embedding_bpw : l.output_bpw;
    // A tied model's head is the embedding matrix; an untied one's is `output`.
    const double head = m.tied_embeddings ? p.embedding : p.output;
    return (p.block_other * blocks * l.block_bpw + p.block_experts * blocks * routed * l.expert_bpw +
            head * head_bpw) /
           8.0;
}

constexpr double attention_width(const model_spec& m) noexcept {
    const double hd = m.head_dim ? m.head_dim : (m.attention_heads ? static_cast<double>(m.hidden_size) / m.attention_heads : 0);
    return hd * m.attention_heads;
}

/// Positions a token at `depth` attends to, averaged over the layers: `depth` in a full
/// layer, at most the window in a sliding one. (Decode.)
constexpr double average_full_depth(const model_spec& m, double depth) noexcept {
    if (m.layers == 0) return 0;
    const double sliding = m.sliding_window_layers < m.layers ? m.sliding_window_layers : m.layers;
    const double capped = m.sliding_window && m.sliding_window < depth ? m.sliding_window : depth;
    return ((m.layers - sliding) * depth + sliding * capped) / m.layers;
}

/// Twice the positions a prompt token attends to on average when a prompt of `prompt`
/// tokens is processed causally after `start` tokens already in the cache, averaged over the
/// layers. A full layer's token at position x sees x positions: twice the mean over
/// [start, start + prompt) is 2·start + prompt. A sliding layer's sees min(x, W): the same
/// while the prompt ends within the window, 2W once it starts past it, and in between
/// 2·((W² - start²)/2 + (start + prompt - W)·W) / prompt; from an empty cache that is
/// 2W - W²/prompt, a mean that tends to W (not W/2) as the prompt grows. (Prefill.)
constexpr double average_prefill_depth(const model_spec& m, double prompt, double start = 0) noexcept {
    if (m.layers == 0 || prompt <= 0) return 0;
    if (start < 0) start = 0;
    const double sliding = m.sliding_window_layers < m.layers ? m.sliding_window_layers : m.layers;
    const double w = m.sliding_window;
    const double full = 2.0 * start + prompt;
    double windowed = full;
    if (w > 0 && start + prompt > w) {
        const double below = start < w ? (w * w - start * start) / 2.0 : 0.0; // positions x < W see x
        const double from = start < w ? w : start;                               // those from here see W
        windowed = 2.0 * (below + (start + prompt - from) * w) / prompt;
    }
    return ((m.layers - sliding) * full + sliding * windowed) / m.layers;
}

/// Parameters a token multiplies with: those it reads less an untied input embedding,
/// which is a table lookup, not a matrix product (Kaplan et al. 2020 count compute
/// without it). A tied model's matrix is the output head too, so it stays.
constexpr double matmul_parameters(const model_spec& m) noexcept {
    const double active = static_cast<double>(m.parameters_per_token());
    const double embedding = m.tied_embeddings ? 0.0 : static_cast<double>(m.vocab_size) * m.hidden_size;
    return embedding < active ? active - embedding : active;
}

/// Parameters of the output head's matrix (vocabulary x hidden; a tied model's is the
/// embedding matrix); 0 for a shape too inconsistent to split (see parts_of).
constexpr double head_parameters(const model_spec& m) noexcept {
    const auto p = parts_of(m);
    return m.tied_embeddings ? p.embedding : (p.output > m.hidden_size ? p.output - m.hidden_size : 0.0);
}
} // namespace detail

/// Bytes one decode step reads at the shape's depth: weights used + the KV cache of every
/// sequence.
constexpr double decode_bytes_per_token(const model_spec& m, quant_format q, const inference_shape& s = {}) {
    return detail::decode_weight_bytes(m, q, s.batch) + static_cast<double>(kv_cache_bytes(m, s));
}

/// FLOPs per prompt token when a prompt of `prompt` tokens is processed after `start`
/// tokens already in the cache (0: an empty one): 2 x the parameters it multiplies with in
/// the blocks (active ones), the output head's 2 x vocabulary x hidden once per prompt (only
/// the last position's logits are computed: llama.cpp marks only the batch's last token as
/// an output, and a server samples from that one alone), and the causal attention average
/// (2 x (start + prompt/2) x 2 x width x layers, sliding layers capped by their window).
/// Returned apart so a caller can weigh them.
struct prefill_flops {
    double matmul = 0;
    double attention = 0;
};
constexpr prefill_flops prefill_flops_per_token(const model_spec& m, std::uint32_t prompt, std::uint32_t start = 0) {
    prefill_flops f;
    const double all = detail::matmul_parameters(m);
    const double head = detail::head_parameters(m);
    f.matmul = head < all ? 2.0 * (all - head) + 2.0 * head / (prompt ? prompt : 1) : 2.0 * all;
    f.attention = 2.0 * detail::average_prefill_depth(m, prompt, start) * detail::attention_width(m) * m.layers;
    return f;
}

/// The data type prefill multiplies in on `device` for format `q`, and the peak (TFLOPS
/// dense) for it; 0 when the device's peaks are unknown.
struct compute_rate {
    dtype type = dtype::fp16;
    double peak_tflops = 0;
    /// The peak is the fp32 rate of a device with no half-precision figure: the vector
    /// ALUs' rate (throughput_constants::prefill_vector_efficiency applies).
    bool vector = false;
};
constexpr compute_rate prefill_compute_rate(const accelerator_profile& device, quant_format q,
                                            bool fp16_accumulate = true) {
    const auto& r = info(q);
    compute_rate out;
    if ((!r.dequantizable || dequantized_on_gpus_only(q)) && device.supports(r.native_compute)) {
        out = {r.native_compute, device.peak[r.native_compute]};
    } else {
        for (dtype d : {dtype::fp16, dtype::bf16, dtype::fp32})
            if (device.supports(d)) {
                out = {d, device.peak[d]};
                break;
            }
    }
    out.vector = out.type == dtype::fp32 && !device.supports(dtype::fp16) && !device.supports(dtype::bf16);
    if (out.type == dtype::fp16 && fp16_accumulate && device.maker == vendor::nvidia &&
        (detail::icontains(device.name.view(), "GeForce") ||
         (device.spec && detail::icontains(device.spec->name, "GeForce"))))
        out.peak_tflops *= 2;
    return out;
}

namespace detail {
/// The FLOPs per second prefill and decode's compute side reach on `device` for `q`: its
/// peak for the type it multiplies in, times the efficiency that applies.
constexpr double effective_flops(const accelerator_profile& device, quant_format q, const throughput_constants& c) {
    const auto rate = prefill_compute_rate(device, q, c.fp16_accumulate);
    const bool dequantized = info(q).dequantizable && rate.type != info(q).native_compute;
    return rate.peak_tflops * 1e12 * (rate.vector ? c.prefill_vector_efficiency : c.prefill_compute_efficiency) *
           (dequantized ? c.prefill_dequantized_factor : 1.0);
}

/// One decode step of `s.batch` sequences (at least 1) that reads `bytes` from `device`'s
/// memory: its rate per sequence (0 when the bandwidth is unknown, or when the compute
/// rate is and more than one sequence shares the step: its compute grows with the batch
/// and may bound it, as prefill's does) and whether memory, not compute, bounds it.
/// estimate_throughput passes decode_bytes_per_token; a caller whose device holds a larger
/// share of the cache (a tensor-parallel rank with copied KV heads, plan/cost.hpp) passes
/// more.
struct decode_step {
    double tokens_per_second = 0;
    bool memory_bound = true;
};
constexpr decode_step decode_rate(const accelerator_profile& device, const model_spec& m, quant_format q,
                                  const inference_shape& s, double bytes, const throughput_constants& c) {
    decode_step out;
    const double bw = device.memory_bandwidth_gbps.value_or(0) * 1e9 * c.decode_bandwidth_efficiency;
    if (!(bw > 0)) return out;
    const double flops = effective_flops(device, q, c);
    const double batch = s.batch > 0 ? static_cast<double>(s.batch) : 1.0;
    if (!(flops > 0) && batch > 1) return out; // a CPU without a peak: unknown, not "memory-bound"
    const double memory_s = bytes / bw;
    // Each sequence's token: its matrix products, and attention over the `context`
    // positions it sees (QK and AV: 4 x depth x width a layer).
    const double matmul = 2.0 * matmul_parameters(m);
    const double attention = 4.0 * average_full_depth(m, s.context) * attention_width(m) * m.layers;
    const double compute_s = flops > 0 ? batch * (matmul + attention / c.prefill_attention_efficiency) / flops : 0;
    out.memory_bound = memory_s >= compute_s;
    const double step = (memory_s > compute_s ? memory_s : compute_s) + c.decode_seconds_per_layer * m.layers;
    out.tokens_per_second = step > 0 ? 1.0 / step : 0;
    return out;
}
} // namespace detail

/// Decode and prefill rates of `m` in format `q` on one device (estimates). The model is
/// assumed to be wholly on the device; a split model is plan/shard.hpp's business. The
/// decode depth is `s.context`, the prompt prompt_tokens(s) after prompt_start(s) cached
/// tokens.
constexpr throughput_estimate estimate_throughput(const accelerator_profile& device, const model_spec& m,
                                                  quant_format q, const inference_shape& s = {},
                                                  const throughput_constants& c = {}) {
    throughput_estimate e;
    const double bw = device.memory_bandwidth_gbps.value_or(0) * 1e9 * c.decode_bandwidth_efficiency;
    const double flops = detail::effective_flops(device, q, c);
    inference_shape one = s; // a batch of 0 sequences is read as 1 throughout
    if (one.batch == 0) one.batch = 1;

    // Decode: one step produces `batch` tokens.
    e.decode_bytes_per_token = decode_bytes_per_token(m, q, one);
    const auto step = detail::decode_rate(device, m, q, one, e.decode_bytes_per_token, c);
    e.decode_tokens_per_second = step.tokens_per_second;
    e.decode_memory_bound = step.memory_bound;
    // Prefill: compute for the prompt, or the weights a micro-batch uses, read once per
    // micro-batch (its tokens route to routed_share of a MoE model's experts).
    if (flops > 0) {
        const std::uint32_t prompt = prompt_tokens(one);
        const auto f = prefill_flops_per_token(m, prompt, prompt_start(one));
        const double compute_s = (f.matmul + f.attention / c.prefill_attention_efficiency) / flops;
        const std::uint32_t ubatch =
            c.prefill_ubatch_tokens && c.prefill_ubatch_tokens < prompt ? c.prefill_ubatch_tokens : prompt;
        const double memory_s =
            bw > 0 && ubatch > 0 ? detail::decode_weight_bytes(m, q, ubatch) / static_cast<double>(ubatch) / bw : 0;
        const double t = compute_s > memory_s ? compute_s : memory_s;
        e.prefill_tokens_per_second = t > 0 ? 1.0 / t : 0;
    }
    return e;
}

/// Seconds per token to prefill a prompt of `prompt` tokens through pipeline stages that
/// take `stage_seconds_sum` per token together and `stage_seconds_max` per token at the
/// slowest one (each a stage's compute, plus its all-reduces and the hop to the next).
/// A batch of U micro-batches takes one pass through every stage for the first micro-batch
/// and then one slowest stage for each of the U - 1 behind it, so per token
///   (sum + (U - 1) x max) / U,   U = ceil(min(batch, prompt) / min(ubatch, prompt)).
/// One stage, a prompt of one micro-batch, or prefill_batch_tokens 0 gives `sum`: no
/// overlap. (The batch's micro-batches are taken to cost alike; attention over a longer
/// prefix makes the later ones somewhat slower, which this does not model.)
constexpr double pipelined_prefill_seconds(double stage_seconds_sum, double stage_seconds_max, std::uint32_t prompt,
                                           const throughput_constants& c = {}) noexcept {
    if (c.prefill_batch_tokens == 0) return stage_seconds_sum;
    const std::uint32_t tokens = prompt ? prompt : 1;
    const std::uint32_t ubatch = c.prefill_ubatch_tokens && c.prefill_ubatch_tokens < tokens ? c.prefill_ubatch_tokens
                                                                                             : tokens;
    const std::uint32_t batch = c.prefill_batch_tokens && c.prefill_batch_tokens < tokens ? c.prefill_batch_tokens
                                                                                          : tokens;
    const std::uint32_t u = batch > ubatch ? (batch + ubatch - 1) / ubatch : 1;
    if (u <= 1 || !(stage_seconds_max < stage_seconds_sum)) return stage_seconds_sum;
    return (stage_seconds_sum + (u - 1) * stage_seconds_max) / u;
}

AI_HWACCEL_NAMESPACE_END
