// ai-hwaccel plan: how much accelerator memory fine-tuning a model takes (an estimate).
//
// `estimate_training_memory(model, setup)` adds up, per device, what a training step
// holds: the weights at the method's storage type, the gradients and optimizer states of
// the trainable parameters, the activations kept for the backward pass (by sequence
// length, micro-batch, gradient checkpointing, flash attention), the frozen models some
// methods carry (DPO reference, PPO reference/reward/critic, distillation teacher), and
// what ZeRO / FSDP shards across data-parallel devices or offloads to host memory.
// Everything is integer byte arithmetic usable in constant expressions; nothing is fitted
// to measurements. Sources of each term:
//
// - Mixed-precision Adam: 2 (16-bit weights) + 2 (16-bit gradients) + 12 (fp32 master
//   weights, Adam m and v) = 16 bytes per trainable parameter; ZeRO partitions the 12
//   (stage 1), then the gradients (2), then the weights (3). Rajbhandari et al., "ZeRO:
//   Memory Optimizations Toward Training Trillion Parameter Models", SC'20,
//   arXiv:1910.02054, sections 3.1 and 5. FSDP FULL_SHARD is stage 3, SHARD_GRAD_OP
//   stage 2. Optimizer offload to host: ZeRO-Offload (Ren et al., arXiv:2101.06840),
//   which moves the gradients to host memory too as the backward pass produces them (the
//   device keeps about one layer's worth in flight) and runs the optimizer there: the
//   device holds the 16-bit weights, the activations and that layer of gradients.
// - 8-bit Adam: block-wise quantized m and v, 1 byte each plus one fp32 scale per 256
//   values (Dettmers et al., "8-bit Optimizers via Block-wise Quantization",
//   arXiv:2110.02861, whose blocks were 2048; bitsandbytes' Optimizer2State now makes
//   blocks of 256).
// - QLoRA base weights: NF4 with double quantization: 4 bits + an 8-bit constant per 64
//   weights + an fp32 constant per 256 blocks = 4 + 8/64 + 32/(64*256) = 4.127 bits per
//   weight (Dettmers et al., "QLoRA", arXiv:2305.14314, section 3 "Double
//   Quantization"). Only the linear layers of the blocks are quantized; embeddings, head
//   and norms stay 16-bit, as bitsandbytes and torchao do.
// - LoRA: r x (d_in + d_out) trainable values per adapted matrix per layer (Hu et al.,
//   arXiv:2106.09685), counted from the model's shapes for q, k, v, o, gate, up, down.
// - Activations: the accounting of Korthikanti et al., "Reducing Activation Recomputation
//   in Large Transformer Models", arXiv:2205.05198, section 4.1 (s*b*h*(34 + 5*a*s/h)
//   bytes per layer for GPT), redone for today's decoders: RMSNorm, grouped-query
//   attention, gated (SwiGLU) FFN, no dropout. Per token and layer, in 16-bit values:
//   attention norm input h, QKV input h, Q q_w, K kv_w, V kv_w, output-projection input
//   q_w; FFN norm input h, gate/up input h, gate g i, up u i, silu(g) i, down input i;
//   i.e. 2 x (4h + 2 q_w + 2 kv_w + 4i) bytes, plus the softmax output 2*a*s bytes when
//   attention is materialised; flash attention keeps only an fp32 log-sum-exp per head
//   (4a bytes). For h = q_w = kv_w, i = 4h that is 48h: Korthikanti's 34h less the 2h
//   of dropout masks, plus 16h for the gate projection's output and its SiLU, which a
//   gated FFN keeps beside the up projection's (a plain FFN, model_spec::gated_ffn false,
//   keeps 2i: its up projection's and its activation's outputs, 32h in all). Full
//   recomputation keeps each layer's input (2*s*b*h bytes per layer, Korthikanti
//   section 4) and rebuilds one layer at a time during the backward pass.
// - Backward transient: while a gated FFN is differentiated, the gradients of its three
//   intermediate tensors (3 x i values) and of the residual stream in and out (2 x h)
//   coexist: 2 x (3i + 2h) bytes per token for the layer being differentiated (2i for a
//   plain FFN).
// - Loss: the logits, s*b*vocab values. A plain causal-LM cross-entropy as Hugging Face
//   transformers computes it keeps the logits upcast to fp32 (4 bytes), a contiguous
//   shifted copy (4) and the log-softmax output (4), and its backward adds the incoming
//   gradient (4) and the logits' gradient (4): 20 bytes per value at the peak. A chunked
//   loss (torchtune's chunked/linear cross-entropy, Liger, Unsloth) keeps the bf16 logits
//   at most and upcasts one chunk at a time: 2 bytes per value.
// - Gradients are accumulated layer by layer as the backward pass frees activations (the
//   PyTorch default, gradients set to None between steps), so the peak is the larger of
//   "all activations, no gradients yet" and "all gradients, one layer's activations".
//
// Not modelled: the CUDA context and allocator fragmentation (torch reports "peak
// active/allocated" without them), communication buckets, KV cache of PPO generation,
// pipeline or tensor parallelism, MoE expert parallelism, sequence parallelism.
#pragma once

