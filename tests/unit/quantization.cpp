#include "ai_hwaccel/core/quantization.hpp"

#include <doctest/doctest.h>

#include <string>

namespace ah = ai_hwaccel;
using ah::quant_format;

// The table's own static_asserts tie every uniform format's bits per weight to its block
// layout; these pin the published figures people quote.
static_assert(ah::bits_per_weight(quant_format::fp32) == 32);
static_assert(ah::bits_per_weight(quant_format::bf16) == 16);
static_assert(ah::bits_per_weight(quant_format::fp16) == 16);
static_assert(ah::bits_per_weight(quant_format::fp8_e4m3) == 8);
static_assert(ah::bits_per_weight(quant_format::fp8_e5m2) == 8);
static_assert(ah::bits_per_weight(quant_format::int8) == 8);
static_assert(ah::bits_per_weight(quant_format::int4) == 4.15625); // + fp16 scale, 4-bit zero / 128
static_assert(ah::bits_per_weight(quant_format::mxfp4) == 4.25);   // 32 × E2M1 + E8M0 scale
static_assert(ah::bits_per_weight(quant_format::nvfp4) == 4.5);    // 16 × E2M1 + E4M3 scale
static_assert(ah::bits_per_weight(quant_format::q8_0) == 8.5);
static_assert(ah::bits_per_weight(quant_format::q6_k) == 6.5625);
static_assert(ah::bits_per_weight(quant_format::q5_1) == 6.0);
static_assert(ah::bits_per_weight(quant_format::q5_0) == 5.5);
static_assert(ah::bits_per_weight(quant_format::q4_1) == 5.0);
static_assert(ah::bits_per_weight(quant_format::q4_0) == 4.5);
static_assert(ah::bits_per_weight(quant_format::iq4_nl) == 4.5);
static_assert(ah::bits_per_weight(quant_format::iq4_xs) == 4.25);
static_assert(ah::bits_per_weight(quant_format::iq3_s) == 3.4375);
static_assert(ah::bits_per_weight(quant_format::iq3_xxs) == 3.0625);
static_assert(ah::bits_per_weight(quant_format::iq2_s) == 2.5625);
static_assert(ah::bits_per_weight(quant_format::iq2_xs) == 2.3125);
static_assert(ah::bits_per_weight(quant_format::iq2_xxs) == 2.0625);
static_assert(ah::bits_per_weight(quant_format::iq1_m) == 1.75);
static_assert(ah::bits_per_weight(quant_format::iq1_s) == 1.5625);

TEST_CASE("bits_per_weight") {
    // Mixes: whole-file averages from llama.cpp's quantize table (Llama-3-8B, 8.03e9 weights).
    CHECK(ah::bits_per_weight(quant_format::q4_k_m) == doctest::Approx(4.899).epsilon(1e-3));
    CHECK(ah::bits_per_weight(quant_format::q5_k_m) == doctest::Approx(5.702).epsilon(1e-3));
    CHECK(ah::bits_per_weight(quant_format::q3_k_m) == doctest::Approx(4.001).epsilon(1e-3));
    CHECK(ah::bits_per_weight(quant_format::q2_k) == doctest::Approx(3.166).epsilon(1e-3));
    // A mix costs more than its dominant block type, but IQ3_XS: its queries, keys and
    // most ffn_gate/ffn_up tensors go down to IQ3_XXS.
    for (const auto& q : ah::quant_table)
        if (q.scheme == ah::quant_scheme::gguf_mix && q.base != q.id && q.id != quant_format::iq3_xs)
            CHECK(q.bits_per_weight > ah::bits_per_weight(q.base));
    CHECK(ah::bits_per_weight(quant_format::iq3_xs) < ah::bits_per_weight(quant_format::iq3_s));
    // The IQ mixes: the rates llama.cpp's quantize tool states for them.
    CHECK(ah::bits_per_weight(quant_format::iq3_m) == 3.66);
    CHECK(ah::bits_per_weight(quant_format::iq3_xs) == 3.3);
    CHECK(ah::bits_per_weight(quant_format::iq2_m) == 2.7);
}

