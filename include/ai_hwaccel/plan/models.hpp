// ai-hwaccel plan: a catalogue of the open models people deploy.
//
// One `model_spec` per row, each number read from the model's published `config.json` on
// Hugging Face (the row's `source`) or from its publisher's model card. Parameter counts
// are the publisher's exact total where one is published; otherwise the row leaves them 0
// and `detail::completed` fills them from the config with `estimate_parameters`, which
// counts embeddings + layers x (attention + FFN or experts + norms) + the output head
// unless it is tied. For the Llama 2/3 family and Mixtral that count is exact (their
// checkpoints hold exactly these matrices); a static_assert below keeps it so.
//
// `find_model` looks a row up the way people write model names: case, spaces and
// punctuation are ignored, a Hugging Face organisation ("meta-llama/") and a "Meta-"
// prefix are dropped, and so are fine-tuning words (-Instruct, -Chat, -it, -hf, -Base).
#pragma once

#include "ai_hwaccel/config.hpp"
#include "ai_hwaccel/core/text.hpp"
#include "ai_hwaccel/plan/model.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

AI_HWACCEL_NAMESPACE_BEGIN

namespace detail {
// Saturating arithmetic: the estimate also runs on numbers read from untrusted files.
constexpr std::uint64_t sat_mul(std::uint64_t a, std::uint64_t b) noexcept {
    if (a == 0 || b == 0) return 0;
    return a > ~std::uint64_t{0} / b ? ~std::uint64_t{0} : a * b;
}
constexpr std::uint64_t sat_add(std::uint64_t a, std::uint64_t b) noexcept {
    return a > ~std::uint64_t{0} - b ? ~std::uint64_t{0} : a + b;
}

struct parameter_split {
    std::uint64_t total = 0;
    std::uint64_t active = 0;
};

/// The weights of a standard decoder: gated FFN (three matrices: gate, up, down; two
/// without a gate, model_spec::gated_ffn), RMS norms before attention and FFN, a final norm, a router of hidden x experts per MoE
/// layer. Biases, q/k norms and attention sinks are left out (well under 0.1 % of any
/// catalogue model). Latent attention (MLA) and shared experts are not modelled.
constexpr parameter_split estimate_split(const model_spec& m) noexcept {
    const std::uint64_t h = m.hidden_size;
    const std::uint64_t hd = m.head_dim ? m.head_dim : (m.attention_heads ? h / m.attention_heads : 0);
    const std::uint64_t q_width = sat_mul(m.attention_heads, hd);
    const std::uint64_t kv_width = sat_mul(m.kv_heads ? m.kv_heads : m.attention_heads, hd);
    // q and o are hidden x q_width; k and v are hidden x kv_width.
    const std::uint64_t attention = sat_add(sat_mul(2, sat_mul(h, q_width)), sat_mul(2, sat_mul(h, kv_width)));
    const std::uint64_t one_ffn = sat_mul(m.ffn_matrices(), sat_mul(h, m.intermediate_size));
    const std::uint64_t norms = sat_mul(2, h);
    std::uint64_t ffn_total = one_ffn, ffn_active = one_ffn;
    if (m.experts > 0) {
        const std::uint64_t router = sat_mul(h, m.experts);
        ffn_total = sat_add(sat_mul(m.experts, one_ffn), router);
        ffn_active = sat_add(sat_mul(m.experts_per_token ? m.experts_per_token : m.experts, one_ffn), router);
    }
    const std::uint64_t embed = sat_mul(m.vocab_size, h);
    const std::uint64_t outside = sat_add(sat_add(embed, m.tied_embeddings ? 0 : embed), h);
    parameter_split s;
    s.total = sat_add(outside, sat_mul(m.layers, sat_add(sat_add(attention, ffn_total), norms)));
    s.active = sat_add(outside, sat_mul(m.layers, sat_add(sat_add(attention, ffn_active), norms)));
    return s;
}
} // namespace detail

/// Weights implied by the architecture fields (see detail::estimate_split for what is
/// counted). 0 when the shape is unknown; saturates instead of overflowing.
constexpr std::uint64_t estimate_parameters(const model_spec& m) noexcept {
    if (m.layers == 0 || m.hidden_size == 0) return 0;
    return detail::estimate_split(m).total;
}
/// Weights read per token: for MoE models, only experts_per_token experts per layer.
constexpr std::uint64_t estimate_active_parameters(const model_spec& m) noexcept {
    if (m.layers == 0 || m.hidden_size == 0) return 0;
    return detail::estimate_split(m).active;
}

namespace detail {
/// Fills parameter counts a row leaves 0 from its configuration.
constexpr model_spec completed(model_spec m) noexcept {
    if (m.parameters == 0) m.parameters = estimate_parameters(m);
    if (m.active_parameters == 0) m.active_parameters = m.is_moe() ? estimate_active_parameters(m) : m.parameters;
    return m;
}
} // namespace detail