#include "ai_hwaccel/config.hpp"
#include "ai_hwaccel/core/text.hpp"
#include "ai_hwaccel/plan/model.hpp"
#include "ai_hwaccel/plan/models.hpp"

#include <cstdint>
#include <optional>
#include <string_view>

AI_HWACCEL_NAMESPACE_BEGIN

/// What is trained. The last three are objectives that hold more than one model; the
/// policy (or student) they train is trained as `training_setup::policy_method` says.
enum class training_method : std::uint8_t {
    full,         ///< every weight trained
    lora,         ///< 16-bit frozen base + low-rank adapters
    qlora,        ///< NF4 (4.127-bit) frozen base + low-rank adapters
    prefix,       ///< prefix tuning: trained key/value prefixes per layer, frozen base
    dpo,          ///< direct preference optimisation: policy + frozen reference, chosen + rejected
    rlhf,         ///< PPO-style RLHF: actor + critic trained, reference + reward frozen
    distillation, ///< student trained against a frozen teacher's logits
};

enum class training_optimizer : std::uint8_t {
    adamw,        ///< two states (m, v) per trainable parameter
    adamw_8bit,   ///< two block-quantized 8-bit states
    sgd_momentum, ///< one state
    sgd,          ///< no state
};

/// Number formats of a training step.
enum class training_precision : std::uint8_t {
    mixed_bf16, ///< 16-bit weights and gradients, fp32 master copy and states (ZeRO's 16 B/param)
    pure_bf16,  ///< everything 16-bit, no master copy, states in 16-bit (torchtune's default)
    fp32,       ///< everything fp32
};

/// ZeRO stage (DeepSpeed) or its FSDP equivalent over `training_setup::devices`.
enum class zero_stage : std::uint8_t {
    none = 0,        ///< plain data parallel: every device holds everything
    optimizer = 1,   ///< optimizer states (and fp32 master weights) sharded
    gradients = 2,   ///< + gradients sharded (FSDP SHARD_GRAD_OP)
    parameters = 3,  ///< + weights sharded (FSDP FULL_SHARD)
};

/// Matrices LoRA adapts, as a bit set (PEFT `target_modules`).
enum class lora_target : std::uint8_t {
    q = 1,
    k = 2,
    v = 4,
    o = 8,
    gate = 16,
    up = 32,
    down = 64,
};
constexpr lora_target operator|(lora_target a, lora_target b) noexcept {
    return static_cast<lora_target>(static_cast<unsigned>(a) | static_cast<unsigned>(b));
}
constexpr bool has_target(lora_target set, lora_target one) noexcept {
    return (static_cast<unsigned>(set) & static_cast<unsigned>(one)) != 0;
}
inline constexpr lora_target lora_attention_qv = lora_target::q | lora_target::v;
inline constexpr lora_target lora_attention_all = lora_target::q | lora_target::k | lora_target::v | lora_target::o;
inline constexpr lora_target lora_all_linear =
    lora_attention_all | lora_target::gate | lora_target::up | lora_target::down;

