// ai-hwaccel core: quantization formats.
//
// One row per weight format people deploy: plain floating point (fp32, bf16, fp16), fp8
// (e4m3, e5m2), integer (int8 per-channel, int4 with group-128 scales as GPTQ/AWQ store
// it), microscaling fp4 (OCP MXFP4, NVIDIA NVFP4), and the llama.cpp GGUF formats.
//
// `bits_per_weight` is the true storage cost, block scales included. For a uniform block
// format it is exactly block_bytes * 8 / block_weights, and a static_assert holds the two
// together. The GGUF "_S/_M/_L" names are mixes: llama.cpp stores some tensors of a model
// in a wider block type, so their cost is a whole-file average. Those rows give the
// average llama.cpp's own quantize tool publishes for Llama-3-8B (size in GiB × 2^33 /
// 8.03e9 weights) and name the dominant block type in `base`. The IQ mixes (IQ3_M, IQ3_XS,
// IQ2_M) have no published size: their rows give the rate the quantize tool states for
// them, which is what their transformer blocks average (plan/memory.hpp models their
// recipes tensor by tensor), comparable with the uniform IQ rows beside them. IQ3_XS
// stores some tensors narrower than its base (IQ3_XXS), so it costs less than IQ3_S.
#pragma once

#include "ai_hwaccel/config.hpp"
#include "ai_hwaccel/core/taxonomy.hpp"
#include "ai_hwaccel/core/text.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

AI_HWACCEL_NAMESPACE_BEGIN

enum class quant_format : std::uint8_t {
    fp32,
    bf16,
    fp16,
    fp8_e4m3,
    fp8_e5m2,
    int8,
    int4,
    mxfp4,
    nvfp4,
    q8_0,
    q6_k,
    q5_k_m,
    q5_k_s,
    q5_1,
    q5_0,
    q4_k_m,
    q4_k_s,
    q4_1,
    q4_0,
    q3_k_l,
    q3_k_m,
    q3_k_s,
    q2_k,
    iq4_nl,
    iq4_xs,
    iq3_m,
    iq3_s,
    iq3_xs,
    iq3_xxs,
    iq2_m,
    iq2_s,
    iq2_xs,
    iq2_xxs,
    iq1_m,
    iq1_s,
};
inline constexpr std::size_t quant_format_count = 35;

/// How a format stores its weights.
enum class quant_scheme : std::uint8_t {
    plain_float,  ///< one IEEE/bfloat/fp8 value per weight
    plain_int,    ///< integers with per-channel or per-group scales kept beside the tensor
    microscaling, ///< small blocks sharing one scale (OCP MX, NVFP4)
    gguf_block,   ///< a llama.cpp block type, uniform across the tensor
    gguf_mix,     ///< a llama.cpp recipe mixing block types across tensors
};

struct quant_info {
    quant_format id;
    std::string_view name; ///< canonical spelling (llama.cpp's for GGUF formats)
    name_list<5> aliases;
    quant_scheme scheme;
    /// Average storage bits per weight, scales included.
    double bits_per_weight;
    /// Weights per block and bytes per block for uniform block formats (0 otherwise).
    unsigned block_weights;
    unsigned block_bytes;
    /// The data type the matrix multiply runs in on hardware that executes the format
    /// natively (fp8 on Hopper, fp4 on Blackwell, int8 on tensor cores…).
    dtype native_compute;
    /// True when runtimes commonly run it by dequantizing weights to fp16/bf16 on the fly,
    /// so hardware without `native_compute` can still run it (GGUF, GPTQ/AWQ int4, MXFP4;
    /// FP8 and NVFP4 on GPUs only, see dequantized_on_gpus_only).
    bool dequantizable;
    /// llama.cpp `llama_ftype` written in GGUF `general.file_type`, -1 if none.
    int gguf_file_type;
    /// ggml tensor type of a uniform format, -1 for mixes and non-GGUF formats.
    int ggml_type;
    /// For mixes: the block type most tensors use. Otherwise the row itself.
    quant_format base;
};

