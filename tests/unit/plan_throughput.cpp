// Tests of plan/throughput.hpp. The calibration case reads the CSV named by
// AI_HWACCEL_CALIBRATION_CSV (a string literal path; the build sets it to
// /work/shared/data/calibration-measurements.csv or a copy) and skips with a message when
// the macro is not defined or the file is absent.
#include "ai_hwaccel/plan/throughput.hpp"

#include "../calibration/calibration_rows.hpp"

#include "ai_hwaccel/core/catalogue.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace ah = ai_hwaccel;
using ah::quant_format;

namespace {
const ah::model_spec& model(std::string_view id) {
    const auto* m = ah::find_model(id);
    REQUIRE(m != nullptr);
    return *m;
}
ah::accelerator_profile device(std::string_view name) {
    const auto* d = ah::find_device(name);
    REQUIRE(d != nullptr);
    return ah::profile_from_spec(*d);
}
// Two layers of width 1 (a hand-made shape): one full, one with a 4096-token sliding window.
ah::model_spec full_and_sliding_layer() {
    ah::model_spec m;
    m.layers = 2;
    m.hidden_size = 1;
    m.attention_heads = 1;
    m.head_dim = 1;
    m.sliding_window_layers = 1;
    m.sliding_window = 4096;
    return m;
}
} // namespace

// Compile-time: a plan's speed is a constant expression too.
static_assert(ah::estimate_throughput(ah::profile_from_spec(*ah::find_device("RTX 4090")),
                                      *ah::find_model("llama-3-8b"), quant_format::q4_k_m)
                  .decode_tokens_per_second > 50);
static_assert(ah::estimate_throughput(ah::accelerator_profile{}, *ah::find_model("llama-3-8b"), quant_format::q4_k_m)
                  .decode_tokens_per_second == 0); // unknown bandwidth: unknown, not zero speed

TEST_CASE("decode_bytes_per_token") {
    const auto& m = model("llama-3-8b");
    // Hand-computed: fp16 blocks + output head (2 bytes each), no embedding matrix read,
    // plus the KV cache at depth 1024 (32 x 2 x 8 x 128 x 2 B x 1024 = 128 MiB).
    const double emb = 128256.0 * 4096;
    const double blocks = 8'030'261'248.0 - 2 * emb - 4096;
    const double want = (blocks + emb + 4096) * 2 + 128.0 * 1024 * 1024;
    CHECK(ah::decode_bytes_per_token(m, quant_format::fp16, {.context = 1024}) == doctest::Approx(want));
    // MoE reads the routed experts only: Mixtral 8x7B reads ~2/8 of its experts.
    const auto& mx = model("mixtral-8x7b");
    const double dense_read = static_cast<double>(ah::weight_bytes(mx, quant_format::bf16));
    const double moe_read = ah::decode_bytes_per_token(mx, quant_format::bf16, {.context = 1});
    CHECK(moe_read < 0.35 * dense_read);
    CHECK(moe_read > 2.0 * static_cast<double>(mx.active_parameters) * 0.9);
    CHECK(moe_read < 2.0 * static_cast<double>(mx.active_parameters) * 1.1);
}

TEST_CASE("estimate_throughput decode") {
    const auto gpu = device("RTX 4090");
    const auto& m = model("llama-3-8b");
    const ah::throughput_constants c;
    const auto e = ah::estimate_throughput(gpu, m, quant_format::fp16, {.context = 256}, c);
    // Hand-computed from the formula: bytes / (1008 GB/s x efficiency) + 32 x per-layer.
    const double bytes = ah::decode_bytes_per_token(m, quant_format::fp16, {.context = 256});
    const double t = bytes / (1008e9 * c.decode_bandwidth_efficiency) + 32 * c.decode_seconds_per_layer;
    CHECK(e.decode_tokens_per_second == doctest::Approx(1 / t));
    CHECK(e.decode_bytes_per_token == doctest::Approx(bytes));
    CHECK(e.decode_memory_bound);
    // Measured 54.84 tok/s (llama-bench tg512, calibration row 37): within 25 %.
    CHECK(std::fabs(e.decode_tokens_per_second / 54.84 - 1) < 0.25);
    // The reference peer says 5.7 tok/s for a 7B FP16 model on any CUDA card.
    CHECK(e.decode_tokens_per_second > 40);
}