struct training_setup {
    training_method method = training_method::full;
    /// How dpo / rlhf / distillation train their policy (full, lora or qlora).
    training_method policy_method = training_method::full;
    std::uint32_t seq_len = 2048;    ///< tokens per sequence
    std::uint32_t micro_batch = 1;   ///< sequences per device per forward/backward pass
    std::uint32_t lora_rank = 16;
    lora_target lora_targets = lora_all_linear;
    std::uint32_t prefix_tokens = 20; ///< virtual tokens of prefix tuning
    std::uint32_t devices = 1;        ///< data-parallel devices ZeRO/FSDP shards over
    zero_stage zero = zero_stage::none;
    /// Optimizer states, fp32 master weights and gradients in host memory (ZeRO-Offload).
    bool offload_optimizer = false;
    bool offload_parameters = false; ///< stage 3 only: sharded weights in host memory
    bool gradient_checkpointing = false;
    bool offload_activations = false; ///< checkpointed layer inputs moved to host memory
    bool flash_attention = true;      ///< no s x s attention matrix kept
    bool chunked_loss = false;        ///< cross-entropy computed chunk by chunk (else 20 B per logit)
    /// Each parameter is updated as soon as its gradient is ready and the gradient freed
    /// (torchtune `optimizer_in_bwd`, LOMO): no full gradient set is ever held.
    bool optimizer_in_backward = false;
    training_optimizer opt = training_optimizer::adamw;
    training_precision precision = training_precision::mixed_bf16;
    /// Distillation: the teacher's parameter count (0: the same as the student).
    std::uint64_t teacher_parameters = 0;
    /// Distillation: the teacher's layer count (0: the student's), which sizes the layer
    /// of it ZeRO stage 3 gathers.
    std::uint32_t teacher_layers = 0;
};

/// Estimated memory of one training step on one device (bytes). The components add up
/// to `total_bytes()`, an upper bound; `peak_memory_bytes` is lower where gradients and
/// activations do not coexist (see the header comment).
struct training_memory {
    std::uint64_t trainable_parameters = 0;  ///< whole model, before sharding
    std::uint64_t weights_bytes = 0;         ///< trained model's weights on this device
    std::uint64_t frozen_models_bytes = 0;   ///< reference / reward / teacher weights
    std::uint64_t gradients_bytes = 0;
    std::uint64_t optimizer_bytes = 0;       ///< states + fp32 master weights on device
    std::uint64_t activations_bytes = 0;     ///< peak: kept activations + working layer + loss
    std::uint64_t buffers_bytes = 0;         ///< ZeRO-3 gathered layers, QLoRA dequantised matrix
    std::uint64_t peak_memory_bytes = 0;     ///< estimated peak per device
    std::uint64_t host_memory_bytes = 0;     ///< offloaded to host memory, per device
    constexpr std::uint64_t total_bytes() const noexcept {
        return detail::sat_add(
            detail::sat_add(detail::sat_add(weights_bytes, frozen_models_bytes),
                            detail::sat_add(gradients_bytes, optimizer_bytes)),
            detail::sat_add(activations_bytes, buffers_bytes));
    }
};

