// ai-hwaccel plan: what a model is, as far as memory and throughput care.
//
// `model_spec` is a literal type, so a model known at compile time can be planned in a
// constant expression; the catalogue of open models (plan/models.hpp) is an array of
// them, and the GGUF and safetensors readers (plan/model_file.hpp) build one from a
// file's header. Counts are exact integers; a field 0 means "not known" except where the
// comment says otherwise.
#pragma once

#include "ai_hwaccel/config.hpp"

#include <cstdint>
#include <string_view>

AI_HWACCEL_NAMESPACE_BEGIN

/// The shape of a decoder-only transformer (dense or mixture-of-experts).
struct model_spec {
    std::string_view id;     ///< stable, lowercase ("llama-3.1-70b")
    std::string_view name;   ///< as its publisher writes it ("Llama 3.1 70B")
    std::string_view family; ///< "llama", "qwen2", "mixtral", "deepseek2", "gpt-oss", …

    std::uint64_t parameters = 0;        ///< every weight, embeddings included
    std::uint64_t active_parameters = 0; ///< read per token: = parameters for dense models
    std::uint32_t layers = 0;            ///< transformer blocks
    std::uint32_t hidden_size = 0;       ///< d_model
    std::uint32_t intermediate_size = 0; ///< FFN width (per expert for MoE)
    std::uint32_t attention_heads = 0;
    std::uint32_t kv_heads = 0;    ///< < attention_heads with grouped-query attention
    std::uint32_t head_dim = 0;    ///< usually hidden_size / attention_heads, not always
    std::uint32_t vocab_size = 0;
    std::uint32_t context_length = 0; ///< the longest context it was trained for
    std::uint32_t experts = 0;        ///< routed experts per MoE layer; 0 for dense
    std::uint32_t experts_per_token = 0;
    /// The values cached per token per layer where that is not 2 x kv_heads x head_dim,
    /// else 0: a latent vector (DeepSeek's MLA: 576), keys and values of different lengths
    /// (kv_heads x (key length + value length)), or KV heads that differ by layer (their
    /// mean).
    std::uint32_t kv_values_per_token_per_layer = 0;
    /// Those values are one latent vector that every head reads (DeepSeek's MLA as llama.cpp,
    /// vLLM and SGLang cache it), not per-head keys and values.
    bool latent_kv_cache = false;
    /// Layers that attend only to a sliding window (Gemma 2/3, gpt-oss), and its size.
    std::uint32_t sliding_window_layers = 0;
    std::uint32_t sliding_window = 0;
    std::string_view source; ///< where the numbers come from (a config.json URL)
    /// The output projection reuses the token embedding matrix (config.json
    /// `tie_word_embeddings`), so the weights hold one vocab x hidden matrix, not two.
    bool tied_embeddings = false;
    /// The FFN multiplies a gate with its up projection (SwiGLU, GeGLU: gate, up and down
    /// matrices, hidden x intermediate_size each); false for a plain up-activation-down
    /// FFN of two (Falcon's GELU MLP).
    bool gated_ffn = true;

    constexpr bool is_moe() const noexcept { return experts > 0; }
    /// Parameters one token reads: active_parameters, or all of them where it is not set.
    constexpr std::uint64_t parameters_per_token() const noexcept {
        return active_parameters ? active_parameters : parameters;
    }
    /// hidden x intermediate_size matrices in one FFN (one expert's, for MoE models).
    constexpr std::uint32_t ffn_matrices() const noexcept { return gated_ffn ? 3 : 2; }
    /// Values cached per token per layer (K and V). The product of 32-bit fields cannot
    /// wrap: at most 2 x (2^32 - 1)^2 < 2^65 would, so it saturates instead.
    constexpr std::uint64_t kv_values_per_token() const noexcept {
        if (kv_values_per_token_per_layer) return kv_values_per_token_per_layer;
        const std::uint64_t d = head_dim ? head_dim : (attention_heads ? hidden_size / attention_heads : 0);
        const std::uint64_t per_kind = std::uint64_t{kv_heads} * d; // < 2^64: two 32-bit factors
        return per_kind > ~std::uint64_t{0} / 2 ? ~std::uint64_t{0} : 2 * per_kind;
    }
    /// The heads the KV cache divides into across tensor-parallel ranks: the KV heads (the
    /// attention heads where those are not given); 1 for a latent cache (DeepSeek's MLA),
    /// one vector that every head reads.
    constexpr std::uint32_t cache_heads() const noexcept {
        return latent_kv_cache ? 1 : kv_heads ? kv_heads : attention_heads;
    }
};

namespace detail {
/// Whether `t` tensor-parallel ranks can split the attention of a model with `heads`
/// attention heads and `cache_heads` (model_spec::cache_heads): t divides the heads, and
/// the cache heads divide among the ranks or each is copied to a whole number of them
/// (vLLM's rule: kv_heads % t or t % kv_heads is 0). 0 heads: unknown, not a limit.
constexpr bool tensor_parallel_splits(std::uint64_t heads, std::uint64_t cache_heads, std::uint64_t t) noexcept {
    if (t == 0) return false;
    return (heads == 0 || heads % t == 0) && (cache_heads == 0 || cache_heads % t == 0 || t % cache_heads == 0);
}
/// The share of the KV cache one of `t` tensor-parallel ranks holds and reads: its
/// ceil(cache_heads / t) heads of the cache's `cache_heads`, so every rank holds a whole
/// copy of a latent cache, and a head is copied where the heads are fewer than the ranks.
/// 0 heads (unknown): an even split.
constexpr double rank_kv_share(std::uint64_t cache_heads, std::uint64_t t) noexcept {
    if (t <= 1) return 1.0;
    if (cache_heads == 0) return 1.0 / static_cast<double>(t);
    const std::uint64_t per = cache_heads / t + (cache_heads % t != 0);
    return static_cast<double>(per) / static_cast<double>(cache_heads);
}
} // namespace detail

AI_HWACCEL_NAMESPACE_END