TEST_CASE("prefill_flops_per_token: the output head runs once per prompt") {
    // Only the last position's logits are computed (llama.cpp marks the batch's last token
    // as its only output): the blocks multiply every token, the head one token a prompt.
    const auto& untied = model("llama-3-8b"); // 8.03e9 parameters, embedding and head 128256 x 4096 each
    const double emb = 128256.0 * 4096.0;
    const double blocks = static_cast<double>(untied.parameters) - 2 * emb;
    CHECK(ah::prefill_flops_per_token(untied, 512).matmul == doctest::Approx(2.0 * blocks + 2.0 * emb / 512));
    CHECK(ah::prefill_flops_per_token(untied, 1).matmul == doctest::Approx(2.0 * (blocks + emb)));
    const auto& tied = model("llama-3.2-1b"); // one 128256 x 2048 matrix, both embedding and head
    REQUIRE(tied.tied_embeddings);
    const double table = 128256.0 * 2048.0;
    CHECK(ah::prefill_flops_per_token(tied, 4096).matmul ==
          doctest::Approx(2.0 * (static_cast<double>(tied.parameters) - table) + 2.0 * table / 4096));
    // A bare parameter count has no head to set apart.
    ah::model_spec bare;
    bare.parameters = 1'000'000;
    CHECK(ah::prefill_flops_per_token(bare, 512).matmul == doctest::Approx(2e6));
}

TEST_CASE("estimate_throughput decode turns compute-bound for a large batch") {
    // Llama 3 8B in fp16 on an H100 SXM, 512 sequences at depth 1: the step reads the
    // weights once (~16 GB, ~6 ms at 3.35 TB/s) but multiplies 512 tokens (8 TFLOP).
    const auto gpu = device("H100 SXM");
    const auto& m = model("llama-3-8b");
    const ah::inference_shape s{.context = 1, .batch = 512};
    const auto e = ah::estimate_throughput(gpu, m, quant_format::fp16, s);
    CHECK_FALSE(e.decode_memory_bound);
    // The fitted constants (tests/calibration/REPORT.md) written out, so a change to a
    // default shows here: 0.422 of the dense fp16 peak, 0.207 for attention, 124 us a layer.
    const double peak = ah::prefill_compute_rate(gpu, quant_format::fp16).peak_tflops * 1e12;
    REQUIRE(peak > 900e12);
    const double per_token = 2.0 * ah::detail::matmul_parameters(m) + 4.0 * 1 * 4096 * 32 / 0.207;
    const double step = 512 * per_token / (peak * 0.422) + 32 * 124e-6;
    CHECK(e.decode_tokens_per_second == doctest::Approx(1 / step));
    // One sequence is memory-bound, and faster per sequence.
    const auto one = ah::estimate_throughput(gpu, m, quant_format::fp16, {.context = 1});
    CHECK(one.decode_memory_bound);
    CHECK(one.decode_tokens_per_second > 2 * e.decode_tokens_per_second);
}

TEST_CASE("estimate_throughput: a batch on a device of unknown compute decodes at an unknown rate") {
    // A CPU whose bandwidth was measured but whose peak no one knows: one sequence is
    // memory-bound as ever; 256 sequences may be compute-bound, which cannot be told
    // (before: 533 tok/s together, 8 TFLOP/s of an 8B model, "memory-bound").
    ah::accelerator_profile cpu;
    cpu.kind = ah::device_kind::cpu;
    cpu.memory_bytes = {64ull << 30, ah::origin::sysfs};
    cpu.memory_bandwidth_gbps = {100.0, ah::origin::measured};
    const auto& m = model("llama-3-8b");
    const auto one = ah::estimate_throughput(cpu, m, quant_format::q4_k_m, {.context = 1024});
    CHECK(one.decode_tokens_per_second > 10);
    CHECK(one.decode_memory_bound);
    const auto many = ah::estimate_throughput(cpu, m, quant_format::q4_k_m, {.context = 1024, .batch = 256});
    CHECK(many.decode_tokens_per_second == 0);
    CHECK(many.prefill_tokens_per_second == 0); // as prefill, which compute bounds
}

TEST_CASE("estimate_throughput: a batch of 0 is a batch of 1") {
    const auto gpu = device("H100 SXM");
    const auto& m = model("llama-3.1-8b");
    const auto zero = ah::estimate_throughput(gpu, m, quant_format::bf16, {.context = 131072, .batch = 0});
    const auto one = ah::estimate_throughput(gpu, m, quant_format::bf16, {.context = 131072, .batch = 1});
    CHECK(zero.decode_tokens_per_second == doctest::Approx(one.decode_tokens_per_second));
    CHECK(zero.decode_bytes_per_token == doctest::Approx(one.decode_bytes_per_token)); // KV cache included
    CHECK(zero.prefill_tokens_per_second == doctest::Approx(one.prefill_tokens_per_second));
}

TEST_CASE("estimate_throughput MoE prefill reads the experts a micro-batch's tokens use") {
    // A one-token prompt reads what one decode step does (no KV cache yet): the routed
    // share of the experts, not all of them; so it is no slower than that step.
    const auto gpu = device("H100 SXM");
    for (const char* id : {"deepseek-v3", "qwen3-30b-a3b", "mixtral-8x7b"}) {
        CAPTURE(id);
        const auto& m = model(id);
        const auto e = ah::estimate_throughput(gpu, m, quant_format::fp8_e4m3, {.context = 1});
        REQUIRE(e.decode_tokens_per_second > 0);
        CHECK(e.prefill_tokens_per_second >= e.decode_tokens_per_second);
        // 16 tokens route to more experts than 1 but, for a model of many experts, not all.
        const double w1 = ah::detail::decode_weight_bytes(m, quant_format::fp8_e4m3, 1);
        const double w16 = ah::detail::decode_weight_bytes(m, quant_format::fp8_e4m3, 16);
        CHECK(w16 > w1);
        CHECK(w16 <= static_cast<double>(ah::weight_bytes(m, quant_format::fp8_e4m3)));
    }
}