constexpr std::string_view to_string(training_method m) noexcept {
    switch (m) {
    case training_method::full: return "full";
    case training_method::lora: return "lora";
    case training_method::qlora: return "qlora";
    case training_method::prefix: return "prefix";
    case training_method::dpo: return "dpo";
    case training_method::rlhf: return "rlhf";
    case training_method::distillation: return "distillation";
    }
    return "unknown";
}
/// Parses a method name as the CLI takes it ("full", "LoRA", "qlora", "full-finetune", …).
constexpr std::optional<training_method> parse_training_method(std::string_view s) noexcept {
    s = detail::trim(s);
    constexpr training_method all[] = {training_method::full,   training_method::lora, training_method::qlora,
                                       training_method::prefix, training_method::dpo,  training_method::rlhf,
                                       training_method::distillation};
    for (auto m : all)
        if (detail::loose_equals(s, to_string(m))) return m;
    if (detail::loose_equals(s, "full-finetune") || detail::loose_equals(s, "fft")) return training_method::full;
    if (detail::loose_equals(s, "ppo")) return training_method::rlhf;
    if (detail::loose_equals(s, "prefix-tuning")) return training_method::prefix;
    if (detail::loose_equals(s, "kd")) return training_method::distillation;
    return std::nullopt;
}

namespace detail {
namespace training {

inline constexpr std::uint64_t gib = 1ull << 30;

constexpr std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) noexcept { return b ? a / b + (a % b != 0) : a; }
constexpr std::uint64_t max_u(std::uint64_t a, std::uint64_t b) noexcept { return a > b ? a : b; }

/// The shapes a layer's linear matrices have.
struct layer_shape {
    std::uint64_t h = 0, q_w = 0, kv_w = 0, i = 0, experts = 1, active_experts = 1;
    std::uint64_t ffn_matrices = 3; ///< model_spec::ffn_matrices
};
constexpr layer_shape shape_of(const model_spec& m) noexcept {
    layer_shape s;
    s.h = m.hidden_size;
    const std::uint64_t hd = m.head_dim ? m.head_dim : (m.attention_heads ? s.h / m.attention_heads : 0);
    s.q_w = sat_mul(m.attention_heads, hd);
    s.kv_w = sat_mul(m.kv_heads ? m.kv_heads : m.attention_heads, hd);
    s.i = m.intermediate_size;
    s.ffn_matrices = m.ffn_matrices();
    if (m.experts > 0) {
        s.experts = m.experts;
        s.active_experts = m.experts_per_token ? m.experts_per_token : m.experts;
    }
    return s;
}

/// Weights of the linear matrices of all blocks (what QLoRA quantizes).
constexpr std::uint64_t block_linear_parameters(const model_spec& m) noexcept {
    const auto s = shape_of(m);
    const std::uint64_t attention = sat_add(sat_mul(2, sat_mul(s.h, s.q_w)), sat_mul(2, sat_mul(s.h, s.kv_w)));
    const std::uint64_t ffn = sat_mul(s.experts, sat_mul(s.ffn_matrices, sat_mul(s.h, s.i)));
    const std::uint64_t linear = sat_mul(m.layers, sat_add(attention, ffn));
    // Catalogue totals can be smaller than the shapes imply (latent attention, shared
    // experts are not in the shapes): never count more than the whole model.
    return m.parameters && linear > m.parameters ? m.parameters : linear;
}

/// The largest matrix of a block, in values (QLoRA dequantises one at a time).
constexpr std::uint64_t largest_block_matrix(const model_spec& m) noexcept {
    const auto s = shape_of(m);
    return max_u(sat_mul(s.h, s.q_w), sat_mul(s.h, s.i));
}
/// The largest matrix of the model, embeddings included (optimizer in backward holds one
/// gradient at a time).
constexpr std::uint64_t largest_matrix(const model_spec& m) noexcept {
    return max_u(largest_block_matrix(m), sat_mul(m.vocab_size, m.hidden_size));
}

/// LoRA trainable values: r x (d_in + d_out) per adapted matrix per layer; an FFN
/// matrix of a MoE layer is adapted in every expert.
constexpr std::uint64_t lora_parameters(const model_spec& m, std::uint32_t rank, lora_target t) noexcept {
    const auto s = shape_of(m);
    std::uint64_t per_layer = 0;
    if (has_target(t, lora_target::q)) per_layer = sat_add(per_layer, s.h + s.q_w);
    if (has_target(t, lora_target::k)) per_layer = sat_add(per_layer, s.h + s.kv_w);
    if (has_target(t, lora_target::v)) per_layer = sat_add(per_layer, s.h + s.kv_w);
    if (has_target(t, lora_target::o)) per_layer = sat_add(per_layer, s.q_w + s.h);
    std::uint64_t ffn = 0;
    if (has_target(t, lora_target::gate) && m.gated_ffn) ffn = sat_add(ffn, s.h + s.i);
    if (has_target(t, lora_target::up)) ffn = sat_add(ffn, s.h + s.i);
    if (has_target(t, lora_target::down)) ffn = sat_add(ffn, s.i + s.h);
    per_layer = sat_add(per_layer, sat_mul(s.experts, ffn));
    return sat_mul(sat_mul(per_layer, rank), m.layers);
}

/// NF4 with double quantization: n/2 + n/64 + 4n/(64*256) bytes.
constexpr std::uint64_t nf4_bytes(std::uint64_t n) noexcept {
    return sat_add(sat_add(ceil_div(n, 2), ceil_div(n, 64)), ceil_div(n, 4096));
}

constexpr bool is_adapter(training_method m) noexcept {
    return m == training_method::lora || m == training_method::qlora || m == training_method::prefix;
}

/// The method that decides how the trained model is stored and what is trainable.
constexpr training_method trained_as(const training_setup& t) noexcept {
    switch (t.method) {
    case training_method::dpo:
    case training_method::rlhf:
    case training_method::distillation:
        return t.policy_method == training_method::dpo || t.policy_method == training_method::rlhf ||
                       t.policy_method == training_method::distillation
                   ? training_method::full
                   : t.policy_method;
    default: return t.method;
    }
}

/// Bytes of a 16-bit or fp32 value in this precision.
constexpr std::uint64_t value_bytes(training_precision p) noexcept { return p == training_precision::fp32 ? 4 : 2; }

/// Stored weights of the (whole, unsharded) model as the method keeps them.
constexpr std::uint64_t model_weight_bytes(const model_spec& m, training_method how, training_precision p) noexcept {
    if (how == training_method::qlora) {
        const std::uint64_t linear = block_linear_parameters(m);
        const std::uint64_t rest = m.parameters > linear ? m.parameters - linear : 0;
        return sat_add(nf4_bytes(linear), sat_mul(rest, 2));
    }
    // A frozen base is kept 16-bit even in fp32 training; a fully trained one at `p`.
    const std::uint64_t b = how == training_method::full ? value_bytes(p) : 2;
    return sat_mul(m.parameters, b);
}

constexpr std::uint64_t trainable_parameters(const model_spec& m, const training_setup& t) noexcept {
    const auto how = trained_as(t);
    switch (how) {
    case training_method::lora:
    case training_method::qlora: return lora_parameters(m, t.lora_rank, t.lora_targets);
    case training_method::prefix: {
        // A key and a value vector per virtual token per layer (PEFT prefix tuning
        // without the reparameterisation MLP).
        const auto s = shape_of(m);
        return sat_mul(sat_mul(sat_mul(t.prefix_tokens, m.layers), 2), s.kv_w);
    }
    default: return m.parameters;
    }
}

/// Optimizer bytes per trainable parameter, fp32 master copy included (mixed precision),
/// times 2048 so that 8-bit Adam's one fp32 scale per 256 values stays an integer.
constexpr std::uint64_t optimizer_bytes_x2048(training_optimizer o, training_precision p) noexcept {
    const std::uint64_t state = p == training_precision::pure_bf16 ? 2 : 4; // per state value
    const std::uint64_t master = p == training_precision::mixed_bf16 ? 4 : 0;
    std::uint64_t per = 0;
    switch (o) {
    case training_optimizer::adamw: per = 2 * state * 2048; break;
    case training_optimizer::adamw_8bit: per = 2 * (2048 + 4 * 8); break;
    case training_optimizer::sgd_momentum: per = state * 2048; break;
    case training_optimizer::sgd: per = 0; break;
    }
    return per + master * 2048;
}

/// 16-bit activation bytes a layer keeps per token without recomputation.
constexpr std::uint64_t layer_activation_bytes_per_token(const model_spec& m, const training_setup& t) noexcept {
    const auto s = shape_of(m);
    std::uint64_t values = sat_add(sat_mul(2, s.h), sat_add(sat_mul(2, s.q_w), sat_mul(2, s.kv_w))); // attention
    // A gated FFN keeps gate, up, silu(gate) and the down projection's input (4 i); a plain
    // one its up projection's output and the activation's (2 i).
    const std::uint64_t ffn_values = m.gated_ffn ? 4 : 2;
    if (m.experts > 0) // each routed token keeps a copy of its input and the expert's intermediates
        values = sat_add(values,
                         sat_add(sat_mul(2, s.h), sat_mul(s.active_experts, sat_add(s.h, sat_mul(ffn_values, s.i)))));
    else
        values = sat_add(values, sat_add(sat_mul(2, s.h), sat_mul(ffn_values, s.i)));
    std::uint64_t bytes = sat_mul(values, 2);
    if (t.flash_attention)
        bytes = sat_add(bytes, sat_mul(4, m.attention_heads)); // fp32 log-sum-exp per head
    else
        bytes = sat_add(bytes, sat_mul(sat_mul(2, m.attention_heads), t.seq_len)); // softmax row
    return bytes;
}

/// Gradients alive while one layer is differentiated, per token.
constexpr std::uint64_t backward_transient_bytes_per_token(const model_spec& m) noexcept {
    const auto s = shape_of(m);
    // The gradients of the FFN's intermediates: three for a gated FFN, two for a plain one.
    return sat_mul(2, sat_add(sat_mul(s.ffn_matrices, sat_mul(s.active_experts, s.i)), sat_mul(2, s.h)));
}

struct activation_parts {
    std::uint64_t kept = 0;    ///< kept for all layers until their backward
    std::uint64_t layer = 0;   ///< one layer's saved activations
    std::uint64_t working = 0; ///< the layer being differentiated (recomputed + transient)
    std::uint64_t loss = 0;    ///< logits and their gradient
};

constexpr activation_parts activations(const model_spec& m, const training_setup& t, std::uint32_t batch) noexcept {
    activation_parts a;
    const std::uint64_t tokens = sat_mul(t.seq_len, batch);
    a.layer = sat_mul(tokens, layer_activation_bytes_per_token(m, t));
    const std::uint64_t transient = sat_mul(tokens, backward_transient_bytes_per_token(m));
    if (t.gradient_checkpointing) {
        const std::uint64_t input = sat_mul(sat_mul(tokens, m.hidden_size), 2);
        // Offloaded checkpoints: the one being fetched back stays on the device.
        a.kept = t.offload_activations ? input : sat_mul(input, m.layers);
        a.working = sat_add(a.layer, transient);
    } else {
        a.kept = sat_mul(a.layer, m.layers);
        a.working = transient;
    }
    a.loss = sat_mul(sat_mul(tokens, m.vocab_size), t.chunked_loss ? 2 : 20);
    return a;
}

constexpr std::uint32_t shards(const training_setup& t) noexcept { return t.devices ? t.devices : 1; }

} // namespace training
} // namespace detail