namespace detail {
constexpr double block_bpw(unsigned bytes, unsigned weights) noexcept {
    return static_cast<double>(bytes) * 8.0 / static_cast<double>(weights);
}
} // namespace detail

// Block layouts (bytes per block) follow ggml's block_* structs in ggml-common.h; the
// OCP Microscaling spec v1.0 for MXFP4 (32 E2M1 values + one E8M0 scale) and NVIDIA's
// NVFP4 (16 E2M1 values + one E4M3 scale; the per-tensor fp32 scale is negligible).
// Mix averages: llama.cpp tools/quantize/quantize.cpp QUANT_OPTIONS sizes @ Llama-3-8B.
inline constexpr std::array<quant_info, quant_format_count> quant_table{{
    // id, name, aliases, scheme, bpw, block weights, block bytes, compute, dequant, ftype, ggml, base
    {quant_format::fp32, "FP32", {"F32", "float32", "float", "none"}, quant_scheme::plain_float,
     32.0, 1, 4, dtype::fp32, false, 0, 0, quant_format::fp32},
    {quant_format::bf16, "BF16", {"bfloat16"}, quant_scheme::plain_float, 16.0, 1, 2, dtype::bf16,
     false, 32, 30, quant_format::bf16},
    {quant_format::fp16, "FP16", {"F16", "float16", "half"}, quant_scheme::plain_float, 16.0, 1, 2,
     dtype::fp16, false, 1, 1, quant_format::fp16},
    {quant_format::fp8_e4m3, "FP8", {"fp8_e4m3", "e4m3", "float8_e4m3fn", "f8e4m3"},
     quant_scheme::plain_float, 8.0, 1, 1, dtype::fp8, true, -1, -1, quant_format::fp8_e4m3},
    {quant_format::fp8_e5m2, "FP8_E5M2", {"e5m2", "float8_e5m2", "f8e5m2"},
     quant_scheme::plain_float, 8.0, 1, 1, dtype::fp8, false, -1, -1, quant_format::fp8_e5m2},
    // Per-output-channel scales: one value per row of thousands of weights, below 0.01 bit.
    {quant_format::int8, "INT8", {"i8", "w8a8"}, quant_scheme::plain_int, 8.0, 1, 1, dtype::int8,
     false, -1, -1, quant_format::int8},
    // GPTQ/AWQ layout: 4-bit weights, one fp16 scale and one 4-bit zero point per group of
    // 128, i.e. 133 bytes per 256 weights.
    {quant_format::int4, "INT4", {"i4", "w4a16", "gptq", "awq"}, quant_scheme::plain_int,
     detail::block_bpw(133, 256), 256, 133, dtype::int4, true, -1, -1, quant_format::int4},
    {quant_format::mxfp4, "MXFP4", {"fp4"}, quant_scheme::microscaling,
     detail::block_bpw(17, 32), 32, 17, dtype::fp4, true, 38, 39, quant_format::mxfp4},
    {quant_format::nvfp4, "NVFP4", {}, quant_scheme::microscaling, detail::block_bpw(9, 16),
     16, 9, dtype::fp4, true, -1, -1, quant_format::nvfp4},
    {quant_format::q8_0, "Q8_0", {}, quant_scheme::gguf_block, detail::block_bpw(34, 32), 32, 34,
     dtype::int8, true, 7, 8, quant_format::q8_0},
    {quant_format::q6_k, "Q6_K", {}, quant_scheme::gguf_block, detail::block_bpw(210, 256), 256,
     210, dtype::int8, true, 18, 14, quant_format::q6_k},
    {quant_format::q5_k_m, "Q5_K_M", {"Q5_K"}, quant_scheme::gguf_mix, 5.33 * 8.589934592 / 8.03, 0,
     0, dtype::int8, true, 17, -1, quant_format::q5_k_s},
    {quant_format::q5_k_s, "Q5_K_S", {}, quant_scheme::gguf_mix, 5.21 * 8.589934592 / 8.03, 0, 0,
     dtype::int8, true, 16, 13, quant_format::q5_k_s},
    {quant_format::q5_1, "Q5_1", {}, quant_scheme::gguf_block, detail::block_bpw(24, 32), 32, 24,
     dtype::int8, true, 9, 7, quant_format::q5_1},
    {quant_format::q5_0, "Q5_0", {}, quant_scheme::gguf_block, detail::block_bpw(22, 32), 32, 22,
     dtype::int8, true, 8, 6, quant_format::q5_0},
    {quant_format::q4_k_m, "Q4_K_M", {"Q4_K"}, quant_scheme::gguf_mix, 4.58 * 8.589934592 / 8.03, 0,
     0, dtype::int8, true, 15, -1, quant_format::q4_k_s},
    {quant_format::q4_k_s, "Q4_K_S", {}, quant_scheme::gguf_mix, 4.37 * 8.589934592 / 8.03, 0, 0,
     dtype::int8, true, 14, 12, quant_format::q4_k_s},
    {quant_format::q4_1, "Q4_1", {}, quant_scheme::gguf_block, detail::block_bpw(20, 32), 32, 20,
     dtype::int8, true, 3, 3, quant_format::q4_1},
    {quant_format::q4_0, "Q4_0", {}, quant_scheme::gguf_block, detail::block_bpw(18, 32), 32, 18,
     dtype::int8, true, 2, 2, quant_format::q4_0},
    {quant_format::q3_k_l, "Q3_K_L", {}, quant_scheme::gguf_mix, 4.03 * 8.589934592 / 8.03, 0, 0,
     dtype::int8, true, 13, -1, quant_format::q3_k_s},
    {quant_format::q3_k_m, "Q3_K_M", {"Q3_K"}, quant_scheme::gguf_mix, 3.74 * 8.589934592 / 8.03, 0,
     0, dtype::int8, true, 12, -1, quant_format::q3_k_s},
    {quant_format::q3_k_s, "Q3_K_S", {}, quant_scheme::gguf_mix, 3.41 * 8.589934592 / 8.03, 0, 0,
     dtype::int8, true, 11, 11, quant_format::q3_k_s},
    {quant_format::q2_k, "Q2_K", {}, quant_scheme::gguf_mix, 2.96 * 8.589934592 / 8.03, 0, 0,
     dtype::int8, true, 10, 10, quant_format::q2_k},
    {quant_format::iq4_nl, "IQ4_NL", {}, quant_scheme::gguf_block, detail::block_bpw(18, 32), 32, 18,
     dtype::int8, true, 25, 20, quant_format::iq4_nl},
    {quant_format::iq4_xs, "IQ4_XS", {}, quant_scheme::gguf_block, detail::block_bpw(136, 256), 256,
     136, dtype::int8, true, 30, 23, quant_format::iq4_xs},
    // tools/quantize QUANT_OPTIONS: IQ3_M " 3.66 bpw quantization mix", IQ3_XS " 3.3 bpw
    // quantization", IQ2_M " 2.7 bpw"; llama_ftype_get_default_type builds the first two on
    // GGML_TYPE_IQ3_S and IQ2_M on GGML_TYPE_IQ2_S.
    {quant_format::iq3_m, "IQ3_M", {}, quant_scheme::gguf_mix, 3.66, 0, 0, dtype::int8, true, 27, -1,
     quant_format::iq3_s},
    {quant_format::iq3_s, "IQ3_S", {}, quant_scheme::gguf_block, detail::block_bpw(110, 256), 256,
     110, dtype::int8, true, 26, 21, quant_format::iq3_s},
    {quant_format::iq3_xs, "IQ3_XS", {}, quant_scheme::gguf_mix, 3.3, 0, 0, dtype::int8, true, 22, -1,
     quant_format::iq3_s},
    {quant_format::iq3_xxs, "IQ3_XXS", {}, quant_scheme::gguf_block, detail::block_bpw(98, 256), 256,
     98, dtype::int8, true, 23, 18, quant_format::iq3_xxs},
    {quant_format::iq2_m, "IQ2_M", {}, quant_scheme::gguf_mix, 2.7, 0, 0, dtype::int8, true, 29, -1,
     quant_format::iq2_s},
    // The GGML_TYPE_IQ2_S block. llama.cpp builds a file of type IQ2_S mostly on IQ2_XS
    // blocks (llama_ftype_get_default_type), and plan/memory.hpp charges such files so.
    {quant_format::iq2_s, "IQ2_S", {}, quant_scheme::gguf_block, detail::block_bpw(82, 256), 256, 82,
     dtype::int8, true, 28, 22, quant_format::iq2_s},
    {quant_format::iq2_xs, "IQ2_XS", {}, quant_scheme::gguf_block, detail::block_bpw(74, 256), 256,
     74, dtype::int8, true, 20, 17, quant_format::iq2_xs},
    {quant_format::iq2_xxs, "IQ2_XXS", {}, quant_scheme::gguf_block, detail::block_bpw(66, 256), 256,
     66, dtype::int8, true, 19, 16, quant_format::iq2_xxs},
    {quant_format::iq1_m, "IQ1_M", {}, quant_scheme::gguf_block, detail::block_bpw(56, 256), 256, 56,
     dtype::int8, true, 31, 29, quant_format::iq1_m},
    {quant_format::iq1_s, "IQ1_S", {}, quant_scheme::gguf_block, detail::block_bpw(50, 256), 256, 50,
     dtype::int8, true, 24, 19, quant_format::iq1_s},
}};