TEST_CASE("estimate_throughput monotonic") {
    const auto gpu = device("H100 SXM");
    for (const auto& m : ah::model_catalogue) {
        CAPTURE(m.id);
        double last_decode = 1e30, last_bytes = 0;
        for (std::uint32_t ctx : {1u, 1024u, 8192u, 65536u}) {
            const auto e = ah::estimate_throughput(gpu, m, quant_format::fp8_e4m3, {.context = ctx});
            CHECK(e.decode_tokens_per_second <= last_decode);
            CHECK(e.decode_bytes_per_token >= last_bytes);
            last_decode = e.decode_tokens_per_second;
            last_bytes = e.decode_bytes_per_token;
        }
        // Fewer bits, faster decode.
        CHECK(ah::estimate_throughput(gpu, m, quant_format::q4_k_m).decode_tokens_per_second >
              ah::estimate_throughput(gpu, m, quant_format::bf16).decode_tokens_per_second);
    }
    // Longer prompts prefill slower per token (attention).
    const auto& m = model("llama-3.1-8b");
    CHECK(ah::estimate_throughput(gpu, m, quant_format::bf16, {.context = 32768}).prefill_tokens_per_second <
          ah::estimate_throughput(gpu, m, quant_format::bf16, {.context = 512}).prefill_tokens_per_second);
    // More bandwidth, faster decode.
    CHECK(ah::estimate_throughput(device("H200 SXM"), m, quant_format::bf16).decode_tokens_per_second >
          ah::estimate_throughput(gpu, m, quant_format::bf16).decode_tokens_per_second);
}

TEST_CASE("estimate_throughput MoE uses active parameters") {
    const auto gpu = device("H100 SXM");
    const auto& moe = model("qwen3-30b-a3b");
    const auto& dense = model("qwen3-32b");
    const auto a = ah::estimate_throughput(gpu, moe, quant_format::bf16);
    const auto b = ah::estimate_throughput(gpu, dense, quant_format::bf16);
    CHECK(a.decode_tokens_per_second > 3 * b.decode_tokens_per_second);
    CHECK(a.prefill_tokens_per_second > 3 * b.prefill_tokens_per_second);
    // Active parameters less the input embedding, a lookup (untied: the head multiplies).
    REQUIRE_FALSE(moe.tied_embeddings);
    const double embedding = static_cast<double>(moe.vocab_size) * moe.hidden_size;
    CHECK(ah::prefill_flops_per_token(moe, 1).matmul ==
          doctest::Approx(2.0 * (static_cast<double>(moe.active_parameters) - embedding)));
}

TEST_CASE("prefill_flops_per_token: the input embedding is a lookup, a tied head is not") {
    // Llama 3 8B (untied): 8.03e9 parameters, 128256 x 4096 of them the embedding table.
    const auto& untied = model("llama-3-8b");
    REQUIRE_FALSE(untied.tied_embeddings);
    CHECK(ah::prefill_flops_per_token(untied, 1).matmul ==
          doctest::Approx(2.0 * (static_cast<double>(untied.parameters) - 128256.0 * 4096.0)));
    // A tied model's one matrix is also its output head, which does multiply.
    for (const auto& m : ah::model_catalogue)
        if (m.tied_embeddings) {
            CAPTURE(m.name);
            CHECK(ah::prefill_flops_per_token(m, 1).matmul ==
                  doctest::Approx(2.0 * static_cast<double>(m.parameters_per_token())));
        }
}

TEST_CASE("prefill attention on sliding-window layers") {
    // One layer of 4096 positions' window, one full layer, width 1 (hand-made shape):
    // a prompt token's mean depth is i/2 in the full layer; in the sliding one
    // (W²/2 + (P - W) W) / P once the prompt outgrows the window.
    const auto m = full_and_sliding_layer();
    // Within the window both layers are full: 2 x P/2 x 2 (QK and AV) per layer.
    CHECK(ah::prefill_flops_per_token(m, 2048).attention == doctest::Approx(2.0 * 2048 * 2));
    const double p = 16384, w = 4096;
    const double sliding_mean = (w * w / 2 + (p - w) * w) / p; // 3584
    CHECK(ah::prefill_flops_per_token(m, 16384).attention == doctest::Approx(2.0 * (p / 2 + sliding_mean) * 2));
    // Decode at that depth sees the whole window in the sliding layer.
    CHECK(ah::detail::average_full_depth(m, p) == doctest::Approx((p + w) / 2));
}