TEST_CASE("bits_per_weight: the IQ mixes sit among the IQ block types") {
    // suggest_quantization tries formats in order of bits per weight, so each mix must
    // fall between the block types whose files are smaller and larger than its own.
    const auto bpw = [](quant_format q) { return ah::bits_per_weight(q); };
    CHECK(bpw(quant_format::iq2_s) < bpw(quant_format::iq2_m));
    CHECK(bpw(quant_format::iq2_m) < bpw(quant_format::iq3_xxs));
    CHECK(bpw(quant_format::iq3_xxs) < bpw(quant_format::iq3_xs));
    CHECK(bpw(quant_format::iq3_xs) < bpw(quant_format::iq3_s));
    CHECK(bpw(quant_format::iq3_s) < bpw(quant_format::iq3_m));
    CHECK(bpw(quant_format::iq3_m) < bpw(quant_format::iq4_xs));
    for (auto q : {quant_format::iq2_m, quant_format::iq3_xs, quant_format::iq3_m}) {
        CAPTURE(ah::to_string(q));
        const auto& r = ah::info(q);
        CHECK(r.scheme == ah::quant_scheme::gguf_mix);
        CHECK(r.block_weights == 0);
        CHECK(r.ggml_type == -1);
        CHECK(r.dequantizable);
        CHECK(r.native_compute == ah::info(quant_format::iq3_s).native_compute);
        // The base is the uniform block type llama.cpp builds the file on.
        CHECK(ah::info(r.base).scheme == ah::quant_scheme::gguf_block);
    }
    CHECK(ah::info(quant_format::iq3_m).base == quant_format::iq3_s);
    CHECK(ah::info(quant_format::iq3_xs).base == quant_format::iq3_s);
    CHECK(ah::info(quant_format::iq2_m).base == quant_format::iq2_s);
}