namespace detail {
constexpr bool quant_table_is_consistent() noexcept {
    for (std::size_t i = 0; i < quant_table.size(); ++i) {
        const auto& q = quant_table[i];
        if (static_cast<std::size_t>(q.id) != i || q.name.empty()) return false;
        if (!(q.bits_per_weight > 1.0 && q.bits_per_weight <= 32.0)) return false;
        // Uniform formats: the stated cost is exactly what the block layout stores.
        if (q.block_weights != 0) {
            const double exact = block_bpw(q.block_bytes, q.block_weights);
            const double diff = exact - q.bits_per_weight;
            if (diff > 1e-12 || diff < -1e-12) return false;
        }
        // A mix's dominant block type costs less than a bit more than the mix itself (IQ3_XS,
        // with some tensors narrower than its base, is the one mix below its base).
        if (q.scheme == quant_scheme::gguf_mix && q.base != q.id) {
            const auto& b = quant_table[static_cast<std::size_t>(q.base)];
            if (b.bits_per_weight >= q.bits_per_weight + 1.0) return false;
        }
        if (q.gguf_file_type >= 0)
            for (std::size_t j = i + 1; j < quant_table.size(); ++j)
                if (quant_table[j].gguf_file_type == q.gguf_file_type) return false;
    }
    // Names and aliases are unique across the whole table, compared as parsing does.
    return names_are_unique<quant_format_count * 6>(quant_table);
}
} // namespace detail
static_assert(detail::quant_table_is_consistent(), "quant_table: bad row");