TEST_CASE("decode of a MoE model: a batch reads the experts its tokens go to") {
    const auto& m = model("qwen3-30b-a3b"); // 128 experts, 8 per token
    CHECK(ah::detail::routed_share(m, 1) == doctest::Approx(8.0 / 128));
    CHECK(ah::detail::routed_share(m, 0) == ah::detail::routed_share(m, 1)); // batch 0 means 1
    for (std::uint32_t b : {2u, 3u, 7u, 16u, 64u, 300u}) {
        CAPTURE(b);
        CHECK(ah::detail::routed_share(m, b) == doctest::Approx(1.0 - std::pow(1.0 - 8.0 / 128, b)));
        CHECK(ah::detail::routed_share(m, b) > ah::detail::routed_share(m, b - 1));
    }
    CHECK(ah::detail::routed_share(m, 64) > 0.98);
    CHECK(ah::detail::routed_share(m, 0xffffffffu) == 1.0);
    CHECK(ah::detail::routed_share(model("llama-3.1-8b"), 64) == 1.0); // dense: every weight, always

    // Batch 64 at 1k tokens reads nearly every expert: per sequence, decode is held to the
    // whole model's weights and the batch's KV over the bandwidth.
    const auto gpu = device("H100 SXM");
    const ah::inference_shape s{.context = 1024, .batch = 64};
    const auto e = ah::estimate_throughput(gpu, m, quant_format::fp8_e4m3, s);
    const double experts = 48.0 * 128 * 3 * 2048 * 768; // bytes at fp8
    const double floor = 0.98 * experts + static_cast<double>(ah::kv_cache_bytes(m, s));
    CHECK(e.decode_bytes_per_token > floor);
    CHECK(e.decode_tokens_per_second < *gpu.memory_bandwidth_gbps * 1e9 / floor);
    // One sequence reads its 8 experts only.
    const auto one = ah::estimate_throughput(gpu, m, quant_format::fp8_e4m3, {.context = 1024});
    CHECK(one.decode_bytes_per_token < experts / 4);
    // Batching still pays overall: more tokens per second together, fewer per sequence.
    CHECK(e.decode_tokens_per_second < one.decode_tokens_per_second);
    CHECK(64 * e.decode_tokens_per_second > one.decode_tokens_per_second);
}

TEST_CASE("estimate_throughput sliding windows") {
    // gpt-oss caches 128 tokens in half its layers: its cache grows half as fast.
    const auto& m = model("gpt-oss-20b");
    const double a = ah::decode_bytes_per_token(m, quant_format::mxfp4, {.context = 65536});
    const double b = ah::decode_bytes_per_token(m, quant_format::mxfp4, {.context = 32768});
    const double per_full_layer_token = 2.0 * 8 * 64 * 2;
    CHECK(a - b == doctest::Approx(12 * per_full_layer_token * 32768));
}

TEST_CASE("prefill_compute_rate") {
    // fp8 runs natively on H100; GGUF formats dequantize to fp16.
    const auto h100 = device("H100 SXM");
    CHECK(ah::prefill_compute_rate(h100, quant_format::fp8_e4m3).type == ah::dtype::fp8);
    CHECK(ah::prefill_compute_rate(h100, quant_format::q4_k_m).type == ah::dtype::fp16);
    // A100 has no fp8: fp8 weights run in fp16.
    CHECK(ah::prefill_compute_rate(device("A100 SXM4 80GB"), quant_format::fp8_e4m3).type == ah::dtype::fp16);
    // GeForce: fp16 accumulate doubles the catalogue's fp32-accumulate figure.
    const auto g = device("RTX 4090");
    CHECK(ah::prefill_compute_rate(g, quant_format::fp16).peak_tflops == doctest::Approx(2 * g.peak.fp16));
    CHECK(ah::prefill_compute_rate(g, quant_format::fp16, false).peak_tflops == doctest::Approx(g.peak.fp16));
    CHECK(ah::prefill_compute_rate(ah::accelerator_profile{}, quant_format::fp16).peak_tflops == 0);
    // Tensor-core peaks are not vector peaks, whatever the format.
    CHECK_FALSE(ah::prefill_compute_rate(h100, quant_format::q4_k_m).vector);
    CHECK_FALSE(ah::prefill_compute_rate(h100, quant_format::fp32).vector); // H100 has fp16 figures
    // Apple's M1 GPUs are known by their fp32 rate only: a vector peak, for every format.
    const auto m1 = device("Apple M1 Max 32-core GPU");
    for (const auto q : {quant_format::fp16, quant_format::q4_k_m, quant_format::fp32}) {
        CAPTURE(ah::info(q).name);
        const auto r = ah::prefill_compute_rate(m1, q);
        CHECK(r.type == ah::dtype::fp32);
        CHECK(r.vector);
        CHECK(r.peak_tflops == doctest::Approx(10.4));
    }
    // M2's figures scale Apple's 27.2 TFLOPS for the 76-core M2 Ultra by cores.
    CHECK(ah::prefill_compute_rate(device("Apple M2 Max 38-core GPU"), quant_format::q4_0).peak_tflops ==
          doctest::Approx(27.2 / 2));
    // M3 and later: no figure at all, so no prefill estimate (unknown, not slow).
    CHECK(ah::prefill_compute_rate(device("Apple M3 Max 40-core GPU"), quant_format::fp16).peak_tflops == 0);
    CHECK(ah::estimate_throughput(device("Apple M3 Max 40-core GPU"), model("llama-2-7b"), quant_format::fp16)
              .prefill_tokens_per_second == 0);
}