TEST_CASE("weight_bytes") {
    CHECK(ah::weight_bytes(8'030'000'000ull, quant_format::bf16) == 16'060'000'000ull);
    // Blocks are whole: 33 weights of Q4_0 take two 18-byte blocks.
    CHECK(ah::weight_bytes(33, quant_format::q4_0) == 36);
    CHECK(ah::weight_bytes(0, quant_format::q4_0) == 0);
    // A mix rounds up to whole bytes.
    CHECK(ah::weight_bytes(1, quant_format::q4_k_m) == 1);
    // Counts near 2^64 (a hostile file header's) saturate rather than wrap to a small size.
    constexpr std::uint64_t most = ~std::uint64_t{0};
    for (const auto q : {quant_format::q4_0, quant_format::q8_0, quant_format::fp16, quant_format::fp32,
                         quant_format::q4_k_m, quant_format::int4}) {
        CAPTURE(ah::to_string(q));
        CHECK(ah::weight_bytes(most, q) >= ah::weight_bytes(most / 2, q));
        CHECK(ah::weight_bytes(most / 2, q) >= most / 4);
    }
    CHECK(ah::weight_bytes(most, quant_format::fp16) == most);
    CHECK(ah::weight_bytes(most, quant_format::q8_0) == most);
    CHECK(ah::weight_bytes(std::uint64_t{1} << 63, quant_format::fp16) == most);
    static_assert(ah::weight_bytes(~std::uint64_t{0}, quant_format::fp32) == ~std::uint64_t{0});
}

TEST_CASE("parse_quant_format") {
    CHECK(ah::parse_quant_format("Q4_K_M") == quant_format::q4_k_m);
    CHECK(ah::parse_quant_format("q4_k") == quant_format::q4_k_m); // llama.cpp's alias
    CHECK(ah::parse_quant_format("F16") == quant_format::fp16);
    CHECK(ah::parse_quant_format("bf16") == quant_format::bf16);
    CHECK(ah::parse_quant_format("fp8") == quant_format::fp8_e4m3);
    CHECK(ah::parse_quant_format("float8_e5m2") == quant_format::fp8_e5m2);
    CHECK(ah::parse_quant_format("MXFP4") == quant_format::mxfp4);
    CHECK(ah::parse_quant_format("nvfp4") == quant_format::nvfp4);
    CHECK(ah::parse_quant_format("int4") == quant_format::int4);
    CHECK(ah::parse_quant_format("AWQ") == quant_format::int4);
    CHECK_FALSE(ah::parse_quant_format("").has_value());
    CHECK_FALSE(ah::parse_quant_format("Q4_K_X").has_value());
    CHECK_FALSE(ah::parse_quant_format("int3").has_value());
    // The IQ mixes, spelled as llama.cpp and people write them.
    CHECK(ah::parse_quant_format("IQ3_M") == quant_format::iq3_m);
    CHECK(ah::parse_quant_format("iq3_m") == quant_format::iq3_m);
    CHECK(ah::parse_quant_format("Iq3-Xs") == quant_format::iq3_xs);
    CHECK(ah::parse_quant_format("iq2_m") == quant_format::iq2_m);
    CHECK(ah::parse_quant_format("IQ3_S") == quant_format::iq3_s); // not taken by IQ3_M
    CHECK_FALSE(ah::parse_quant_format("IQ3_L").has_value());
    CHECK_FALSE(ah::parse_quant_format("IQ2_L").has_value());
    for (const auto& q : ah::quant_table) {
        CHECK(ah::parse_quant_format(q.name) == q.id);
        for (const auto& a : q.aliases) CHECK(ah::parse_quant_format(a) == q.id);
    }
}

TEST_CASE("parse_quant_list") {
    // Order kept, spaces and empty items skipped, a repeat (in any spelling) dropped.
    const auto l = ah::parse_quant_list(" Q8_0, q4_k_m,,bf16 ,Q4_K_M,");
    CHECK(l.unknown.empty());
    REQUIRE(l.formats.size() == 3);
    CHECK(l.formats[0] == quant_format::q8_0);
    CHECK(l.formats[1] == quant_format::q4_k_m);
    CHECK(l.formats[2] == quant_format::bf16);
    // One name is a list of one.
    CHECK(ah::parse_quant_list("F16").formats.size() == 1);
    // Nothing named: no format and nothing unknown.
    CHECK(ah::parse_quant_list("").formats.empty());
    CHECK(ah::parse_quant_list(" , ,").formats.empty());
    CHECK(ah::parse_quant_list(" , ,").unknown.empty());
    // The first unknown item stops the reading and is given back trimmed.
    const auto bad = ah::parse_quant_list("Q8_0, Q9_K ,auto");
    CHECK(bad.unknown == "Q9_K");
    REQUIRE(bad.formats.size() == 1);
    CHECK(bad.formats[0] == quant_format::q8_0);
    CHECK(ah::parse_quant_list("q4_k_m,auto").unknown == "auto");
    // Every spelling of every format, twice over: one entry per format, no overflow.
    std::string all;
    for (const auto& q : ah::quant_table) {
        all += std::string(q.name) + ",";
        for (const auto& a : q.aliases) all += std::string(a) + ",";
    }
    all += all;
    const auto every = ah::parse_quant_list(all);
    CHECK(every.unknown.empty());
    CHECK(every.formats.size() == ah::quant_format_count);
}

TEST_CASE("quant_format_from_gguf_file_type") {
    // llama_ftype values written in general.file_type.
    CHECK(ah::quant_format_from_gguf_file_type(0) == quant_format::fp32);
    CHECK(ah::quant_format_from_gguf_file_type(1) == quant_format::fp16);
    CHECK(ah::quant_format_from_gguf_file_type(7) == quant_format::q8_0);
    CHECK(ah::quant_format_from_gguf_file_type(15) == quant_format::q4_k_m);
    CHECK(ah::quant_format_from_gguf_file_type(32) == quant_format::bf16);
    // llama.h: LLAMA_FTYPE_MOSTLY_IQ3_XS = 22, IQ3_M = 27, IQ2_S = 28, IQ2_M = 29.
    CHECK(ah::quant_format_from_gguf_file_type(22) == quant_format::iq3_xs);
    CHECK(ah::quant_format_from_gguf_file_type(27) == quant_format::iq3_m);
    CHECK(ah::quant_format_from_gguf_file_type(28) == quant_format::iq2_s);
    CHECK(ah::quant_format_from_gguf_file_type(29) == quant_format::iq2_m);
    CHECK_FALSE(ah::quant_format_from_gguf_file_type(4).has_value()); // retired Q4_1_SOME_F16
    CHECK_FALSE(ah::quant_format_from_gguf_file_type(-1).has_value());
}

TEST_CASE("quant_info") {
    CHECK(ah::info(quant_format::fp8_e4m3).native_compute == ah::dtype::fp8);
    CHECK(ah::info(quant_format::nvfp4).native_compute == ah::dtype::fp4);
    // vLLM runs FP8 and NVFP4 checkpoints on GPUs without FP8/FP4 tensor cores through its
    // Marlin kernels (weight-only W8A16 / W4A16): before, an A100 could not run FP8 here.
    CHECK(ah::info(quant_format::fp8_e4m3).dequantizable);
    CHECK(ah::info(quant_format::nvfp4).dequantizable);
    CHECK_FALSE(ah::info(quant_format::fp8_e5m2).dequantizable); // weights are E4M3; E5M2 is for caches
    CHECK(ah::info(quant_format::q4_k_m).dequantizable);
}

TEST_CASE("superseded_by: llama.cpp's perplexity figures") {
    // Every figure belongs to a GGUF format, and more bits never cost quality among the
    // K-quants and Q8_0 (the figures are llama.cpp's, not ours: this checks the copy).
    for (const auto& r : ah::llama_cpp_quality) {
        CAPTURE(ah::to_string(r.id));
        CHECK(r.perplexity_increase > 0);
        CHECK(ah::perplexity_increase(r.id) == r.perplexity_increase);
    }
    CHECK_FALSE(ah::perplexity_increase(quant_format::bf16).has_value());
    CHECK_FALSE(ah::perplexity_increase(quant_format::iq4_xs).has_value());
    // A superseding format has no more bits and a lower figure; it supersedes nothing in
    // turn (the relation is one step deep).
    std::size_t superseded = 0;
    for (const auto& row : ah::quant_table) {
        CAPTURE(row.name);
        const auto by = ah::superseded_by(row.id);
        if (by == row.id) continue;
        ++superseded;
        CHECK(ah::bits_per_weight(by) <= row.bits_per_weight);
        CHECK(*ah::perplexity_increase(by) < *ah::perplexity_increase(row.id));
        CHECK(ah::superseded_by(by) == by);
    }
    CHECK(superseded == 2); // Q5_1 and Q4_1
}