constexpr const quant_info& info(quant_format q) noexcept {
    return quant_table[static_cast<std::size_t>(q)];
}

/// FP8 and NVFP4 checkpoints run natively where the device multiplies in fp8 / fp4, and
/// elsewhere only on GPUs, whose runtimes dequantize them on the fly (vLLM's Marlin
/// kernels, weight-only W8A16 / W4A16: A100, A10, the RTX 30s; NVFP4 on Hopper too). The
/// other dequantizable formats are dequantized wherever they run, even on hardware with
/// their `native_compute` type (llama.cpp multiplies Q8_0 in fp16; GPTQ runs W4A16).
constexpr bool dequantized_on_gpus_only(quant_format q) noexcept {
    return q == quant_format::fp8_e4m3 || q == quant_format::nvfp4;
}
constexpr std::string_view to_string(quant_format q) noexcept { return info(q).name; }
constexpr double bits_per_weight(quant_format q) noexcept { return info(q).bits_per_weight; }

/// Bytes needed to store `weights` weights in format `q` (rounded up to whole bytes;
/// saturating at 2^64 - 1, which a count read from an untrusted file header can reach).
constexpr std::uint64_t weight_bytes(std::uint64_t weights, quant_format q) noexcept {
    constexpr std::uint64_t most = ~std::uint64_t{0};
    const auto& r = info(q);
    if (r.block_weights != 0) {
        const std::uint64_t blocks = weights / r.block_weights + (weights % r.block_weights != 0 ? 1 : 0);
        return blocks > most / r.block_bytes ? most : blocks * r.block_bytes;
    }
    const double bytes = static_cast<double>(weights) * r.bits_per_weight / 8.0;
    if (!(bytes < 18446744073709551616.0)) return most; // 2^64: the cast below would be undefined
    const auto whole = static_cast<std::uint64_t>(bytes);
    return static_cast<double>(whole) < bytes && whole != most ? whole + 1 : whole;
}