TEST_CASE("estimate_throughput: the prompt of the prefill rate") {
    static_assert(ah::prompt_tokens({.context = 4096}) == 4096);
    static_assert(ah::prompt_tokens({.context = 4096, .prompt = 512}) == 512);
    static_assert(ah::prompt_tokens({.context = 1024, .prompt = 2048}) == 1024); // held to the context
    static_assert(ah::prompt_tokens({.context = 0}) == 1);
    const auto gpu = device("H100 SXM");
    const auto& m = model("llama-3.1-8b");
    // A prompt given apart prefills as a context of that length does; decode stays at the context.
    const auto apart = ah::estimate_throughput(gpu, m, quant_format::bf16, {.context = 32768, .prompt = 512});
    const auto as_context = ah::estimate_throughput(gpu, m, quant_format::bf16, {.context = 512});
    const auto whole = ah::estimate_throughput(gpu, m, quant_format::bf16, {.context = 32768});
    CHECK(apart.prefill_tokens_per_second == doctest::Approx(as_context.prefill_tokens_per_second));
    CHECK(apart.decode_tokens_per_second == doctest::Approx(whole.decode_tokens_per_second));
    CHECK(apart.prefill_tokens_per_second > whole.prefill_tokens_per_second); // less attention per token
}

TEST_CASE("prefill after a filled cache") {
    // prompt_start: the cached tokens, at most what the context leaves beside the prompt.
    static_assert(ah::prompt_start({.context = 8192, .prompt = 512, .prompt_depth = 4096}) == 4096);
    static_assert(ah::prompt_start({.context = 4096, .prompt = 512, .prompt_depth = 8192}) == 3584);
    static_assert(ah::prompt_start({.context = 4096, .prompt_depth = 100}) == 0); // the prompt is the context
    static_assert(ah::prompt_start({.context = 4096, .prompt = 512}) == 0);

    // Twice the mean positions a prompt token sees, against a count position by position.
    const auto m = full_and_sliding_layer();
    const auto counted = [&](std::uint32_t start, std::uint32_t prompt) {
        double full = 0, sliding = 0;
        for (std::uint32_t x = start; x < start + prompt; ++x) {
            full += x;
            sliding += std::min<double>(x, m.sliding_window);
        }
        return (full + sliding) / prompt; // the two layers' means, summed: twice their average
    };
    const std::pair<std::uint32_t, std::uint32_t> cases[] = {{0, 2048},   {0, 16384}, {1024, 2048}, {2048, 4096},
                                                            {4000, 512}, {8192, 512}, {32768, 512}};
    for (const auto& one : cases) {
        const std::uint32_t start = one.first, prompt = one.second;
        CAPTURE(start);
        CAPTURE(prompt);
        // The formula integrates where the count sums: they differ by half a position.
        CHECK(ah::detail::average_prefill_depth(m, prompt, start) ==
              doctest::Approx(counted(start, prompt)).epsilon(1e-3));
        CHECK(ah::prefill_flops_per_token(m, prompt, start).attention ==
              doctest::Approx(2.0 * ah::detail::average_prefill_depth(m, prompt, start) * 2));
    }
    // Past the window the sliding layer sees the whole window whatever the depth.
    CHECK(ah::detail::average_prefill_depth(m, 512, 8192) == doctest::Approx((2.0 * 8192 + 512 + 2.0 * 4096) / 2));
    // The matrix products do not depend on the cache.
    CHECK(ah::prefill_flops_per_token(m, 512, 32768).matmul == ah::prefill_flops_per_token(m, 512).matmul);

    // estimate_throughput: the prompt after 4096 cached tokens pays their attention; decode
    // is unchanged (its depth is the context either way).
    const auto gpu = device("H100 SXM");
    const auto& llama = model("llama-3.1-8b");
    const ah::throughput_constants c;
    const ah::inference_shape after{.context = 4608, .prompt = 512, .prompt_depth = 4096};
    const ah::inference_shape fresh{.context = 4608, .prompt = 512};
    const auto e = ah::estimate_throughput(gpu, llama, quant_format::bf16, after, c);
    const auto f = ah::prefill_flops_per_token(llama, 512, 4096);
    const double flops = gpu.peak[ah::dtype::bf16] * 1e12 * c.prefill_compute_efficiency;
    CHECK(e.prefill_tokens_per_second ==
          doctest::Approx(flops / (f.matmul + f.attention / c.prefill_attention_efficiency)));
    const auto e0 = ah::estimate_throughput(gpu, llama, quant_format::bf16, fresh, c);
    CHECK(e.prefill_tokens_per_second < e0.prefill_tokens_per_second);
    CHECK(e.decode_tokens_per_second == e0.decode_tokens_per_second);
    // A depth the context cannot hold is held to it.
    const ah::inference_shape too_deep{.context = 4608, .prompt = 512, .prompt_depth = 100000};
    CHECK(ah::estimate_throughput(gpu, llama, quant_format::bf16, too_deep, c).prefill_tokens_per_second ==
          e.prefill_tokens_per_second);
}

