#include "ai_hwaccel/plan/training.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace ah = ai_hwaccel;

// AI_HWACCEL_CALIBRATION_CSV: path of calibration-measurements.csv (the "training" rows
// are compared with the estimate below). When the build does not define it, the
// calibration test says so and passes without checking anything.

namespace {
constexpr std::uint64_t gib = 1ull << 30;

constexpr const ah::model_spec& model(std::string_view id) { return *ah::find_model(id); }

constexpr ah::training_setup with(ah::training_setup t) { return t; }

// A hand-made toy model whose numbers are easy to follow by hand: 2 layers, hidden 64,
// 4 heads of 16 (no GQA), FFN 128, vocabulary 100.
constexpr ah::model_spec toy = ah::detail::completed({.id = "toy", .name = "Toy", .family = "llama", .layers = 2,
                                                       .hidden_size = 64, .intermediate_size = 128,
                                                       .attention_heads = 4, .kv_heads = 4, .head_dim = 16,
                                                       .vocab_size = 100, .context_length = 256,
                                                       .source = "hand-made"});
} // namespace

// ---- Compile-time examples ----------------------------------------------------------

// Toy parameters: embeddings 100*64 twice + final norm 64 + 2 x (attention 4*64*64 +
// FFN 3*64*128 + norms 2*64) = 12864 + 2 x 41088 = 95040.
static_assert(toy.parameters == 95040);

// Mixed-precision AdamW full fine-tune: 2 + 2 + 12 = 16 bytes per parameter before
// activations (ZeRO paper's accounting), not the reference peer's 8.
constexpr auto llama2_7b_full = ah::estimate_training_memory(model("llama-2-7b"), {});
static_assert(llama2_7b_full.weights_bytes == 2 * model("llama-2-7b").parameters);
static_assert(llama2_7b_full.gradients_bytes == 2 * model("llama-2-7b").parameters);
static_assert(llama2_7b_full.optimizer_bytes == 12 * model("llama-2-7b").parameters);
static_assert(llama2_7b_full.peak_memory_bytes > 16 * model("llama-2-7b").parameters);
static_assert(llama2_7b_full.peak_memory_bytes <= llama2_7b_full.total_bytes());

// QLoRA of LLaMA 65B fits one 48 GB card as the paper ran it (rank-64 adapters on every
// linear layer, its qlora.py's defaults; 512-token sequences, checkpointing), and a LoRA of
// it does not.
constexpr ah::training_setup qlora_paper = {.method = ah::training_method::qlora, .seq_len = 512, .lora_rank = 64,
                                            .gradient_checkpointing = true};