/// What llama.cpp states of its formats' quality: the perplexity each adds to Llama-3-8B
/// (tools/quantize/quantize.cpp QUANT_OPTIONS, "+0.1754 ppl @ Llama-3-8B"). Only the
/// formats it gives a figure for; lower is better.
struct quant_quality {
    quant_format id;
    double perplexity_increase;
};
inline constexpr quant_quality llama_cpp_quality[] = {
    {quant_format::q8_0, 0.0026},   {quant_format::q6_k, 0.0217},   {quant_format::q5_k_m, 0.0569},
    {quant_format::q5_k_s, 0.1049}, {quant_format::q5_1, 0.1062},   {quant_format::q5_0, 0.1316},
    {quant_format::q4_k_m, 0.1754}, {quant_format::q4_k_s, 0.2689}, {quant_format::q4_1, 0.4511},
    {quant_format::q4_0, 0.4685},   {quant_format::q3_k_l, 0.5562}, {quant_format::q3_k_m, 0.6569},
    {quant_format::q3_k_s, 1.6321}, {quant_format::q2_k, 3.5199},
};

/// llama.cpp's perplexity figure for `q` (see llama_cpp_quality), if it states one.
constexpr std::optional<double> perplexity_increase(quant_format q) noexcept {
    for (const auto& r : llama_cpp_quality)
        if (r.id == q) return r.perplexity_increase;
    return std::nullopt;
}

/// The format that leaves no reason to pick `q`: by llama.cpp's figures it adds less
/// perplexity in no more bits per weight (the best such one), or `q` itself when none
/// does. Q5_1 gives way to Q5_K_M and Q4_1 to Q4_K_M; Q5_0 and Q4_0 stay, being smaller
/// than the K-quants that beat them. Formats without a figure are never superseded.
constexpr quant_format superseded_by(quant_format q) noexcept {
    const auto own = perplexity_increase(q);
    if (!own) return q;
    quant_format best = q;
    double best_ppl = *own;
    for (const auto& r : llama_cpp_quality)
        if (r.perplexity_increase < best_ppl && bits_per_weight(r.id) <= bits_per_weight(q)) {
            best = r.id;
            best_ppl = r.perplexity_increase;
        }
    return best;
}