TEST_CASE("pipelined_prefill_seconds") {
    const ah::throughput_constants c; // micro-batches of 512 tokens, batches of 2048
    // One stage, or one micro-batch: no overlap.
    CHECK(ah::pipelined_prefill_seconds(1.0, 1.0, 4096, c) == 1.0);
    CHECK(ah::pipelined_prefill_seconds(1.0, 0.25, 512, c) == 1.0);
    CHECK(ah::pipelined_prefill_seconds(1.0, 0.25, 100, c) == 1.0);
    // Four equal stages, 4 micro-batches per batch: (1 + 3 x 0.25) / 4.
    CHECK(ah::pipelined_prefill_seconds(1.0, 0.25, 4096, c) == doctest::Approx(1.75 / 4));
    CHECK(ah::pipelined_prefill_seconds(1.0, 0.25, 2048, c) == doctest::Approx(1.75 / 4));
    // 1000 tokens: two micro-batches (512 + 488).
    CHECK(ah::pipelined_prefill_seconds(1.0, 0.25, 1000, c) == doctest::Approx(1.25 / 2));
    // Unequal stages: the slowest sets the pace of the micro-batches behind the first.
    CHECK(ah::pipelined_prefill_seconds(1.0, 0.7, 4096, c) == doctest::Approx((1 + 3 * 0.7) / 4));
    // Larger batches overlap more; no batch (0) or one no larger than a micro-batch, none.
    ah::throughput_constants big = c;
    big.prefill_batch_tokens = 4096;
    CHECK(ah::pipelined_prefill_seconds(1.0, 0.25, 4096, big) == doctest::Approx((1 + 7 * 0.25) / 8));
    big.prefill_batch_tokens = 0;
    CHECK(ah::pipelined_prefill_seconds(1.0, 0.25, 4096, big) == 1.0);
    big.prefill_batch_tokens = 256;
    CHECK(ah::pipelined_prefill_seconds(1.0, 0.25, 4096, big) == 1.0);
    // Never slower than one stage after another, never faster than the slowest stage.
    for (std::uint32_t prompt : {1u, 511u, 513u, 4096u, 100000u})
        for (double mx : {0.1, 0.5, 1.0}) {
            const double t = ah::pipelined_prefill_seconds(1.0, mx, prompt, c);
            CHECK(t <= 1.0);
            CHECK(t >= mx);
        }
}

TEST_CASE("estimate_throughput prefill on a vector peak (Apple M1 Max, 32-core GPU)") {
    const auto gpu = device("Apple M1 Max 32-core GPU");
    const auto& m = model("llama-2-7b");
    const ah::throughput_constants c;
    const ah::inference_shape s{.context = 512};
    const auto e = ah::estimate_throughput(gpu, m, quant_format::fp16, s, c);
    // Hand-computed: compute-bound, (matmul + attention / its efficiency) over
    // 10.4 TFLOPS x the vector efficiency (not the tensor-peak one).
    const auto f = ah::prefill_flops_per_token(m, 512);
    const double flops = 10.4e12 * c.prefill_vector_efficiency;
    CHECK(e.prefill_tokens_per_second ==
          doctest::Approx(flops / (f.matmul + f.attention / c.prefill_attention_efficiency)));
    // Measured 599.53 tok/s (llama-bench pp512, F16, calibration row 427): within 10 %.
    CHECK(std::fabs(e.prefill_tokens_per_second / 599.53 - 1) < 0.10);
    // With the tensor-peak efficiency instead, the estimate falls well short of it.
    ah::throughput_constants tensor = c;
    tensor.prefill_vector_efficiency = c.prefill_compute_efficiency;
    CHECK(ah::estimate_throughput(gpu, m, quant_format::fp16, s, tensor).prefill_tokens_per_second < 0.7 * 599.53);
    // The binned 24-core part scales with its cores: measured 453.03 (row 421), within 10 %.
    const auto binned = ah::estimate_throughput(device("Apple M1 Max 24-core GPU"), m, quant_format::fp16, s, c);
    CHECK(std::fabs(binned.prefill_tokens_per_second / 453.03 - 1) < 0.10);
}