// Rows are grouped by publisher. Numbers are config.json fields: num_hidden_layers,
// hidden_size, intermediate_size (moe_intermediate_size for Qwen3 MoE and DeepSeek),
// num_attention_heads, num_key_value_heads, head_dim, vocab_size,
// max_position_embeddings, num_local_experts / num_experts / n_routed_experts,
// num_experts_per_tok, sliding_window, tie_word_embeddings.
inline constexpr model_spec model_catalogue[] = {
    // ---- Meta LLaMA (the first release, 2023): full multi-head attention, 2048-token
    // context. Meta's paper calls the 60-layer model 33B; the Hub's checkpoints say 30B.
    detail::completed({.id = "llama-7b", .name = "LLaMA 7B", .family = "llama", .layers = 32,
                       .hidden_size = 4096, .intermediate_size = 11008, .attention_heads = 32, .kv_heads = 32,
                       .head_dim = 128, .vocab_size = 32000, .context_length = 2048,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/huggyllama/llama-7b/blob/main/config.json")}),
    detail::completed({.id = "llama-13b", .name = "LLaMA 13B", .family = "llama", .layers = 40,
                       .hidden_size = 5120, .intermediate_size = 13824, .attention_heads = 40, .kv_heads = 40,
                       .head_dim = 128, .vocab_size = 32000, .context_length = 2048,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/huggyllama/llama-13b/blob/main/config.json")}),
    detail::completed({.id = "llama-30b", .name = "LLaMA 30B", .family = "llama", .layers = 60,
                       .hidden_size = 6656, .intermediate_size = 17920, .attention_heads = 52, .kv_heads = 52,
                       .head_dim = 128, .vocab_size = 32000, .context_length = 2048,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/huggyllama/llama-30b/blob/main/config.json")}),
    detail::completed({.id = "llama-65b", .name = "LLaMA 65B", .family = "llama", .layers = 80,
                       .hidden_size = 8192, .intermediate_size = 22016, .attention_heads = 64, .kv_heads = 64,
                       .head_dim = 128, .vocab_size = 32000, .context_length = 2048,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/huggyllama/llama-65b/blob/main/config.json")}),
    // ---- Meta Llama 2: full multi-head attention at 7B/13B, GQA at 70B. Parameter totals
    // are what the config implies (and what the safetensors checkpoints hold).
    detail::completed({.id = "llama-2-7b", .name = "Llama 2 7B", .family = "llama", .layers = 32,
                       .hidden_size = 4096, .intermediate_size = 11008, .attention_heads = 32, .kv_heads = 32,
                       .head_dim = 128, .vocab_size = 32000, .context_length = 4096,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/meta-llama/Llama-2-7b-hf/blob/main/config.json")}),
    detail::completed({.id = "llama-2-13b", .name = "Llama 2 13B", .family = "llama", .layers = 40,
                       .hidden_size = 5120, .intermediate_size = 13824, .attention_heads = 40, .kv_heads = 40,
                       .head_dim = 128, .vocab_size = 32000, .context_length = 4096,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/meta-llama/Llama-2-13b-hf/blob/main/config.json")}),
    detail::completed({.id = "llama-2-70b", .name = "Llama 2 70B", .family = "llama", .layers = 80,
                       .hidden_size = 8192, .intermediate_size = 28672, .attention_heads = 64, .kv_heads = 8,
                       .head_dim = 128, .vocab_size = 32000, .context_length = 4096,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/meta-llama/Llama-2-70b-hf/blob/main/config.json")}),
    // ---- Meta Llama 3 / 3.1 / 3.2 / 3.3: 128256-token vocabulary; 3.1 onwards 128k context.
    detail::completed({.id = "llama-3-8b", .name = "Llama 3 8B", .family = "llama", .layers = 32,
                       .hidden_size = 4096, .intermediate_size = 14336, .attention_heads = 32, .kv_heads = 8,
                       .head_dim = 128, .vocab_size = 128256, .context_length = 8192,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/meta-llama/Meta-Llama-3-8B/blob/main/config.json")}),
    detail::completed({.id = "llama-3-70b", .name = "Llama 3 70B", .family = "llama", .layers = 80,
                       .hidden_size = 8192, .intermediate_size = 28672, .attention_heads = 64, .kv_heads = 8,
                       .head_dim = 128, .vocab_size = 128256, .context_length = 8192,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/meta-llama/Meta-Llama-3-70B/blob/main/config.json")}),
    detail::completed({.id = "llama-3.1-8b", .name = "Llama 3.1 8B", .family = "llama", .layers = 32,
                       .hidden_size = 4096, .intermediate_size = 14336, .attention_heads = 32, .kv_heads = 8,
                       .head_dim = 128, .vocab_size = 128256, .context_length = 131072,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/meta-llama/Llama-3.1-8B/blob/main/config.json")}),
    detail::completed({.id = "llama-3.1-70b", .name = "Llama 3.1 70B", .family = "llama", .layers = 80,
                       .hidden_size = 8192, .intermediate_size = 28672, .attention_heads = 64, .kv_heads = 8,
                       .head_dim = 128, .vocab_size = 128256, .context_length = 131072,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/meta-llama/Llama-3.1-70B/blob/main/config.json")}),
    detail::completed({.id = "llama-3.1-405b", .name = "Llama 3.1 405B", .family = "llama", .layers = 126,
                       .hidden_size = 16384, .intermediate_size = 53248, .attention_heads = 128, .kv_heads = 8,
                       .head_dim = 128, .vocab_size = 128256, .context_length = 131072,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/meta-llama/Llama-3.1-405B/blob/main/config.json")}),
    detail::completed({.id = "llama-3.2-1b", .name = "Llama 3.2 1B", .family = "llama", .layers = 16,
                       .hidden_size = 2048, .intermediate_size = 8192, .attention_heads = 32, .kv_heads = 8,
                       .head_dim = 64, .vocab_size = 128256, .context_length = 131072,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/meta-llama/Llama-3.2-1B/blob/main/config.json"),
                       .tied_embeddings = true}),
    detail::completed({.id = "llama-3.2-3b", .name = "Llama 3.2 3B", .family = "llama", .layers = 28,
                       .hidden_size = 3072, .intermediate_size = 8192, .attention_heads = 24, .kv_heads = 8,
                       .head_dim = 128, .vocab_size = 128256, .context_length = 131072,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/meta-llama/Llama-3.2-3B/blob/main/config.json"),
                       .tied_embeddings = true}),
    detail::completed({.id = "llama-3.3-70b", .name = "Llama 3.3 70B", .family = "llama", .layers = 80,
                       .hidden_size = 8192, .intermediate_size = 28672, .attention_heads = 64, .kv_heads = 8,
                       .head_dim = 128, .vocab_size = 128256, .context_length = 131072,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/meta-llama/Llama-3.3-70B-Instruct/blob/main/config.json")}),
    // ---- TinyLlama: the Llama 2 architecture at 1.1B, grouped-query attention.
    detail::completed({.id = "tinyllama-1.1b", .name = "TinyLlama 1.1B", .family = "llama", .layers = 22,
                       .hidden_size = 2048, .intermediate_size = 5632, .attention_heads = 32, .kv_heads = 4,
                       .head_dim = 64, .vocab_size = 32000, .context_length = 2048,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/TinyLlama/TinyLlama-1.1B-Chat-v1.0/blob/main/config.json")}),
    // ---- Meta Llama 4, the language model: mixture of experts with one routed expert per
    // token and a shared expert beside it (intermediate_size 8192 each, a router of hidden
    // x experts); Maverick's every other layer is dense instead (intermediate_size_mlp
    // 16384). A model_spec cannot say so, so the totals are counted from config.json by
    // hand (Scout 107.77B / 17.17B active, Maverick 400.71B / 17.18B; Meta's 109B / 400B /
    // 17B include the vision encoder or are rounded) and they split the blocks. Three
    // layers in four attend within chunks of 8192 tokens (attention_chunk_size; the fourth,
    // without RoPE, attends to everything), counted as a window of 8192.
    detail::completed({.id = "llama-4-scout", .name = "Llama 4 Scout", .family = "llama4",
                       .parameters = 107'769'861'120, .active_parameters = 17'172'894'720, .layers = 48,
                       .hidden_size = 5120, .intermediate_size = 8192, .attention_heads = 40, .kv_heads = 8,
                       .head_dim = 128, .vocab_size = 202048, .context_length = 10485760, .experts = 16,
                       .experts_per_token = 1, .sliding_window_layers = 36, .sliding_window = 8192,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/meta-llama/Llama-4-Scout-17B-16E/blob/main/config.json")}),
    detail::completed({.id = "llama-4-maverick", .name = "Llama 4 Maverick", .family = "llama4",
                       .parameters = 400'711'848'960, .active_parameters = 17'184'691'200, .layers = 48,
                       .hidden_size = 5120, .intermediate_size = 8192, .attention_heads = 40, .kv_heads = 8,
                       .head_dim = 128, .vocab_size = 202048, .context_length = 1048576, .experts = 128,
                       .experts_per_token = 1, .sliding_window_layers = 36, .sliding_window = 8192,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/meta-llama/Llama-4-Maverick-17B-128E/blob/main/config.json")}),
    // ---- Mistral AI. v0.1's config declares a 4096-token window on every layer, but
    // llama.cpp, whose cache the memory model follows (memory.hpp), loads it as a llama and
    // caches every token (its llama graph builds no sliding-window cache): no window here,
    // as a GGUF of it reads (model_file.hpp). v0.3 has no sliding window (config
    // "sliding_window": null) and a 32768-token vocabulary. v0.2 is v0.3's shape but for the
    // vocabulary (32000): it reads as v0.3.
    detail::completed({.id = "mistral-7b-v0.1", .name = "Mistral 7B v0.1", .family = "llama", .layers = 32,
                       .hidden_size = 4096, .intermediate_size = 14336, .attention_heads = 32, .kv_heads = 8,
                       .head_dim = 128, .vocab_size = 32000, .context_length = 32768,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/mistralai/Mistral-7B-v0.1/blob/main/config.json")}),
    detail::completed({.id = "mistral-7b-v0.3", .name = "Mistral 7B v0.3", .family = "llama", .layers = 32,
                       .hidden_size = 4096, .intermediate_size = 14336, .attention_heads = 32, .kv_heads = 8,
                       .head_dim = 128, .vocab_size = 32768, .context_length = 32768,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/mistralai/Mistral-7B-v0.3/blob/main/config.json")}),
    // Mistral NeMo 12B and Mistral Small 3 24B: 32 heads of 128 (4096 wide) on a 5120-wide
    // model, the 131072-token Tekken vocabulary. NeMo's config allows 1024000 positions;
    // Mistral's card states a 128k context.
    detail::completed({.id = "mistral-nemo-12b", .name = "Mistral NeMo 12B", .family = "llama", .layers = 40,
                       .hidden_size = 5120, .intermediate_size = 14336, .attention_heads = 32, .kv_heads = 8,
                       .head_dim = 128, .vocab_size = 131072, .context_length = 131072,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/mistralai/Mistral-Nemo-Instruct-2407/blob/main/config.json")}),
    detail::completed({.id = "mistral-small-24b-2501", .name = "Mistral Small 3 24B", .family = "llama",
                       .layers = 40, .hidden_size = 5120, .intermediate_size = 32768, .attention_heads = 32,
                       .kv_heads = 8, .head_dim = 128, .vocab_size = 131072, .context_length = 32768,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/mistralai/Mistral-Small-24B-Instruct-2501/blob/main/config.json")}),
    // Mistral Large 2 (2407; 2411 has the same shape): 123B, dense.
    detail::completed({.id = "mistral-large-2407", .name = "Mistral Large 2", .family = "llama", .layers = 88,
                       .hidden_size = 12288, .intermediate_size = 28672, .attention_heads = 96, .kv_heads = 8,
                       .head_dim = 128, .vocab_size = 32768, .context_length = 131072,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/mistralai/Mistral-Large-Instruct-2407/blob/main/config.json")}),
    // Mixtral: 8 experts, 2 per token. 8x7B totals are what the config implies (Mistral
    // publishes 46.7B / 12.9B); 8x22B totals are Mistral's own rounded figures.
    detail::completed({.id = "mixtral-8x7b", .name = "Mixtral 8x7B", .family = "mixtral", .layers = 32,
                       .hidden_size = 4096, .intermediate_size = 14336, .attention_heads = 32, .kv_heads = 8,
                       .head_dim = 128, .vocab_size = 32000, .context_length = 32768, .experts = 8,
                       .experts_per_token = 2,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/mistralai/Mixtral-8x7B-v0.1/blob/main/config.json")}),
    detail::completed({.id = "mixtral-8x22b", .name = "Mixtral 8x22B", .family = "mixtral",
                       .parameters = 141'000'000'000, .active_parameters = 39'000'000'000, .layers = 56,
                       .hidden_size = 6144, .intermediate_size = 16384, .attention_heads = 48, .kv_heads = 8,
                       .head_dim = 128, .vocab_size = 32000, .context_length = 65536, .experts = 8,
                       .experts_per_token = 2,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/mistralai/Mixtral-8x22B-v0.1/blob/main/config.json")}),
    // ---- Qwen 2.5 (q/k/v projections carry biases, not counted by the estimate). Totals
    // are the model cards' "Number of Parameters".
    detail::completed({.id = "qwen-2.5-0.5b", .name = "Qwen2.5 0.5B", .family = "qwen2",
                       .parameters = 490'000'000, .layers = 24, .hidden_size = 896, .intermediate_size = 4864,
                       .attention_heads = 14, .kv_heads = 2, .head_dim = 64, .vocab_size = 151936,
                       .context_length = 32768,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/Qwen/Qwen2.5-0.5B/blob/main/config.json"),
                       .tied_embeddings = true}),
    detail::completed({.id = "qwen-2.5-3b", .name = "Qwen2.5 3B", .family = "qwen2",
                       .parameters = 3'090'000'000, .layers = 36, .hidden_size = 2048, .intermediate_size = 11008,
                       .attention_heads = 16, .kv_heads = 2, .head_dim = 128, .vocab_size = 151936,
                       .context_length = 32768,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/Qwen/Qwen2.5-3B/blob/main/config.json"),
                       .tied_embeddings = true}),
    detail::completed({.id = "qwen-2.5-7b", .name = "Qwen2.5 7B", .family = "qwen2", .parameters = 7'610'000'000,
                       .layers = 28, .hidden_size = 3584, .intermediate_size = 18944, .attention_heads = 28,
                       .kv_heads = 4, .head_dim = 128, .vocab_size = 152064, .context_length = 131072,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/Qwen/Qwen2.5-7B/blob/main/config.json")}),
    detail::completed({.id = "qwen-2.5-14b", .name = "Qwen2.5 14B", .family = "qwen2",
                       .parameters = 14'700'000'000, .layers = 48, .hidden_size = 5120, .intermediate_size = 13824,
                       .attention_heads = 40, .kv_heads = 8, .head_dim = 128, .vocab_size = 152064,
                       .context_length = 131072,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/Qwen/Qwen2.5-14B/blob/main/config.json")}),
    detail::completed({.id = "qwen-2.5-32b", .name = "Qwen2.5 32B", .family = "qwen2",
                       .parameters = 32'500'000'000, .layers = 64, .hidden_size = 5120, .intermediate_size = 27648,
                       .attention_heads = 40, .kv_heads = 8, .head_dim = 128, .vocab_size = 152064,
                       .context_length = 131072,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/Qwen/Qwen2.5-32B/blob/main/config.json")}),
    detail::completed({.id = "qwen-2.5-72b", .name = "Qwen2.5 72B", .family = "qwen2",
                       .parameters = 72'700'000'000, .layers = 80, .hidden_size = 8192, .intermediate_size = 29568,
                       .attention_heads = 64, .kv_heads = 8, .head_dim = 128, .vocab_size = 152064,
                       .context_length = 131072,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/Qwen/Qwen2.5-72B/blob/main/config.json")}),
    // ---- Qwen3: head_dim 128 whatever the width; 40960-token configs (YaRN extends them).
    detail::completed({.id = "qwen3-4b", .name = "Qwen3 4B", .family = "qwen3", .parameters = 4'000'000'000,
                       .layers = 36, .hidden_size = 2560, .intermediate_size = 9728, .attention_heads = 32,
                       .kv_heads = 8, .head_dim = 128, .vocab_size = 151936, .context_length = 40960,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/Qwen/Qwen3-4B/blob/main/config.json"),
                       .tied_embeddings = true}),
    detail::completed({.id = "qwen3-8b", .name = "Qwen3 8B", .family = "qwen3", .parameters = 8'200'000'000,
                       .layers = 36, .hidden_size = 4096, .intermediate_size = 12288, .attention_heads = 32,
                       .kv_heads = 8, .head_dim = 128, .vocab_size = 151936, .context_length = 40960,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/Qwen/Qwen3-8B/blob/main/config.json")}),
    detail::completed({.id = "qwen3-14b", .name = "Qwen3 14B", .family = "qwen3", .parameters = 14'800'000'000,
                       .layers = 40, .hidden_size = 5120, .intermediate_size = 17408, .attention_heads = 40,
                       .kv_heads = 8, .head_dim = 128, .vocab_size = 151936, .context_length = 40960,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/Qwen/Qwen3-14B/blob/main/config.json")}),
    detail::completed({.id = "qwen3-32b", .name = "Qwen3 32B", .family = "qwen3", .parameters = 32'800'000'000,
                       .layers = 64, .hidden_size = 5120, .intermediate_size = 25600, .attention_heads = 64,
                       .kv_heads = 8, .head_dim = 128, .vocab_size = 151936, .context_length = 40960,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/Qwen/Qwen3-32B/blob/main/config.json")}),
    detail::completed({.id = "qwen3-30b-a3b", .name = "Qwen3 30B-A3B", .family = "qwen3moe",
                       .parameters = 30'500'000'000, .active_parameters = 3'300'000'000, .layers = 48,
                       .hidden_size = 2048, .intermediate_size = 768, .attention_heads = 32, .kv_heads = 4,
                       .head_dim = 128, .vocab_size = 151936, .context_length = 40960, .experts = 128,
                       .experts_per_token = 8,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/Qwen/Qwen3-30B-A3B/blob/main/config.json")}),
    detail::completed({.id = "qwen3-235b-a22b", .name = "Qwen3 235B-A22B", .family = "qwen3moe",
                       .parameters = 235'000'000'000, .active_parameters = 22'000'000'000, .layers = 94,
                       .hidden_size = 4096, .intermediate_size = 1536, .attention_heads = 64, .kv_heads = 4,
                       .head_dim = 128, .vocab_size = 151936, .context_length = 40960, .experts = 128,
                       .experts_per_token = 8,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/Qwen/Qwen3-235B-A22B/blob/main/config.json")}),
    // ---- Google Gemma 2: every other layer attends to a 4096-token window; tied embeddings.
    detail::completed({.id = "gemma-2-2b", .name = "Gemma 2 2B", .family = "gemma2", .layers = 26,
                       .hidden_size = 2304, .intermediate_size = 9216, .attention_heads = 8, .kv_heads = 4,
                       .head_dim = 256, .vocab_size = 256000, .context_length = 8192,
                       .sliding_window_layers = 13, .sliding_window = 4096,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/google/gemma-2-2b/blob/main/config.json"),
                       .tied_embeddings = true}),
    detail::completed({.id = "gemma-2-9b", .name = "Gemma 2 9B", .family = "gemma2", .layers = 42,
                       .hidden_size = 3584, .intermediate_size = 14336, .attention_heads = 16, .kv_heads = 8,
                       .head_dim = 256, .vocab_size = 256000, .context_length = 8192,
                       .sliding_window_layers = 21, .sliding_window = 4096,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/google/gemma-2-9b/blob/main/config.json"),
                       .tied_embeddings = true}),
    detail::completed({.id = "gemma-2-27b", .name = "Gemma 2 27B", .family = "gemma2", .layers = 46,
                       .hidden_size = 4608, .intermediate_size = 36864, .attention_heads = 32, .kv_heads = 16,
                       .head_dim = 128, .vocab_size = 256000, .context_length = 8192,
                       .sliding_window_layers = 23, .sliding_window = 4096,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/google/gemma-2-27b/blob/main/config.json"),
                       .tied_embeddings = true}),
    // ---- Google Gemma 3 (text_config of the multimodal checkpoints): sliding_window_pattern
    // 6, i.e. every sixth layer global, the rest a 1024-token window. Parameter counts are
    // the text decoder's (the SigLIP vision tower is not counted).
    detail::completed({.id = "gemma-3-4b", .name = "Gemma 3 4B", .family = "gemma3", .layers = 34,
                       .hidden_size = 2560, .intermediate_size = 10240, .attention_heads = 8, .kv_heads = 4,
                       .head_dim = 256, .vocab_size = 262208, .context_length = 131072,
                       .sliding_window_layers = 29, .sliding_window = 1024,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/google/gemma-3-4b-pt/blob/main/config.json"),
                       .tied_embeddings = true}),
    detail::completed({.id = "gemma-3-12b", .name = "Gemma 3 12B", .family = "gemma3", .layers = 48,
                       .hidden_size = 3840, .intermediate_size = 15360, .attention_heads = 16, .kv_heads = 8,
                       .head_dim = 256, .vocab_size = 262208, .context_length = 131072,
                       .sliding_window_layers = 40, .sliding_window = 1024,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/google/gemma-3-12b-pt/blob/main/config.json"),
                       .tied_embeddings = true}),
    detail::completed({.id = "gemma-3-27b", .name = "Gemma 3 27B", .family = "gemma3", .layers = 62,
                       .hidden_size = 5376, .intermediate_size = 21504, .attention_heads = 32, .kv_heads = 16,
                       .head_dim = 128, .vocab_size = 262208, .context_length = 131072,
                       .sliding_window_layers = 52, .sliding_window = 1024,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/google/gemma-3-27b-pt/blob/main/config.json"),
                       .tied_embeddings = true}),
    // ---- Microsoft Phi. The 4k Phi-3 configs declare sliding_window 2047 on every layer;
    // llama.cpp disables it ("Phi SWA is currently disabled", ggml-org/llama.cpp#13676: its
    // phi3 loader sets n_swa 0) and caches every token, as here.
    detail::completed({.id = "phi-3-mini", .name = "Phi-3 mini", .family = "phi3", .layers = 32,
                       .hidden_size = 3072, .intermediate_size = 8192, .attention_heads = 32, .kv_heads = 32,
                       .head_dim = 96, .vocab_size = 32064, .context_length = 4096,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/microsoft/Phi-3-mini-4k-instruct/blob/main/config.json")}),
    detail::completed({.id = "phi-3-medium", .name = "Phi-3 medium", .family = "phi3", .layers = 40,
                       .hidden_size = 5120, .intermediate_size = 17920, .attention_heads = 40, .kv_heads = 10,
                       .head_dim = 128, .vocab_size = 32064, .context_length = 4096,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/microsoft/Phi-3-medium-4k-instruct/blob/main/config.json")}),
    detail::completed({.id = "phi-4", .name = "Phi-4", .family = "phi3", .layers = 40, .hidden_size = 5120,
                       .intermediate_size = 17920, .attention_heads = 40, .kv_heads = 10, .head_dim = 128,
                       .vocab_size = 100352, .context_length = 16384,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/microsoft/phi-4/blob/main/config.json")}),
    // ---- DeepSeek V3 / R1 (same architecture). Multi-head latent attention caches, per
    // token and layer, one compressed KV vector of kv_lora_rank (512) values shared by all
    // heads plus one decoupled RoPE key of qk_rope_head_dim (64): 576 values, where plain
    // attention over 128 heads would cache 2 x 128 x 192. head_dim is the query/key width
    // qk_nope_head_dim + qk_rope_head_dim = 192. intermediate_size is the routed expert's
    // (moe_intermediate_size); the first 3 layers are dense and one shared expert runs
    // beside the 8 routed ones, which the estimate does not model: totals are DeepSeek's
    // (671B, 37B activated; the 685B on the Hub adds the multi-token-prediction module).
    detail::completed({.id = "deepseek-v3", .name = "DeepSeek V3", .family = "deepseek2",
                       .parameters = 671'000'000'000, .active_parameters = 37'000'000'000, .layers = 61,
                       .hidden_size = 7168, .intermediate_size = 2048, .attention_heads = 128, .kv_heads = 128,
                       .head_dim = 192, .vocab_size = 129280, .context_length = 163840, .experts = 256,
                       .experts_per_token = 8, .kv_values_per_token_per_layer = 512 + 64, .latent_kv_cache = true,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/config.json")}),
    detail::completed({.id = "deepseek-r1", .name = "DeepSeek R1", .family = "deepseek2",
                       .parameters = 671'000'000'000, .active_parameters = 37'000'000'000, .layers = 61,
                       .hidden_size = 7168, .intermediate_size = 2048, .attention_heads = 128, .kv_heads = 128,
                       .head_dim = 192, .vocab_size = 129280, .context_length = 163840, .experts = 256,
                       .experts_per_token = 8, .kv_values_per_token_per_layer = 512 + 64, .latent_kv_cache = true,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/deepseek-ai/DeepSeek-R1/blob/main/config.json")}),
    // ---- OpenAI gpt-oss: layers alternate sliding (128 tokens) and full attention; head_dim
    // 64 x 64 query heads is wider than hidden_size. Totals from OpenAI's model card, whose
    // active counts (3.61B, 5.13B) leave out the input embedding (attention, the routed
    // experts and the unembedding add up to them) where the other publishers' counts hold
    // it, as active_parameters does: the embedding (201,088 x 2,880) is added.
    detail::completed({.id = "gpt-oss-20b", .name = "gpt-oss-20b", .family = "gpt-oss",
                       .parameters = 20'900'000'000, .active_parameters = 3'600'000'000 + 201'088ull * 2'880,
                       .layers = 24,
                       .hidden_size = 2880, .intermediate_size = 2880, .attention_heads = 64, .kv_heads = 8,
                       .head_dim = 64, .vocab_size = 201088, .context_length = 131072, .experts = 32,
                       .experts_per_token = 4, .sliding_window_layers = 12, .sliding_window = 128,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/openai/gpt-oss-20b/blob/main/config.json")}),
    detail::completed({.id = "gpt-oss-120b", .name = "gpt-oss-120b", .family = "gpt-oss",
                       .parameters = 116'800'000'000, .active_parameters = 5'100'000'000 + 201'088ull * 2'880,
                       .layers = 36,
                       .hidden_size = 2880, .intermediate_size = 2880, .attention_heads = 64, .kv_heads = 8,
                       .head_dim = 64, .vocab_size = 201088, .context_length = 131072, .experts = 128,
                       .experts_per_token = 4, .sliding_window_layers = 18, .sliding_window = 128,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/openai/gpt-oss-120b/blob/main/config.json")}),
    // ---- TII Falcon: attention and a plain (not gated) GELU FFN of 4 x hidden side by side
    // in each block, the 7B with one KV head, 40B and 180B with eight; tied embeddings (the
    // Hub's checkpoint files also hold a copy of the output head). Totals are what the
    // config implies, layer-norm biases aside (0.004 %).
    detail::completed({.id = "falcon-7b", .name = "Falcon 7B", .family = "falcon", .layers = 32,
                       .hidden_size = 4544, .intermediate_size = 18176, .attention_heads = 71, .kv_heads = 1,
                       .head_dim = 64, .vocab_size = 65024, .context_length = 2048,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/tiiuae/falcon-7b/blob/main/config.json"),
                       .tied_embeddings = true, .gated_ffn = false}),
    detail::completed({.id = "falcon-40b", .name = "Falcon 40B", .family = "falcon", .layers = 60,
                       .hidden_size = 8192, .intermediate_size = 32768, .attention_heads = 128, .kv_heads = 8,
                       .head_dim = 64, .vocab_size = 65024, .context_length = 2048,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/tiiuae/falcon-40b/blob/main/config.json"),
                       .tied_embeddings = true, .gated_ffn = false}),
    detail::completed({.id = "falcon-180b", .name = "Falcon 180B", .family = "falcon", .layers = 80,
                       .hidden_size = 14848, .intermediate_size = 59392, .attention_heads = 232, .kv_heads = 8,
                       .head_dim = 64, .vocab_size = 65024, .context_length = 2048,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/tiiuae/falcon-180B/blob/main/config.json"),
                       .tied_embeddings = true, .gated_ffn = false}),
    // ---- Cohere Command R (the first release, full multi-head attention) and Command R+:
    // tied embeddings, a 256000-token vocabulary. Cohere's cards state a 128k context;
    // config.json's max_position_embeddings says 8192.
    detail::completed({.id = "command-r", .name = "Command R", .family = "command-r", .layers = 40,
                       .hidden_size = 8192, .intermediate_size = 22528, .attention_heads = 64, .kv_heads = 64,
                       .head_dim = 128, .vocab_size = 256000, .context_length = 131072,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/CohereForAI/c4ai-command-r-v01/blob/main/config.json"),
                       .tied_embeddings = true}),
    detail::completed({.id = "command-r-plus", .name = "Command R+", .family = "command-r", .layers = 64,
                       .hidden_size = 12288, .intermediate_size = 33792, .attention_heads = 96, .kv_heads = 8,
                       .head_dim = 128, .vocab_size = 256000, .context_length = 131072,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/CohereForAI/c4ai-command-r-plus/blob/main/config.json"),
                       .tied_embeddings = true}),
    // ---- Databricks DBRX: 16 experts, 4 per token (d_model, n_layers, n_heads,
    // attn_config.kv_n_heads, ffn_config.ffn_hidden_size / moe_num_experts / moe_top_k,
    // max_seq_len). The totals the shape implies are 131.6B / 36.5B; Databricks states
    // 132B / 36B.
    detail::completed({.id = "dbrx", .name = "DBRX", .family = "dbrx", .layers = 40, .hidden_size = 6144,
                       .intermediate_size = 10752, .attention_heads = 48, .kv_heads = 8, .head_dim = 128,
                       .vocab_size = 100352, .context_length = 32768, .experts = 16, .experts_per_token = 4,
                       .source = AI_HWACCEL_SOURCE("https://huggingface.co/databricks/dbrx-instruct/blob/main/config.json")}),
};

inline constexpr std::size_t model_catalogue_size = std::size(model_catalogue);

namespace detail {
/// Words that name a fine-tune or a packaging of a model rather than the model.
inline constexpr std::string_view model_noise_words[] = {"instruct", "chat", "it", "hf", "base", "pt"};
constexpr bool model_noise_word(std::string_view w) noexcept {
    for (std::string_view n : model_noise_words)
        if (iequals(w, n)) return true;
    return false;
}
constexpr bool model_version_word(std::string_view w) noexcept {
    return w.size() >= 2 && (w[0] == 'v' || w[0] == 'V') && w[1] >= '0' && w[1] <= '9';
}

/// A name reduced to its lowercase letters and digits ('+' read as "plus"), with noise
/// words (and, when asked, version words such as "v0.1") dropped. Names past 96
/// significant characters are not model names; `ok` is false for them.
struct model_key {
    std::array<char, 96> text{};
    std::size_t size = 0;
    bool ok = true;
    constexpr std::string_view view() const noexcept { return {text.data(), size}; }
};

constexpr model_key make_model_key(std::string_view s, bool drop_versions) noexcept {
    model_key k;
    s = trim(s);
    // "meta-llama/Llama-3.1-70B" → "Llama-3.1-70B"
    for (std::size_t i = s.size(); i > 0; --i)
        if (s[i - 1] == '/') {
            s = s.substr(i);
            break;
        }
    bool first = true;
    std::size_t i = 0;
    while (i < s.size()) {
        // A word runs to the next '-', '_', space or '/'; '.' stays inside ("3.1", "v0.3").
        std::size_t j = i;
        while (j < s.size() && s[j] != '-' && s[j] != '_' && s[j] != ' ' && s[j] != '/') ++j;
        const std::string_view w = s.substr(i, j - i);
        const bool drop = w.empty() || model_noise_word(w) || (drop_versions && model_version_word(w)) ||
                          (first && iequals(w, "meta"));
        if (!w.empty()) first = false;
        if (!drop)
            for (char c : w) {
                // A '+' is read as the word: "Command R+" is "command-r-plus".
                const std::string_view put = c == '+' ? std::string_view("plus") : std::string_view(&c, 1);
                if (c != '+' && loose_ignored(c)) continue;
                if (k.text.size() - k.size < put.size()) {
                    k.ok = false;
                    return k;
                }
                for (char p : put) k.text[k.size++] = ascii_lower(p);
            }
        i = j + 1;
    }
    return k;
}

/// Other names people use for a row, among them fine-tunes published under their own
/// names that keep their base model's shape (DeepSeek's R1 distillations, Qwen2.5-Coder).
struct model_alias {
    std::string_view alias;
    std::string_view id;
};
inline constexpr model_alias model_aliases[] = {
    {"phi-3-mini-4k", "phi-3-mini"},
    {"phi-3-medium-4k", "phi-3-medium"},
    {"mistral-7b", "mistral-7b-v0.3"},
    {"gpt-oss", "gpt-oss-20b"},
    {"llama-33b", "llama-30b"},
    {"deepseek-r1-distill-llama-70b", "llama-3.3-70b"},
    {"deepseek-r1-distill-llama-8b", "llama-3.1-8b"},
    {"deepseek-r1-distill-qwen-32b", "qwen-2.5-32b"},
    {"deepseek-r1-distill-qwen-14b", "qwen-2.5-14b"},
    {"deepseek-r1-distill-qwen-7b", "qwen-2.5-7b"},
    {"qwen2.5-coder-32b", "qwen-2.5-32b"},
    {"qwen2.5-coder-14b", "qwen-2.5-14b"},
    {"qwen2.5-coder-7b", "qwen-2.5-7b"},
    {"qwen2.5-coder-3b", "qwen-2.5-3b"},
    {"llama-4-scout-17b-16e", "llama-4-scout"},
    {"llama-4-maverick-17b-128e", "llama-4-maverick"},
    {"mistral-large", "mistral-large-2407"},
    {"mistral-nemo-2407", "mistral-nemo-12b"},
    {"mistral-nemo", "mistral-nemo-12b"},
    {"mistral-small-24b", "mistral-small-24b-2501"},
    {"mistral-large-2411", "mistral-large-2407"},
    {"c4ai-command-r", "command-r"},
    {"c4ai-command-r-plus", "command-r-plus"},
};
} // namespace detail

/// The index in model_catalogue of the row `name` names (see find_model), or
/// model_catalogue_size when none does. Usable where pointers are not (GCC's sanitizers
/// make pointer comparisons non-constant).
constexpr std::size_t find_model_index(std::string_view name) noexcept {
    for (int pass = 0; pass < 2; ++pass) {
        const bool drop_versions = pass == 1;
        const auto key = detail::make_model_key(name, drop_versions);
        if (!key.ok || key.size == 0) return model_catalogue_size;
        for (std::size_t i = 0; i < model_catalogue_size; ++i) {
            const auto& row = model_catalogue[i];
            if (detail::make_model_key(row.id, false).view() == key.view()) return i;
            if (detail::make_model_key(row.name, false).view() == key.view()) return i;
        }
        for (const auto& a : detail::model_aliases)
            if (detail::make_model_key(a.alias, false).view() == key.view())
                for (std::size_t i = 0; i < model_catalogue_size; ++i)
                    if (model_catalogue[i].id == a.id) return i;
    }
    return model_catalogue_size;
}

/// Looks a model up by the name a person or a file writes ("llama3.1-70b",
/// "meta-llama/Llama-3.1-70B-Instruct", "Mixtral-8x7B-Instruct-v0.1", "gemma-2-9b-it").
/// Returns nullptr when no row matches.
constexpr const model_spec* find_model(std::string_view name) noexcept {
    const auto i = find_model_index(name);
    return i < model_catalogue_size ? &model_catalogue[i] : nullptr;
}

namespace detail {
/// Table checks, compared by content (never by pointer: GCC's sanitizers make pointer
/// comparisons non-constant).
constexpr bool model_catalogue_is_consistent() noexcept {
    for (std::size_t i = 0; i < model_catalogue_size; ++i) {
        const auto& m = model_catalogue[i];
        if (m.id.empty() || m.name.empty() || m.family.empty()) return false;
        if (m.layers == 0 || m.hidden_size == 0 || m.attention_heads == 0 || m.kv_heads == 0) return false;
        if (m.attention_heads % m.kv_heads != 0) return false;
        if (m.parameters == 0 || m.active_parameters == 0 || m.active_parameters > m.parameters) return false;
        if (m.experts_per_token > m.experts) return false;
        if ((m.experts == 0) != (m.experts_per_token == 0)) return false;
        if (m.sliding_window_layers > m.layers) return false;
        if ((m.sliding_window_layers == 0) != (m.sliding_window == 0)) return false;
        if (AI_HWACCEL_TABLE_SOURCES && m.source.substr(0, 8) != "https://"sv) return false;
    }
    // Unique ids, and no two rows answering to the same lookup key either (keys built once:
    // Clang counts every constexpr step).
    std::array<model_key, model_catalogue_size> keys{};
    for (std::size_t i = 0; i < model_catalogue_size; ++i) keys[i] = make_model_key(model_catalogue[i].id, false);
    for (std::size_t i = 0; i < model_catalogue_size; ++i)
        for (std::size_t j = i + 1; j < model_catalogue_size; ++j)
            if (model_catalogue[j].id == model_catalogue[i].id || keys[j].view() == keys[i].view()) return false;
    // Every alias names a row and is no row's own id.
    for (const auto& a : model_aliases) {
        bool target = false;
        const auto key = make_model_key(a.alias, false);
        for (std::size_t i = 0; i < model_catalogue_size; ++i) {
            target = target || model_catalogue[i].id == a.id;
            if (keys[i].view() == key.view()) return false;
        }
        if (!target) return false;
    }
    return true;
}
} // namespace detail
static_assert(detail::model_catalogue_is_consistent(), "model_catalogue: bad row");

/// Typical proportions of a dense decoder: medians over the catalogue's dense rows with
/// ordinary attention (no MoE, no latent attention), worked out at compile time.
struct dense_proportions {
    double hidden_per_layer = 0; ///< hidden size / layers
    double size_factor = 0;      ///< parameters (embeddings included) / (layers x hidden^2)
    std::uint32_t heads_per_kv_head = 1;
};

namespace detail {
template <std::size_t N>
constexpr double median(std::array<double, N> v, std::size_t n) noexcept {
    for (std::size_t i = 1; i < n; ++i) // insertion sort: a few dozen values
        for (std::size_t j = i; j > 0 && v[j - 1] > v[j]; --j) {
            const double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    if (n == 0) return 0;
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

constexpr dense_proportions typical_dense_proportions() noexcept {
    std::array<double, model_catalogue_size> aspect{}, factor{}, group{};
    std::size_t n = 0;
    for (const auto& m : model_catalogue) {
        if (m.is_moe() || m.kv_values_per_token_per_layer || !m.layers || !m.hidden_size || !m.vocab_size ||
            !m.attention_heads || !m.kv_heads)
            continue;
        const double h = m.hidden_size, l = m.layers;
        aspect[n] = h / l;
        factor[n] = static_cast<double>(m.parameters) / (l * h * h);
        group[n] = static_cast<double>(m.attention_heads / m.kv_heads);
        ++n;
    }
    return {median(aspect, n), median(factor, n), static_cast<std::uint32_t>(median(group, n))};
}

constexpr double square_root(double x) noexcept {
    if (!(x > 0)) return 0;
    double r = x > 1 ? x : 1;
    for (int i = 0; i < 200; ++i) {
        const double next = (r + x / r) / 2;
        if (next >= r) break;
        r = next;
    }
    return r;
}
} // namespace detail

inline constexpr dense_proportions typical_dense = detail::typical_dense_proportions();

/// The `source` of a shape assume_dense_shape assumed (its figures come from no model's
/// config).
inline constexpr std::string_view assumed_shape_source =
    "assumed from the parameter count: the catalogue's typical proportions (assume_dense_shape)";

/// A dense decoder of `parameters` weights whose architecture is not known: `layers` and
/// `hidden` as given (0: unknown), the rest in the catalogue's typical proportions
/// (typical_dense: hidden size per layer, parameters per layer and hidden size squared,
/// grouped-query attention), head dimension 128, vocabulary unknown (every weight counted
/// in the blocks). For estimates from a parameter count alone: weights and the bandwidth
/// bound do not depend on the assumption, the KV cache and the compute split do. The
/// result's `source` is assumed_shape_source (see shape_is_assumed).
constexpr model_spec assume_dense_shape(std::uint64_t parameters, std::uint32_t layers = 0,
                                        std::uint32_t hidden = 0) noexcept {
    model_spec m;
    m.parameters = m.active_parameters = parameters;
    m.source = assumed_shape_source;
    const double p = static_cast<double>(parameters);
    const double k = typical_dense.size_factor > 0 ? typical_dense.size_factor : 12.0;
    const double a = typical_dense.hidden_per_layer > 0 ? typical_dense.hidden_per_layer : 128.0;
    // Heads of 128 in groups of heads_per_kv_head: hidden a multiple of 128 x the group.
    constexpr std::uint32_t g = typical_dense.heads_per_kv_head ? typical_dense.heads_per_kv_head : 1;
    constexpr std::uint32_t unit = 128u * g;
    const auto round_hidden = [](double h) -> std::uint32_t {
        const double units = h / unit + 0.5;
        if (!(units >= 1)) return unit;
        if (units * unit > 16777216.0) return 16777216u / unit * unit;
        return static_cast<std::uint32_t>(units) * unit;
    };
    if (layers == 0 && hidden == 0) {
        // p = k x layers x (a x layers)^2: the whole number of layers that comes closest.
        std::uint32_t best = 1;
        for (std::uint32_t l = 1; l <= 4096; ++l) {
            const double d = k * a * a * l * l * l - p, e = k * a * a * best * best * best - p;
            if ((d < 0 ? -d : d) < (e < 0 ? -e : e)) best = l;
            if (d > 0) break;
        }
        layers = best;
    }
    if (hidden == 0) hidden = round_hidden(detail::square_root(p / (k * layers)));
    if (layers == 0) {
        const double l = p / (k * static_cast<double>(hidden) * hidden) + 0.5;
        layers = l < 1 ? 1 : l > 100000 ? 100000 : static_cast<std::uint32_t>(l);
    }
    m.layers = layers;
    m.hidden_size = hidden;
    m.attention_heads = hidden % 128 == 0 ? hidden / 128 : hidden % 64 == 0 ? hidden / 64 : 1;
    m.head_dim = hidden / m.attention_heads;
    // The largest divisor of the heads at or below heads / (heads per KV head) (a given
    // hidden size need not be a multiple of the group).
    std::uint32_t kv = m.attention_heads / g ? m.attention_heads / g : 1;
    while (m.attention_heads % kv != 0) --kv;
    m.kv_heads = kv;
    return m;
}

/// Whether `m`'s shape was assumed by assume_dense_shape rather than read from a config.
constexpr bool shape_is_assumed(const model_spec& m) noexcept { return m.source == assumed_shape_source; }

// The reference implementation once gave the Llama 70B models 70-odd layers: pin them.
static_assert(find_model("llama-2-70b")->layers == 80);
static_assert(find_model("llama-3-70b")->layers == 80);
static_assert(find_model("llama-3.1-70b")->layers == 80);
static_assert(find_model("llama-3.3-70b")->layers == 80);
// Exact counts the config implies, as the checkpoints hold them.
static_assert(find_model("llama-3.1-70b")->parameters == 70'553'706'496);
static_assert(find_model("llama-3.1-8b")->parameters == 8'030'261'248);
static_assert(find_model("llama-2-7b")->parameters == 6'738'415'616);
static_assert(find_model("mixtral-8x7b")->parameters == 46'702'792'704);
static_assert(find_model("deepseek-v3")->kv_values_per_token() == 576);

AI_HWACCEL_NAMESPACE_END