static_assert(ah::training_fits(model("llama-65b"), qlora_paper, 48'000'000'000ull));
static_assert(!ah::training_fits(model("llama-65b"), with({.method = ah::training_method::lora, .seq_len = 512,
                                                           .lora_rank = 64, .gradient_checkpointing = true}),
                                 48'000'000'000ull));

// ZeRO-3 over 8 devices divides weights, gradients and optimizer states by 8.
constexpr auto z0 = ah::estimate_training_memory(model("llama-3.1-8b"), {.seq_len = 1024, .devices = 8});
constexpr auto z3 = ah::estimate_training_memory(
    model("llama-3.1-8b"), {.seq_len = 1024, .devices = 8, .zero = ah::zero_stage::parameters});
static_assert(z3.weights_bytes == (z0.weights_bytes + 7) / 8);
static_assert(z3.gradients_bytes == (z0.gradients_bytes + 7) / 8);
static_assert(z3.optimizer_bytes == (z0.optimizer_bytes + 7) / 8);
static_assert(z3.activations_bytes == z0.activations_bytes); // micro-batch is per device

// ---- Hand-computed examples ---------------------------------------------------------

TEST_CASE("estimate_training_memory: toy model by hand") {
    const ah::training_setup t = {.seq_len = 8, .micro_batch = 2, .precision = ah::training_precision::mixed_bf16};
    const auto e = ah::estimate_training_memory(toy, t);
    CHECK(e.trainable_parameters == 95040);
    CHECK(e.weights_bytes == 2 * 95040);
    CHECK(e.gradients_bytes == 2 * 95040);
    CHECK(e.optimizer_bytes == 12 * 95040);
    // Per token per layer: 2 x (4*64 + 2*64 + 2*64 + 4*128) = 2048 bytes + 4 bytes x 4
    // heads of log-sum-exp = 2064; 16 tokens x 2 layers = 66048 kept.
    CHECK(ah::detail::training::layer_activation_bytes_per_token(toy, t) == 2064);
    // Transient: 2 x (3*128 + 2*64) = 1024 per token -> 16384. Loss: 16 x 100 x 20 = 32000.
    CHECK(e.activations_bytes == 66048 + 32000);
    // Peak: max(start 98048, end 190080 grads + 33024 one layer + 16384) + weights + states.
    CHECK(e.peak_memory_bytes == 2 * 95040 + 12 * 95040 + (2 * 95040 + 33024 + 16384));

    // Checkpointing keeps 2 x 64 bytes per token per layer (16 x 2 x 128 = 4096) and
    // rebuilds one layer (33024 + 16384 working).
    const auto c = ah::estimate_training_memory(toy, with({.seq_len = 8, .micro_batch = 2,
                                                           .gradient_checkpointing = true}));
    CHECK(c.activations_bytes == 4096 + 33024 + 16384);

    // Without flash attention each token keeps its softmax row: 2 bytes x 4 heads x 8.
    const auto nf = ah::estimate_training_memory(toy, with({.seq_len = 8, .micro_batch = 2,
                                                            .flash_attention = false}));
    CHECK(ah::detail::training::layer_activation_bytes_per_token(toy, {.seq_len = 8, .flash_attention = false}) ==
          2048 + 64);
    CHECK(nf.activations_bytes == 16 * 2 * (2048 + 64) + 32000);
}

TEST_CASE("estimate_training_memory: a plain FFN by hand") {
    // The toy model with a plain up-GELU-down FFN (Falcon's): per token and layer it keeps
    // up's output and the activation's (2 x 128 values, not 4 x 128): 2 x (4*64 + 2*64 +
    // 2*64 + 2*128) = 1536 bytes + 16 of log-sum-exp; the transient holds two FFN
    // gradients: 2 x (2*128 + 2*64) = 768 per token. LoRA on "gate" adapts nothing.
    auto plain = toy;
    plain.gated_ffn = false;
    const ah::training_setup t = {.seq_len = 8, .micro_batch = 2, .precision = ah::training_precision::mixed_bf16};
    CHECK(ah::detail::training::layer_activation_bytes_per_token(plain, t) == 1552);
    CHECK(ah::detail::training::backward_transient_bytes_per_token(plain) == 768);
    CHECK(ah::detail::training::lora_parameters(plain, 8, ah::lora_target::gate) == 0);
    CHECK(ah::detail::training::lora_parameters(toy, 8, ah::lora_target::gate) > 0);
}

TEST_CASE("estimate_training_memory: LoRA and QLoRA counts") {
    // LoRA rank 8 on all linear layers of the toy: per layer q,k,v,o 4 x 8 x (64+64) +
    // gate,up,down 3 x 8 x (64+128) = 4096 + 4608 = 8704; two layers 17408.
    const ah::training_setup lora = {.method = ah::training_method::lora, .lora_rank = 8};
    const auto l = ah::estimate_training_memory(toy, lora);
    CHECK(l.trainable_parameters == 17408);
    CHECK(l.weights_bytes == 2 * 95040 + 2 * 17408);
    CHECK(l.optimizer_bytes == 12 * 17408);
    // Only q and v: 2 x 8 x 128 x 2 layers = 4096.
    CHECK(ah::detail::training::lora_parameters(toy, 8, ah::lora_attention_qv) == 4096);

    // Llama 3.1 8B, rank 16, all linear: per layer 16 x (8192 + 5120 + 5120 + 8192 +
    // 3 x 18432) = 16 x 81920; x 32 layers = 41,943,040 (PEFT reports 41,943,040).
    CHECK(ah::detail::training::lora_parameters(model("llama-3.1-8b"), 16, ah::lora_all_linear) == 41943040);

    // QLoRA base: block linear weights in NF4 (n/2 + n/64 + n/4096), the rest in bf16.
    const auto& m = model("llama-3.1-8b");
    const std::uint64_t linear = ah::detail::training::block_linear_parameters(m);
    CHECK(linear == 32ull * (2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336));
    const auto q = ah::estimate_training_memory(m, {.method = ah::training_method::qlora, .lora_rank = 16});
    const std::uint64_t base = linear / 2 + linear / 64 + linear / 4096 + 2 * (m.parameters - linear);
    CHECK(q.weights_bytes == base + 2 * 41943040);
    // 4.127 bits per quantized weight.
    CHECK(std::fabs(static_cast<double>(linear / 2 + linear / 64 + linear / 4096) * 8.0 /
                        static_cast<double>(linear) -
                    4.127) < 0.001);
}

TEST_CASE("estimate_training_memory: optimizers and precision") {
    const auto& m = model("llama-3.2-1b");
    const auto p = m.parameters;
    auto opt = [&](ah::training_optimizer o, ah::training_precision pr) {
        return ah::estimate_training_memory(m, with({.opt = o, .precision = pr})).optimizer_bytes;
    };
    CHECK(opt(ah::training_optimizer::adamw, ah::training_precision::mixed_bf16) == 12 * p);
    CHECK(opt(ah::training_optimizer::adamw, ah::training_precision::pure_bf16) == 4 * p);
    CHECK(opt(ah::training_optimizer::adamw, ah::training_precision::fp32) == 8 * p);
    CHECK(opt(ah::training_optimizer::sgd, ah::training_precision::fp32) == 0);
    CHECK(opt(ah::training_optimizer::sgd_momentum, ah::training_precision::mixed_bf16) == 8 * p);
    // 8-bit Adam: 2 bytes + 2 fp32 scales per 2048 values, plus the fp32 master.
    // 1 byte per state value and an fp32 scale per 256 (bitsandbytes' blocks): 2.03 B.
    CHECK(opt(ah::training_optimizer::adamw_8bit, ah::training_precision::pure_bf16) == (p * 2 * 2080 + 2047) / 2048);
    CHECK(ah::estimate_training_memory(m, with({.precision = ah::training_precision::fp32})).weights_bytes == 4 * p);
}

TEST_CASE("estimate_training_memory: ZeRO stages and offload") {
    const auto& m = model("llama-3.1-8b");
    ah::training_setup t = {.seq_len = 1024, .devices = 4};
    const auto s0 = ah::estimate_training_memory(m, t);
    t.zero = ah::zero_stage::optimizer;
    const auto s1 = ah::estimate_training_memory(m, t);
    t.zero = ah::zero_stage::gradients;
    const auto s2 = ah::estimate_training_memory(m, t);
    t.zero = ah::zero_stage::parameters;
    const auto s3 = ah::estimate_training_memory(m, t);
    CHECK(s1.optimizer_bytes == (s0.optimizer_bytes + 3) / 4);
    CHECK(s1.gradients_bytes == s0.gradients_bytes);
    CHECK(s2.gradients_bytes == (s0.gradients_bytes + 3) / 4);
    CHECK(s2.weights_bytes == s0.weights_bytes);
    CHECK(s3.weights_bytes == (s0.weights_bytes + 3) / 4);
    CHECK(s3.buffers_bytes > 0); // two gathered layers
    CHECK(s0.peak_memory_bytes > s1.peak_memory_bytes);
    CHECK(s1.peak_memory_bytes > s2.peak_memory_bytes);
    CHECK(s2.peak_memory_bytes > s3.peak_memory_bytes);
    // ZeRO needs more than one device to shard anything.
    CHECK(ah::estimate_training_memory(m, with({.seq_len = 1024, .zero = ah::zero_stage::parameters}))
              .weights_bytes == s0.weights_bytes);

    t.offload_optimizer = true;
    t.offload_parameters = true;
    const auto off = ah::estimate_training_memory(m, t);
    CHECK(off.optimizer_bytes == 0);
    CHECK(off.weights_bytes == 0);
    // ZeRO-Offload moves the gradients too; one layer of them is in flight on the device.
    CHECK(off.host_memory_bytes == s3.optimizer_bytes + s3.weights_bytes + s3.gradients_bytes);
    CHECK(off.gradients_bytes == (m.parameters + 31) / 32 * 2);
    CHECK(off.peak_memory_bytes < s3.peak_memory_bytes);
}

TEST_CASE("estimate_training_memory: ZeRO-Offload fits 13B on one 32 GB device") {
    // Ren et al. (arXiv:2101.06840): ZeRO-Offload trains models of over 13B parameters on a
    // single 32 GB V100. The device keeps the 16-bit weights (26 GB for Llama 2 13B), the
    // activations and a layer of gradients; states, master weights and gradients go to host.
    const auto& m = model("llama-2-13b");
    ah::training_setup t = {.seq_len = 1024, .zero = ah::zero_stage::gradients, .offload_optimizer = true,
                            .gradient_checkpointing = true};
    const auto e = ah::estimate_training_memory(m, t);
    CHECK(e.weights_bytes == 2 * m.parameters);
    CHECK(e.gradients_bytes == (m.parameters + 39) / 40 * 2); // one of its 40 layers
    CHECK(e.host_memory_bytes == 14 * m.parameters);           // 12 of states + 2 of gradients
    CHECK(ah::training_fits(m, t, 32 * gib));
    t.offload_optimizer = false;
    CHECK_FALSE(ah::training_fits(m, t, 32 * gib));
}

TEST_CASE("estimate_training_memory: multi-model methods") {
    const auto& m = model("llama-3.1-8b");
    const auto full = ah::estimate_training_memory(m, {});
    const auto dpo = ah::estimate_training_memory(m, {.method = ah::training_method::dpo});
    CHECK(dpo.frozen_models_bytes == 2 * m.parameters); // reference model, bf16
    CHECK(dpo.activations_bytes > full.activations_bytes); // chosen + rejected
    const auto ppo = ah::estimate_training_memory(m, {.method = ah::training_method::rlhf});
    CHECK(ppo.trainable_parameters == 2 * m.parameters); // actor + critic
    CHECK(ppo.frozen_models_bytes == 4 * m.parameters);  // reference + reward
    CHECK(ppo.peak_memory_bytes > dpo.peak_memory_bytes);
    const auto kd = ah::estimate_training_memory(
        m, {.method = ah::training_method::distillation, .teacher_parameters = 70'000'000'000ull});
    CHECK(kd.frozen_models_bytes == 140'000'000'000ull);
    // ZeRO-3 gathers a layer of the teacher as well as of the student, two of each live: the
    // teacher's layer is its weights over its own layer count (405B: 126 layers).
    const auto& big = model("llama-3.1-405b");
    const ah::training_setup kd3 = {.method = ah::training_method::distillation, .devices = 64,
                                    .zero = ah::zero_stage::parameters, .gradient_checkpointing = true,
                                    .teacher_parameters = big.parameters, .teacher_layers = big.layers};
    const auto k3 = ah::estimate_training_memory(m, kd3);
    const std::uint64_t student_layer = (2 * m.parameters + m.layers - 1) / m.layers;
    const std::uint64_t teacher_layer = (2 * big.parameters + big.layers - 1) / big.layers;
    CHECK(k3.buffers_bytes == 2 * (student_layer + teacher_layer));
    const auto dpo_lora = ah::estimate_training_memory(
        m, {.method = ah::training_method::dpo, .policy_method = ah::training_method::lora});
    CHECK(dpo_lora.trainable_parameters == ah::detail::training::lora_parameters(m, 16, ah::lora_all_linear));
    // A LoRA or QLoRA policy's reference is its own base with the adapters off: no copy.
    // PPO keeps its reward model.
    CHECK(dpo_lora.frozen_models_bytes == 0);
    const auto dpo_qlora = ah::estimate_training_memory(
        m, {.method = ah::training_method::dpo, .policy_method = ah::training_method::qlora});
    CHECK(dpo_qlora.frozen_models_bytes == 0);
    const auto ppo_lora = ah::estimate_training_memory(
        m, {.method = ah::training_method::rlhf, .policy_method = ah::training_method::lora});
    CHECK(ppo_lora.frozen_models_bytes == 2 * m.parameters); // the reward model, bf16
    CHECK(ppo.frozen_models_bytes == 2 * ppo_lora.frozen_models_bytes); // full: reference + reward
    // ZeRO-3 gathers one layer of each frozen model's shape, two live: PPO with a LoRA
    // policy has one frozen model (the reward), a full policy two, DPO one. Before, the
    // LoRA policy's reward layer was halved (divided by the two trained models).
    const auto& seventy = model("llama-3.1-70b");
    const std::uint64_t frozen_layer = (2 * seventy.parameters + seventy.layers - 1) / seventy.layers;
    for (const auto policy : {ah::training_method::lora, ah::training_method::full}) {
        CAPTURE(ah::to_string(policy));
        const auto e = ah::estimate_training_memory(seventy, {.method = ah::training_method::rlhf, .policy_method = policy,
                                                          .devices = 8, .zero = ah::zero_stage::parameters});
        const std::uint64_t trained_layer = (ah::detail::training::model_weight_bytes(
                                                 seventy, policy, ah::training_precision::mixed_bf16) +
                                             seventy.layers - 1) /
                                            seventy.layers;
        CHECK(e.buffers_bytes == 2 * (trained_layer + frozen_layer));
    }
    const auto prefix = ah::estimate_training_memory(m, {.method = ah::training_method::prefix});
    CHECK(prefix.trainable_parameters == 20ull * 32 * 2 * 1024);

    CHECK(ah::parse_training_method("Full") == ah::training_method::full);
    CHECK(ah::parse_training_method(" ppo ") == ah::training_method::rlhf);
    CHECK(!ah::parse_training_method("adam").has_value());
    CHECK(ah::to_string(ah::training_method::distillation) == "distillation");
}

TEST_CASE("estimate_training_memory: monotonicity") {
    for (const auto* id : {"llama-3.2-1b", "llama-3.1-8b", "mixtral-8x7b", "qwen3-30b-a3b"}) {
        const auto& m = model(id);
        CAPTURE(id);
        for (auto method : {ah::training_method::full, ah::training_method::lora, ah::training_method::qlora}) {
            CAPTURE(ah::to_string(method));
            std::uint64_t last = 0;
            for (std::uint32_t s = 256; s <= 32768; s *= 2) {
                const auto e = ah::estimate_training_memory(m, with({.method = method, .seq_len = s}));
                CHECK(e.peak_memory_bytes > last);
                last = e.peak_memory_bytes;
                const auto ck = ah::estimate_training_memory(
                    m, with({.method = method, .seq_len = s, .gradient_checkpointing = true}));
                CHECK(ck.peak_memory_bytes <= e.peak_memory_bytes);
                const auto nf = ah::estimate_training_memory(
                    m, with({.method = method, .seq_len = s, .flash_attention = false}));
                CHECK(nf.peak_memory_bytes > e.peak_memory_bytes);
            }
            last = 0;
            for (std::uint32_t b = 1; b <= 16; b *= 2) {
                const auto e = ah::estimate_training_memory(m, with({.method = method, .micro_batch = b}));
                CHECK(e.peak_memory_bytes > last);
                last = e.peak_memory_bytes;
            }
            std::uint64_t prev = ~0ull;
            for (std::uint32_t n = 1; n <= 64; n *= 2) {
                const auto e = ah::estimate_training_memory(
                    m, with({.method = method, .devices = n, .zero = ah::zero_stage::parameters}));
                CHECK(e.peak_memory_bytes <= prev);
                prev = e.peak_memory_bytes;
            }
        }
        // Full > LoRA > QLoRA.
        const auto f = ah::estimate_training_memory(m, {});
        const auto l = ah::estimate_training_memory(m, {.method = ah::training_method::lora});
        const auto q = ah::estimate_training_memory(m, {.method = ah::training_method::qlora});
        CHECK(f.peak_memory_bytes > l.peak_memory_bytes);
        CHECK(l.peak_memory_bytes > q.peak_memory_bytes);
    }
    CHECK(ah::estimate_training_memory(ah::model_spec{}, {}).peak_memory_bytes == 0);
    // Saturates instead of overflowing on absurd inputs.
    const auto huge = ah::estimate_training_memory(model("llama-3.1-405b"),
                                                   with({.seq_len = ~0u, .micro_batch = ~0u, .flash_attention = false}));
    CHECK(huge.peak_memory_bytes == ~0ull);
    // DPO doubles the micro-batch (chosen and rejected): at 2^31 that must not wrap to 0.
    const auto& m8 = model("llama-3.1-8b");
    const auto one = ah::estimate_training_memory(m8, {.method = ah::training_method::dpo, .micro_batch = 1});
    const auto wrap = ah::estimate_training_memory(m8, {.method = ah::training_method::dpo, .micro_batch = 1u << 31});
    CHECK(wrap.activations_bytes > one.activations_bytes);
    CHECK(wrap.peak_memory_bytes == ~0ull);
}

TEST_CASE("max_training_seq_len") {
    const auto& m = model("llama-3.1-8b");
    const ah::training_setup t = {.method = ah::training_method::qlora, .micro_batch = 1, .lora_rank = 32,
                                  .gradient_checkpointing = true};
    const auto s16 = ah::max_training_seq_len(m, t, 16 * gib);
    const auto s80 = ah::max_training_seq_len(m, t, 80 * gib);
    CHECK(s16 > 0);
    CHECK(s80 > s16);
    auto fit = t;
    fit.seq_len = s16;
    CHECK(ah::training_fits(m, fit, 16 * gib));
    fit.seq_len = s16 + 256;
    CHECK(!ah::training_fits(m, fit, 16 * gib));
    CHECK(ah::max_training_seq_len(m, t, 1 * gib) == 0);
    // A limit of the whole uint32_t range with a step of 1 ends (its midpoint once wrapped).
    CHECK(ah::max_training_seq_len(m, t, 16 * gib, 1, ~0u) >= s16);
    CHECK(ah::max_training_seq_len(m, t, 16 * gib, 1, ~0u) < s16 + 256);
}

// ---- Calibration against published measurements --------------------------------------

#ifdef AI_HWACCEL_CALIBRATION_CSV
namespace {
std::vector<std::string> split_csv_line(std::string line) {
    if (!line.empty() && line.back() == '\r') line.pop_back(); // the file has CRLF line ends
    std::vector<std::string> out(1);
    bool quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (quoted) {
            if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') out.back() += '"', ++i;
            else if (c == '"') quoted = false;
            else out.back() += c;
        } else if (c == '"') quoted = true;
        else if (c == ',') out.emplace_back();
        else out.back() += c;
    }
    return out;
}

bool has(std::string_view hay, std::string_view needle) { return ah::detail::icontains(hay, needle); }

double to_bytes(double value, std::string_view unit) {
    if (has(unit, "GiB")) return value * static_cast<double>(gib);
    if (has(unit, "MB")) return value * 1e6;
    if (has(unit, "GB")) return value * 1e9;
    return 0;
}

double percentile50(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const auto n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// How a row's published setup maps onto training_setup. Rules read the row's text
// columns (engine, method, test), never its id; where the source does not say, the
// assumption is written here once:
// - torchtune: pure bf16 weights, gradients and AdamW states (torchtune's `dtype: bf16`),
//   LoRA on q, v, output projection and the FFN at rank 8 (its Llama configs), activation
//   checkpointing on (recipe defaults). Rows without a sequence length: batch 2 of 2048
//   packed tokens (the README's footnote for its table). The 2024-25 rows use chunked
//   cross-entropy (recipe loss), the April 2024 rows plain cross-entropy. Multi-device
//   recipes are FSDP full-shard (ZeRO-3). The single-device full fine-tune recipe uses
//   8-bit paged AdamW with the optimizer step fused into backward (its config).
// - The torchtune "optimization flags" ladder is cumulative: packed + compile + chunked
//   cross-entropy; then + activation checkpointing + optimizer in backward + activation
//   offloading; then LoRA with plain AdamW (8-bit AdamW and optimizer in backward off).
// - Unsloth max-context rows: QLoRA rank 32 on all linear layers, batch 1, checkpoints
//   offloaded to host memory, chunked cross-entropy; the "Hugging Face + FA2" figures:
//   checkpointing on device, plain cross-entropy. VRAM "N GB" cards hold N GiB.
struct mapped {
    bool ok = false;
    ah::training_setup setup;
    std::string why;
};

mapped map_row(const std::vector<std::string>& c, std::size_t i_engine, std::size_t i_quant, std::size_t i_test,
               std::size_t i_ndev, std::size_t i_ctx, std::size_t i_batch) {
    mapped r;
    const std::string& engine = c[i_engine];
    const std::string text = c[i_quant] + " | " + c[i_test];
    ah::training_setup t;
    t.devices = c[i_ndev].empty() ? 1u : static_cast<std::uint32_t>(std::stoul(c[i_ndev]));
    t.seq_len = c[i_ctx].empty() ? 2048u : static_cast<std::uint32_t>(std::stoul(c[i_ctx]));
    t.micro_batch = c[i_batch].empty() ? 2u : static_cast<std::uint32_t>(std::stoul(c[i_batch]));
    if (!has(engine, "torchtune")) {
        r.why = "engine not mapped: " + engine;
        return r;
    }
    t.precision = ah::training_precision::pure_bf16;
    t.lora_rank = 8;
    t.lora_targets = ah::lora_target::q | ah::lora_target::v | ah::lora_target::o | ah::lora_target::gate |
                     ah::lora_target::up | ah::lora_target::down;
    t.gradient_checkpointing = true;
    t.chunked_loss = !has(engine, "Apr 2024");
    if (t.devices > 1) t.zero = ah::zero_stage::parameters;
    if (has(text, "QLoRA")) t.method = ah::training_method::qlora;
    else if (has(text, "LoRA")) t.method = ah::training_method::lora;
    else t.method = ah::training_method::full;
    const bool ladder = has(c[i_test], "+ ") || has(c[i_test], "with above");
    if (ladder) {
        t.gradient_checkpointing = !has(c[i_test], "Chunked cross-entropy");
        t.offload_activations = t.gradient_checkpointing;
        t.optimizer_in_backward = has(c[i_test], "offloading");
    } else if (t.method == ah::training_method::full && t.devices == 1) {
        t.opt = ah::training_optimizer::adamw_8bit;
        t.optimizer_in_backward = true;
    }
    r.ok = true;
    r.setup = t;
    return r;
}
} // namespace
#endif

TEST_CASE("estimate_training_memory: calibration rows") {
#ifndef AI_HWACCEL_CALIBRATION_CSV
    MESSAGE("AI_HWACCEL_CALIBRATION_CSV not defined: calibration comparison skipped");
#else
    std::ifstream in(AI_HWACCEL_CALIBRATION_CSV);
    if (!in) {
        MESSAGE("calibration CSV absent (" AI_HWACCEL_CALIBRATION_CSV "): skipped");
        return;
    }
    std::string line;
    std::getline(in, line);
    const auto header = split_csv_line(line);
    auto col = [&](std::string_view name) {
        const auto it = std::find(header.begin(), header.end(), name);
        REQUIRE(it != header.end());
        return static_cast<std::size_t>(it - header.begin());
    };
    const auto i_id = col("id"), i_section = col("section"), i_metric = col("metric"), i_value = col("value"),
               i_unit = col("unit"), i_model = col("model"), i_quant = col("quant"), i_engine = col("engine"),
               i_hw = col("hardware"), i_ndev = col("n_devices"), i_test = col("test"), i_ctx = col("ctx_tokens"),
               i_batch = col("batch"), i_notes = col("notes");
    std::vector<double> peak_errors, context_errors;
    std::printf("\ntraining calibration (estimate vs published; APE = |est - pub| / pub)\n");
    while (std::getline(in, line)) {
        const auto c = split_csv_line(line);
        if (c.size() < header.size() || c[i_section] != "training") continue;
        const std::string& metric = c[i_metric];
        if (metric != "peak_memory_per_gpu" && metric != "max_context_tokens") continue;
        const auto* m = ah::find_model(c[i_model]);
        if (m == nullptr) {
            std::printf("  row %-4s skipped: model \"%s\" not in the catalogue\n", c[i_id].c_str(),
                        c[i_model].c_str());
            continue;
        }
        const double published = std::stod(c[i_value]);
        if (metric == "peak_memory_per_gpu") {
            const auto mp = map_row(c, i_engine, i_quant, i_test, i_ndev, i_ctx, i_batch);
            if (!mp.ok) {
                std::printf("  row %-4s skipped: %s\n", c[i_id].c_str(), mp.why.c_str());
                continue;
            }
            const double want = to_bytes(published, c[i_unit]);
            const auto e = ah::estimate_training_memory(*m, mp.setup);
            const double got = static_cast<double>(e.peak_memory_bytes);
            const double ape = std::fabs(got - want) / want;
            peak_errors.push_back(ape);
            std::printf("  row %-4s %-14s %-6s x%u s%u b%u: published %6.1f GiB, estimate %6.1f GiB, APE %5.1f %%\n",
                        c[i_id].c_str(), m->id.data(), std::string(ah::to_string(mp.setup.method)).c_str(),
                        mp.setup.devices, mp.setup.seq_len, mp.setup.micro_batch, want / double(gib), got / double(gib),
                        100 * ape);
        } else {
            // Longest sequence that fits; the card's VRAM is read from the hardware text.
            const std::string& hw = c[i_hw];
            const auto pos = hw.find(" GB");
            if (pos == std::string::npos) continue;
            auto start = hw.rfind(' ', pos - 1);
            start = start == std::string::npos ? 0 : start + 1;
            const std::uint64_t vram = std::stoull(hw.substr(start, pos - start)) * gib;
            ah::training_setup t = {.method = ah::training_method::qlora, .micro_batch = 1, .lora_rank = 32,
                                    .gradient_checkpointing = true};
            auto compare = [&](bool unsloth, double pub, const char* who) {
                t.offload_activations = unsloth;
                t.chunked_loss = unsloth;
                const double got = ah::max_training_seq_len(*m, t, vram, 64);
                const double ape = std::fabs(got - pub) / pub;
                context_errors.push_back(ape);
                std::printf("  row %-4s %-14s qlora %-9s %3llu GiB: published %7.0f tokens, estimate %7.0f, APE %5.1f %%\n",
                            c[i_id].c_str(), m->id.data(), who, static_cast<unsigned long long>(vram / gib), pub, got,
                            100 * ape);
            };
            const bool hf = has(c[i_engine], "Hugging Face");
            compare(!hf, published, hf ? "HF+FA2" : "Unsloth");
            const auto note = c[i_notes].find("FA2");
            if (!hf && note != std::string::npos) {
                const auto colon = c[i_notes].find(':', note);
                if (colon != std::string::npos) compare(false, std::stod(c[i_notes].substr(colon + 1)), "HF+FA2");
            }
        }
    }
    const double peak_median = percentile50(peak_errors);
    const double context_median = percentile50(context_errors);
    std::printf("  peak_memory_per_gpu: %zu rows, median APE %.1f %%, worst %.1f %%\n", peak_errors.size(),
                100 * peak_median,
                peak_errors.empty() ? 0.0 : 100 * *std::max_element(peak_errors.begin(), peak_errors.end()));
    std::printf("  max_context_tokens:  %zu comparisons, median APE %.1f %%, worst %.1f %%\n", context_errors.size(),
                100 * context_median,
                context_errors.empty() ? 0.0 : 100 * *std::max_element(context_errors.begin(), context_errors.end()));
    // Bounds set once from the table above, with margin, and stated in the report: the
    // median absolute percentage error of the peak is 11.5 % over 10 rows, of the longest
    // sequence 16.2 % over 11 comparisons. Single rows miss by up to 46 % (peak) and 120 %
    // (HF at 12 GiB, where the runtime's own overhead, not modelled, is most of the card).
    CHECK(peak_errors.size() >= 8);
    CHECK(peak_median < 0.20);
    CHECK(context_median < 0.25);
#endif
}