#ifdef AI_HWACCEL_CALIBRATION_CSV
namespace {
struct errors {
    std::vector<double> ours, peer;
};
double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const auto n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
double worst(const std::vector<double>& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }
} // namespace

TEST_CASE("calibration error report") {
    const auto rows = calibration::read_rows(AI_HWACCEL_CALIBRATION_CSV);
    if (rows.empty()) {
        MESSAGE("calibration CSV not found at " AI_HWACCEL_CALIBRATION_CSV "; skipped");
        return;
    }
    std::map<std::pair<std::string, std::string>, errors> by;
    int skipped = 0;
    for (const auto& r : rows) {
        if (!r.skip.empty()) {
            if (r.what != calibration::metric::other) ++skipped;
            continue;
        }
        double ours = 0, peer = 0;
        switch (r.what) {
        case calibration::metric::decode:
            ours = ah::estimate_throughput(r.device, r.model, r.quant, r.shape).decode_tokens_per_second;
            peer = calibration::peer_tokens_per_second(r);
            break;
        case calibration::metric::prefill:
            ours = calibration::prefill_estimate(r);
            peer = calibration::peer_tokens_per_second(r);
            break;
        case calibration::metric::weights:
            ours = static_cast<double>(ah::weight_bytes(r.model, r.quant));
            peer = calibration::peer_weight_bytes(r);
            break;
        case calibration::metric::kv_cache: ours = static_cast<double>(ah::kv_cache_bytes(r.model, r.shape)); break;
        case calibration::metric::compute_buffer:
            ours = static_cast<double>(ah::overhead_bytes(r.model, r.shape) - ah::runtime_allowance_bytes);
            break;
        case calibration::metric::other: break;
        }
        if (!(ours > 0)) {
            ++skipped; // e.g. prefill on a device whose peak the catalogue lacks
            continue;
        }
        auto& e = by[{std::string(calibration::metric_name(r.what)), r.engine}];
        e.ours.push_back(std::fabs(ours - r.measured) / r.measured * 100);
        if (peer > 0) e.peer.push_back(std::fabs(peer - r.measured) / r.measured * 100);
    }
    std::printf("\ncalibration: absolute percentage error, all mapped rows (%d rows not scored)\n", skipped);
    std::printf("%-22s %-14s %5s %12s %12s %12s %12s\n", "metric", "engine", "rows", "ours med", "ours worst",
                "peer med", "peer worst");
    for (const auto& [k, e] : by) {
        std::printf("%-22s %-14s %5zu %11.1f%% %11.1f%%", k.first.c_str(), k.second.c_str(), e.ours.size(),
                    median(e.ours), worst(e.ours));
        if (e.peer.empty()) std::printf(" %12s %12s\n", "n/a", "n/a");
        else std::printf(" %11.1f%% %11.1f%%\n", median(e.peer), worst(e.peer));
    }

    // The targets (llama.cpp rows).
    const auto& dec = by[{"decode_tok_s", "llama.cpp"}];
    const auto& pre = by[{"prefill_tok_s", "llama.cpp"}];
    const auto& w = by[{"weights_bytes", "llama.cpp"}];
    REQUIRE(dec.ours.size() >= 100);
    REQUIRE(pre.ours.size() >= 40);
    // Every single-device prefill row of a catalogued device is scored, Apple's M1 and M2
    // GPUs (vector peaks) included: 124 rows, median 7.6 % when this was written.
    CHECK(pre.ours.size() >= 120);
    CHECK(median(pre.ours) <= 15);
    REQUIRE(w.ours.size() >= 20);
    CHECK(median(dec.ours) <= 25);
    CHECK(median(pre.ours) <= 35);
    // And no worse than the fit left them (REPORT.md, all rows: decode 9.7 % / 74.5 %,
    // prefill 8.5 % / 95.7 %), with a margin: a change that makes the estimator worse on
    // the published rows fails here (dropping the per-layer cost gives decode 13.9 %).
    CHECK(median(dec.ours) <= 11);
    CHECK(worst(dec.ours) <= 85);
    CHECK(median(pre.ours) <= 10);
    CHECK(worst(pre.ours) <= 105);
    CHECK(median(w.ours) <= 5);
    // Every uniform-format or K-mix GGUF file within 5 %; the IQ recipes' per-layer upgrades
    // are not modelled (IQ1_S comes out 6-7 % small).
    CHECK(worst(w.ours) <= 8);
    // No llama.cpp KV cache row names a model the catalogue holds; the hand-computed
    // cases in plan_memory.cpp cover the formula. Any mapped row must be within 2 %.
    if (const auto it = by.find({"kv_cache_bytes", "llama.cpp"}); it != by.end()) CHECK(worst(it->second.ours) <= 2);
}
#endif