/// Parses a format name as people write it: "Q4_K_M", "q4_k_m", "F16", "bf16", "fp8",
/// "MXFP4", "int4". Case, spaces, '-' and '_' are ignored.
constexpr std::optional<quant_format> parse_quant_format(std::string_view s) noexcept {
    s = detail::trim(s);
    if (s.empty()) return std::nullopt;
    for (const auto& row : quant_table) {
        if (detail::loose_equals(row.name, s)) return row.id;
        for (const auto& a : row.aliases)
            if (!a.empty() && detail::loose_equals(a, s)) return row.id;
    }
    return std::nullopt;
}

/// The formats of a comma-separated list ("Q4_K_M, Q8_0,bf16"), each read by
/// parse_quant_format, in the list's order; empty items are skipped and repeats dropped.
/// Reading stops at the first item that names no format: `unknown` holds it (trimmed),
/// `formats` what came before. `unknown` empty and `formats` empty: the list had no item.
struct quant_list {
    fixed_list<quant_format, quant_format_count> formats{};
    std::string_view unknown{};
};
constexpr quant_list parse_quant_list(std::string_view list) noexcept {
    quant_list out;
    while (!list.empty()) {
        const auto comma = list.find(',');
        const auto item = detail::trim(list.substr(0, comma));
        list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
        if (item.empty()) continue;
        const auto q = parse_quant_format(item);
        if (!q) {
            out.unknown = item;
            return out;
        }
        // Distinct formats number at most quant_format_count: the list cannot overflow.
        if (!out.formats.contains(*q)) out.formats.items[out.formats.count++] = *q;
    }
    return out;
}

/// The format a GGUF file declares in `general.file_type` (llama_ftype), if known.
constexpr std::optional<quant_format> quant_format_from_gguf_file_type(int file_type) noexcept {
    for (const auto& row : quant_table)
        if (row.gguf_file_type >= 0 && row.gguf_file_type == file_type) return row.id;
    return std::nullopt;
}

// The legacy formats a K-quant supersedes, and the ones it does not.
static_assert(superseded_by(quant_format::q5_1) == quant_format::q5_k_m);
static_assert(superseded_by(quant_format::q4_1) == quant_format::q4_k_m);
static_assert(superseded_by(quant_format::q5_0) == quant_format::q5_0);
static_assert(superseded_by(quant_format::q4_0) == quant_format::q4_0);
static_assert(superseded_by(quant_format::q4_k_m) == quant_format::q4_k_m);
static_assert(superseded_by(quant_format::iq4_xs) == quant_format::iq4_xs);

// Spot checks that pin the numbers people quote.
static_assert(bits_per_weight(quant_format::q4_0) == 4.5);
static_assert(bits_per_weight(quant_format::q8_0) == 8.5);
static_assert(bits_per_weight(quant_format::q6_k) == 6.5625);
static_assert(bits_per_weight(quant_format::iq4_xs) == 4.25);
static_assert(bits_per_weight(quant_format::mxfp4) == 4.25);
static_assert(bits_per_weight(quant_format::nvfp4) == 4.5);
static_assert(bits_per_weight(quant_format::q4_k_m) > 4.85 && bits_per_weight(quant_format::q4_k_m) < 4.95);
static_assert(weight_bytes(64, quant_format::q4_0) == 36);
static_assert(weight_bytes(33, quant_format::q8_0) == 68);
static_assert(weight_bytes(1'000'000'000, quant_format::bf16) == 2'000'000'000);
static_assert(parse_quant_format("q4_k_m") == quant_format::q4_k_m);
static_assert(parse_quant_format("F16") == quant_format::fp16);
static_assert(parse_quant_format(" fp8 ") == quant_format::fp8_e4m3);
static_assert(!parse_quant_format("q4_k_x").has_value());
static_assert(parse_quant_list(" q4_k_m,,F16 ,Q4_K_M").formats.size() == 2);
static_assert(parse_quant_list("Q8_0, auto ,F16").unknown == "auto");
static_assert(quant_format_from_gguf_file_type(15) == quant_format::q4_k_m);
static_assert(quant_format_from_gguf_file_type(27) == quant_format::iq3_m);

AI_HWACCEL_NAMESPACE_END
