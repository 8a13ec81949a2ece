#include "ai_hwaccel/plan/model.hpp"

#include <doctest/doctest.h>

namespace ah = ai_hwaccel;

// model_spec is a literal type: a model known at compile time plans in a constant expression.
constexpr ah::model_spec gqa{.id = "t", .name = "T", .family = "llama", .layers = 80, .hidden_size = 8192,
                             .attention_heads = 64, .kv_heads = 8, .head_dim = 128, .source = "hand-made"};
static_assert(gqa.kv_values_per_token() == 2 * 8 * 128);
static_assert(!gqa.is_moe());

TEST_CASE("model_spec::kv_values_per_token") {
    SUBCASE("grouped-query attention: 2 x kv_heads x head_dim") {
        CHECK(gqa.kv_values_per_token() == 2048);
    }
    SUBCASE("head_dim 0 falls back to hidden_size / attention_heads") {
        ah::model_spec m = gqa;
        m.head_dim = 0;
        CHECK(m.kv_values_per_token() == 2 * 8 * (8192 / 64));
    }
    SUBCASE("head_dim wider than hidden_size / heads is honoured (Gemma, gpt-oss)") {
        ah::model_spec m{.id = "g", .name = "G", .family = "gemma2", .hidden_size = 3584, .attention_heads = 16,
                         .kv_heads = 8, .head_dim = 256, .source = "hand-made"};
        CHECK(m.kv_values_per_token() == 2 * 8 * 256);
    }
    SUBCASE("latent attention overrides the product (DeepSeek MLA: 512 + 64)") {
        ah::model_spec m{.id = "d", .name = "D", .family = "deepseek2", .hidden_size = 7168,
                         .attention_heads = 128, .kv_heads = 128, .head_dim = 192,
                         .kv_values_per_token_per_layer = 576, .latent_kv_cache = true, .source = "hand-made"};
        CHECK(m.kv_values_per_token() == 576);
        CHECK(m.cache_heads() == 1); // one vector every head reads
    }
    SUBCASE("values per layer that are not a latent vector still divide by KV head") {
        // Keys and values of different lengths (MiniCPM3: 40 heads x (96 + 64)), or heads
        // that differ by layer: the count overrides the product, the heads stay the heads.
        ah::model_spec m{.id = "c", .name = "C", .family = "minicpm3", .hidden_size = 2560, .attention_heads = 40,
                         .kv_heads = 40, .head_dim = 96, .kv_values_per_token_per_layer = 40 * (96 + 64),
                         .source = "hand-made"};
        CHECK(m.kv_values_per_token() == 6400);
        CHECK(m.cache_heads() == 40);
        CHECK(ah::detail::rank_kv_share(m.cache_heads(), 8) == doctest::Approx(0.125));
    }
    SUBCASE("a product past 2^64 saturates instead of wrapping") {
        // 2 x 2147516416 x 4294901761 wraps to 65536 in 64 bits.
        ah::model_spec m{};
        m.kv_heads = 2147516416u;
        m.head_dim = 4294901761u;
        CHECK(m.kv_values_per_token() == ~std::uint64_t{0});
        m.kv_heads = 0xffffffffu;
        m.head_dim = 0x7fffffffu; // 2 x the product just fits
        CHECK(m.kv_values_per_token() == 2 * std::uint64_t{0xffffffffu} * 0x7fffffffu);
    }
    SUBCASE("unknown shape gives 0, never a division by zero") {
        ah::model_spec m{};
        CHECK(m.kv_values_per_token() == 0);
        m.hidden_size = 4096;
        m.kv_heads = 8;
        CHECK(m.kv_values_per_token() == 0);
    }
    SUBCASE("is_moe") {
        ah::model_spec m = gqa;
        m.experts = 8;
        m.experts_per_token = 2;
        CHECK(m.is_moe());
    }
    SUBCASE("parameters_per_token: active_parameters, or every parameter where it is unset") {
        ah::model_spec m = gqa;
        m.parameters = 46'700'000'000;
        CHECK(m.parameters_per_token() == 46'700'000'000);
        m.active_parameters = 12'880'000'000; // Mixtral 8x7B: 2 of 8 experts a token
        CHECK(m.parameters_per_token() == 12'880'000'000);
    }
}