/// Estimated per-device memory of one training step of `m` set up as `t`.
constexpr training_memory estimate_training_memory(const model_spec& m, const training_setup& t) noexcept {
    using namespace detail;
    using namespace detail::training;
    training_memory r;
    if (m.parameters == 0 || m.layers == 0 || m.hidden_size == 0) return r;

    const training_method how = trained_as(t);
    const std::uint64_t n = shards(t);
    const bool shard_states = t.zero >= zero_stage::optimizer && n > 1;
    const bool shard_grads = t.zero >= zero_stage::gradients && n > 1;
    const bool shard_weights = t.zero >= zero_stage::parameters && n > 1;

    // Trained models: PPO trains an actor and a critic of the same size.
    const std::uint64_t trained_models = t.method == training_method::rlhf ? 2 : 1;
    const std::uint64_t trainable = trainable_parameters(m, t);
    r.trainable_parameters = sat_mul(trainable, trained_models);

    // Weights: frozen base or trained model, plus the adapters (16-bit, or fp32 in fp32).
    std::uint64_t weights = model_weight_bytes(m, how, t.precision);
    if (is_adapter(how)) weights = sat_add(weights, sat_mul(trainable, value_bytes(t.precision)));
    weights = sat_mul(weights, trained_models);

    // Frozen companions, kept in the trained model's base storage (4-bit when it is QLoRA).
    // The reference model of a policy trained through adapters is its own frozen base with
    // the adapters switched off (TRL's DPO and PPO trainers with a PEFT model and no
    // ref_model): no second copy; PPO's reward model is one all the same.
    const training_method frozen_as = how == training_method::qlora ? training_method::qlora : training_method::lora;
    const std::uint64_t references = is_adapter(how) ? 0 : 1;
    std::uint64_t frozen = 0;
    if (t.method == training_method::dpo) frozen = sat_mul(references, model_weight_bytes(m, frozen_as, t.precision));
    if (t.method == training_method::rlhf)
        frozen = sat_mul(references + 1, model_weight_bytes(m, frozen_as, t.precision));
    if (t.method == training_method::distillation)
        frozen = sat_mul(t.teacher_parameters ? t.teacher_parameters : m.parameters, 2);

    // Gradients, in the trained values' type.
    std::uint64_t grads = 0;
    const std::uint64_t grad_type = value_bytes(t.precision);
    if (t.optimizer_in_backward) {
        // One matrix's gradient (full) or one layer's adapters' gradients at a time.
        const std::uint64_t one = how == training_method::full ? largest_matrix(m) : trainable / m.layers;
        grads = sat_mul(one, grad_type);
    } else {
        grads = sat_mul(r.trainable_parameters, grad_type);
    }

    // Optimizer states (and the fp32 master copy of mixed precision).
    const std::uint64_t opt_bytes =
        ceil_div(sat_mul(r.trainable_parameters, optimizer_bytes_x2048(t.opt, t.precision)), 2048);

    // Sharding.
    std::uint64_t weights_dev = shard_weights ? ceil_div(weights, n) : weights;
    const std::uint64_t frozen_dev = shard_weights ? ceil_div(frozen, n) : frozen;
    const std::uint64_t grads_dev = shard_grads && !t.optimizer_in_backward ? ceil_div(grads, n) : grads;
    std::uint64_t opt_dev = shard_states ? ceil_div(opt_bytes, n) : opt_bytes;

    // Offload to host: the optimizer runs there, on gradients moved there as they come.
    std::uint64_t grads_kept = grads_dev;
    if (t.offload_optimizer) {
        r.host_memory_bytes = sat_add(r.host_memory_bytes, opt_dev);
        opt_dev = 0;
        if (!t.optimizer_in_backward) {
            r.host_memory_bytes = sat_add(r.host_memory_bytes, grads_dev);
            grads_kept = sat_mul(ceil_div(r.trainable_parameters, m.layers), grad_type); // one layer in flight
            if (grads_kept > grads_dev) grads_kept = grads_dev;
        }
    }
    if (t.offload_parameters && shard_weights) {
        r.host_memory_bytes = sat_add(r.host_memory_bytes, weights_dev);
        weights_dev = 0;
    }

    // Buffers: stage 3 gathers a layer's full weights before using it and prefetches the
    // next (two layers live); QLoRA dequantises one matrix at a time to 16-bit.
    // A distillation teacher's layer is its weights over its own layer count; DPO's and
    // PPO's frozen models have the trained model's shape.
    std::uint64_t buffers = 0;
    if (shard_weights) {
        std::uint64_t layer_weights = ceil_div(model_weight_bytes(m, how, t.precision), m.layers);
        if (t.method == training_method::distillation)
            layer_weights = sat_add(layer_weights, ceil_div(frozen, t.teacher_layers ? t.teacher_layers : m.layers));
        else if (frozen) // one layer of one frozen model: DPO's reference; PPO's reward, and its reference
            layer_weights = sat_add(layer_weights, ceil_div(frozen / (t.method == training_method::rlhf ? references + 1
                                                                                                        : references),
                                                            m.layers));
        buffers = sat_mul(2, layer_weights);
    }
    if (how == training_method::qlora) buffers = sat_add(buffers, sat_mul(largest_block_matrix(m), 2));

    // Activations: DPO runs chosen and rejected sequences together; distillation also
    // holds the teacher's logits.
    const std::uint32_t batch = t.method != training_method::dpo ? t.micro_batch
                                : t.micro_batch > UINT32_MAX / 2 ? UINT32_MAX // saturated: still absurdly large
                                                                  : t.micro_batch * 2u;
    auto act = activations(m, t, batch);
    if (t.method == training_method::distillation)
        act.loss = sat_add(act.loss, sat_mul(sat_mul(sat_mul(t.seq_len, batch), m.vocab_size), 2));
    const std::uint64_t act_peak = sat_add(act.kept, max_u(act.loss, act.working));

    r.weights_bytes = weights_dev;
    r.frozen_models_bytes = frozen_dev;
    r.gradients_bytes = grads_kept;
    r.optimizer_bytes = opt_dev;
    r.activations_bytes = act_peak;
    r.buffers_bytes = buffers;

    // Peak: gradients grow as activations are freed during the backward pass.
    const std::uint64_t fixed = sat_add(sat_add(weights_dev, frozen_dev), sat_add(opt_dev, buffers));
    const std::uint64_t start_of_backward = act_peak;
    const std::uint64_t end_of_backward =
        sat_add(grads_kept, sat_add(t.gradient_checkpointing ? 0 : act.layer, act.working));
    r.peak_memory_bytes = sat_add(fixed, max_u(start_of_backward, end_of_backward));
    return r;
}