#ifdef AI_HWACCEL_OWN_MEASUREMENTS_CSV
TEST_CASE("llama.cpp on an H200, measured by this project: every row maps, no estimate gets worse") {
    // tests/calibration/h200/llama-cpp-h200.csv: llama-bench through
    // benchmarks/llama_cpp/measure.sh (SUITE=depth too) and llama-batched-bench through
    // measure_batched.sh, never fitted on (tests/calibration/REPORT.md, "Our own
    // measurements"). The bounds are where the estimator stood when the rows were added,
    // with a little margin, not targets: on this GPU and this llama.cpp, one sequence's
    // decode is 0.67 to 1.23 x the measured rate (the per-layer cost fitted on 2024's
    // llama.cpp is too large here, and the quantized kernels read well below the
    // bandwidth), prefill 1.37 to 2.69 x (runtimes reach a smaller share of Hopper's
    // matrix peak than of the training devices'), and a batch's decode 0.90 to 5.0 x, the
    // more sequences the further above: llama.cpp (flash attention off, a cache per
    // sequence) gains far less from a batch than the weights read once and the matrix
    // peak allow.
    const auto rows = calibration::read_rows(AI_HWACCEL_OWN_MEASUREMENTS_CSV);
    REQUIRE(rows.size() == 46);
    std::vector<double> decode, prefill;
    std::size_t after_cache = 0;
    // format -> (batch, estimate / measured), in the file's order of growing batches
    std::map<std::string, std::vector<std::pair<std::uint32_t, double>>> batched;
    for (const auto& r : rows) {
        CAPTURE(r.id);
        REQUIRE(r.skip.empty());
        CHECK(r.device.maker == ah::vendor::nvidia);
        if (r.what == calibration::metric::decode) {
            const double x =
                ah::estimate_throughput(r.device, r.model, r.quant, r.shape).decode_tokens_per_second / r.measured;
            if (r.metric_name == "batch_decode_tok_s")
                batched[r.quant_name].emplace_back(r.shape.batch, x);
            else decode.push_back(x);
            continue;
        }
        const double x = calibration::prefill_estimate(r) / r.measured;
        prefill.push_back(x);
        if (r.shape.prompt_depth == 0) continue;
        // A prompt after a filled cache: modelled with the cached tokens it attends to, the
        // estimate is nearer than one that took the prompt as starting from empty.
        ++after_cache;
        calibration::row empty = r;
        empty.shape = {.context = r.shape.prompt, .prompt = r.shape.prompt};
        CHECK(std::fabs(std::log(x)) < std::fabs(std::log(calibration::prefill_estimate(empty) / r.measured)));
    }
    REQUIRE(decode.size() == 15);
    REQUIRE(prefill.size() == 15);
    REQUIRE(after_cache == 8);
    for (double x : decode) CHECK(std::fabs(std::log(x)) <= std::log(1.5));
    for (double x : prefill) CHECK(std::fabs(std::log(x)) <= std::log(2.9));
    REQUIRE(batched.size() == 2); // Q4_K_M and F16, batches of 1 to 128
    for (const auto& entry : batched) {
        const std::string& format = entry.first;
        const auto& points = entry.second;
        CAPTURE(format);
        REQUIRE(points.size() == 8);
        for (std::size_t i = 0; i < points.size(); ++i) {
            CHECK(points[i].second >= 0.6);
            CHECK(points[i].second <= 5.5);
            // From two sequences on, each doubling of the batch widens the gap.
            if (i >= 2) CHECK(points[i].second > points[i - 1].second);
        }
    }
}
#endif

#ifdef AI_HWACCEL_CALIBRATION_REPORT
TEST_CASE("throughput_constants defaults are the fitted values of the calibration report") {
    // tools/calibrate.py writes its fit into tests/calibration/REPORT.md; the header's
    // defaults must be those numbers (refitting and forgetting the header fails here).
    std::FILE* f = std::fopen(AI_HWACCEL_CALIBRATION_REPORT, "rb");
    REQUIRE(f != nullptr);
    std::string text;
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
    std::fclose(f);
    const auto fitted = [&](const std::string& name) {
        const auto at = text.find("| " + name + " | ");
        REQUIRE(at != std::string::npos);
        return std::strtod(text.c_str() + at + name.size() + 5, nullptr);
    };
    const ah::throughput_constants c;
    CHECK(c.decode_bandwidth_efficiency == doctest::Approx(fitted("decode_bandwidth_efficiency")).epsilon(1e-3));
    CHECK(c.decode_seconds_per_layer == doctest::Approx(fitted("decode_seconds_per_layer")).epsilon(1e-3));
    CHECK(c.prefill_compute_efficiency == doctest::Approx(fitted("prefill_compute_efficiency")).epsilon(1e-3));
    CHECK(c.prefill_dequantized_factor == doctest::Approx(fitted("prefill_dequantized_factor")).epsilon(1e-3));
    CHECK(c.prefill_attention_efficiency == doctest::Approx(fitted("prefill_attention_efficiency")).epsilon(1e-3));
    CHECK(c.prefill_vector_efficiency == doctest::Approx(fitted("prefill_vector_efficiency")).epsilon(1e-3));
}
#endif