/// True when the estimated peak fits in `device_memory_bytes` per device.
constexpr bool training_fits(const model_spec& m, const training_setup& t, std::uint64_t device_memory_bytes) noexcept {
    const auto e = estimate_training_memory(m, t);
    return e.peak_memory_bytes > 0 && e.peak_memory_bytes <= device_memory_bytes;
}

/// The longest sequence (multiple of `step` tokens, at most `limit`) whose estimated
/// peak fits in `device_memory_bytes`; 0 when not even `step` tokens fit.
constexpr std::uint32_t max_training_seq_len(const model_spec& m, training_setup t, std::uint64_t device_memory_bytes,
                                             std::uint32_t step = 256, std::uint32_t limit = 1u << 22) noexcept {
    if (step == 0) step = 1;
    std::uint32_t lo = 0, hi = limit / step; // in steps
    while (lo < hi) {
        // In 64 bits: hi - lo + 1 is 2^32 when the range is all of uint32_t.
        const auto mid = static_cast<std::uint32_t>(lo + (static_cast<std::uint64_t>(hi) - lo + 1) / 2);
        t.seq_len = mid * step;
        if (training_fits(m, t, device_memory_bytes)) lo = mid;
        else hi = mid - 1;
    }
    return lo * step;
}

// Compile-time examples (hand-computed in tests/unit/plan_training.cpp).
static_assert(detail::training::nf4_bytes(4096) == 2048 + 64 + 1);
static_assert(detail::training::optimizer_bytes_x2048(training_optimizer::adamw, training_precision::mixed_bf16) ==
              12 * 2048);
static_assert(parse_training_method("QLoRA") == training_method::qlora);

AI_HWACCEL_NAMESPACE_END
