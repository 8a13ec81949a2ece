#include "ai_hwaccel/plan/models.hpp"
#include "ai_hwaccel/plan/memory.hpp"
#include "ai_hwaccel/plan/throughput.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <string_view>

namespace ah = ai_hwaccel;

// Compile-time lookups: the catalogue is usable in constant expressions.
static_assert(ah::find_model("llama3.1-70b")->id == "llama-3.1-70b");
static_assert(ah::find_model("Llama-3.1-70B-Instruct")->id == "llama-3.1-70b");
static_assert(ah::find_model_index("nonexistent-model") == ah::model_catalogue_size);
static_assert(ah::estimate_parameters(ah::model_spec{}) == 0);

namespace {
const ah::model_spec& row(std::string_view id) {
    const auto* m = ah::find_model(id);
    REQUIRE(m != nullptr);
    return *m;
}
double rel_error(std::uint64_t got, double want) { return std::fabs(static_cast<double>(got) - want) / want; }
} // namespace

TEST_CASE("model_catalogue") {
    CHECK(ah::model_catalogue_size >= 55);
    for (const auto& m : ah::model_catalogue) {
        CAPTURE(m.id);
        CHECK(m.layers > 0);
        CHECK(m.attention_heads % m.kv_heads == 0);
        CHECK(m.active_parameters <= m.parameters);
        CHECK(m.experts_per_token <= m.experts);
        CHECK(m.kv_values_per_token() > 0);
        CHECK(m.source.substr(0, 23) == "https://huggingface.co/");
        // Every row is found by its own id and name.
        CHECK(ah::find_model(m.id) == &m);
        CHECK(ah::find_model(m.name) == &m);
    }

    SUBCASE("Llama 70B models: 80 layers, 8192 hidden, 64 heads, 8 KV heads") {
        for (std::string_view id : {"llama-2-70b", "llama-3-70b", "llama-3.1-70b", "llama-3.3-70b"}) {
            CAPTURE(id);
            const auto& m = row(id);
            CHECK(m.layers == 80);
            CHECK(m.hidden_size == 8192);
            CHECK(m.intermediate_size == 28672);
            CHECK(m.attention_heads == 64);
            CHECK(m.kv_heads == 8);
        }
        CHECK(row("llama-2-70b").vocab_size == 32000);
        CHECK(row("llama-3.1-70b").vocab_size == 128256);
        CHECK(row("llama-3.1-70b").context_length == 131072);
        CHECK(row("llama-3-70b").context_length == 8192);
    }
    SUBCASE("Llama 3.1 405B") {
        const auto& m = row("llama-3.1-405b");
        CHECK(m.layers == 126);
        CHECK(m.hidden_size == 16384);
        CHECK(m.intermediate_size == 53248);
        CHECK(m.attention_heads == 128);
        CHECK(m.kv_heads == 8);
    }
    SUBCASE("Mixtral 8x7B: 46.7 B total, 12.9 B active") {
        const auto& m = row("mixtral-8x7b");
        CHECK(m.is_moe());
        CHECK(m.experts == 8);
        CHECK(m.experts_per_token == 2);
        CHECK(rel_error(m.parameters, 46.7e9) < 0.005);
        CHECK(rel_error(m.active_parameters, 12.9e9) < 0.005);
    }
    SUBCASE("DBRX: 16 experts, 4 per token; 132 B total, 36 B active as Databricks rounds them") {
        const auto& m = row("dbrx");
        CHECK(m.experts == 16);
        CHECK(m.experts_per_token == 4);
        CHECK(rel_error(m.parameters, 132e9) < 0.01);
        CHECK(rel_error(m.active_parameters, 36e9) < 0.02);
    }
    SUBCASE("the first LLaMA: full attention, 2048 tokens; Command R without GQA, R+ with it") {
        for (std::string_view id : {"llama-7b", "llama-13b", "llama-30b", "llama-65b"}) {
            CAPTURE(id);
            CHECK(row(id).kv_heads == row(id).attention_heads);
            CHECK(row(id).context_length == 2048);
        }
        CHECK(row("command-r").kv_heads == 64);
        CHECK(row("command-r-plus").kv_heads == 8);
        CHECK(row("command-r-plus").tied_embeddings);
    }
    SUBCASE("Falcon: multi-query attention at 7B, and TII's rounded sizes") {
        CHECK(row("falcon-7b").kv_heads == 1);
        CHECK(row("falcon-7b").kv_values_per_token() == 2 * 64);
        CHECK(row("falcon-180b").kv_heads == 8);
        // TII calls them 7B, 40B and 180B; the configs' counts are 6.92B, 41.3B, 178.6B.
        CHECK(rel_error(row("falcon-7b").parameters, 7e9) < 0.05);
        CHECK(rel_error(row("falcon-40b").parameters, 40e9) < 0.05);
        CHECK(rel_error(row("falcon-180b").parameters, 180e9) < 0.05);
        // Two FFN matrices per block: a gated FFN of the same width would hold a third.
        CHECK(!row("falcon-7b").gated_ffn);
        CHECK(row("falcon-7b").ffn_matrices() == 2);
        auto gated = row("falcon-7b");
        gated.gated_ffn = true;
        CHECK(ah::estimate_parameters(gated) - row("falcon-7b").parameters == 32ull * 4544 * 18176);
        CHECK(row("llama-3.1-8b").gated_ffn);
    }
    SUBCASE("Llama 4: Meta's totals split the blocks; a token reads about 17 B") {
        for (std::string_view id : {"llama-4-scout", "llama-4-maverick"}) {
            CAPTURE(id);
            const auto& m = row(id);
            CHECK(m.is_moe());
            CHECK(m.experts_per_token == 1);
            CHECK(m.parameters < (id == "llama-4-scout" ? 109e9 : 401e9));
            // Meta: 17B active, 109B and 400B in all (its totals include the vision encoder).
            CHECK(std::abs(static_cast<double>(m.active_parameters) / 17e9 - 1) < 0.02);
            // The weights a decoded token reads: the active share of the blocks and the
            // output head; the embedding is looked up, not read.
            const auto p = ah::detail::parts_of(m);
            const double read = m.layers * (p.block_other + p.block_experts / m.experts) + p.output;
            CHECK(read == doctest::Approx(static_cast<double>(m.active_parameters) - p.embedding).epsilon(0.001));
        }
        CHECK(ah::kv_cache_bytes(row("llama-4-scout"), {.context = 65536}) <
              ah::kv_cache_bytes(row("llama-3.1-70b"), {.context = 65536}) / 4);
    }
    SUBCASE("Qwen3 MoE rows") {
        const auto& a = row("qwen3-30b-a3b");
        CHECK(a.layers == 48);
        CHECK(a.experts == 128);
        CHECK(a.experts_per_token == 8);
        CHECK(a.intermediate_size == 768);
        CHECK(a.kv_heads == 4);
        const auto& b = row("qwen3-235b-a22b");
        CHECK(b.layers == 94);
        CHECK(b.kv_heads == 4);
        // The estimate from the config agrees with Qwen's published totals.
        CHECK(rel_error(ah::estimate_parameters(a), 30.5e9) < 0.01);
        CHECK(rel_error(ah::estimate_active_parameters(a), 3.3e9) < 0.02);
        CHECK(rel_error(ah::estimate_parameters(b), 235e9) < 0.01);
        CHECK(rel_error(ah::estimate_active_parameters(b), 22e9) < 0.01);
    }
    SUBCASE("DeepSeek MLA caches kv_lora_rank + qk_rope_head_dim values") {
        for (std::string_view id : {"deepseek-v3", "deepseek-r1"}) {
            const auto& m = row(id);
            CHECK(m.layers == 61);
            CHECK(m.kv_values_per_token_per_layer == 576);
            CHECK(m.kv_values_per_token() == 576);
            CHECK(m.experts == 256);
            CHECK(m.parameters == 671'000'000'000ull);
            CHECK(m.active_parameters == 37'000'000'000ull);
        }
    }
    SUBCASE("sliding windows") {
        CHECK(row("gemma-3-27b").sliding_window_layers == 52); // 62 layers, every sixth global
        CHECK(row("gemma-3-27b").sliding_window == 1024);
        CHECK(row("gemma-2-9b").sliding_window_layers == 21);
        CHECK(row("gpt-oss-120b").sliding_window_layers == 18);
        CHECK(row("gpt-oss-120b").sliding_window == 128);
        CHECK(row("mistral-7b-v0.3").sliding_window == 0);
        // Their configs declare windows that llama.cpp, whose cache is modelled, does not
        // build (it loads Mistral v0.1 as a llama; it disables Phi-3's): every token cached,
        // as their GGUF files read. Before, v0.1's cache at 32k was a seventh of llama.cpp's.
        for (const char* id : {"mistral-7b-v0.1", "phi-3-mini", "phi-3-medium"}) {
            CAPTURE(id);
            CHECK(row(id).sliding_window == 0);
            CHECK(row(id).sliding_window_layers == 0);
        }
        // Phi-3 mini's llama.cpp cache at 4096 tokens: 32 layers x 2 x 3072 x 2 bytes x 4096.
        CHECK(ah::kv_cache_bytes(row("phi-3-mini"), {.context = 4096}) == 1'610'612'736ull);
    }
    SUBCASE("gpt-oss: head_dim x heads wider than hidden") {
        const auto& m = row("gpt-oss-20b");
        CHECK(m.hidden_size == 2880);
        CHECK(m.head_dim * m.attention_heads == 4096);
        CHECK(m.experts == 32);
        CHECK(m.experts_per_token == 4);
        CHECK(m.vocab_size == 201088);
    }
    SUBCASE("MoE active counts hold the input embedding, as the matmul count assumes") {
        // A token multiplies with its blocks' shared part, its share of the routed experts
        // and the output head; active_parameters less the input embedding must be that.
        // OpenAI's gpt-oss counts leave the embedding out (0.58B: prefill came out 19 %
        // short before it was added).
        for (const char* id : {"gpt-oss-20b", "gpt-oss-120b", "mixtral-8x7b", "qwen3-30b-a3b", "llama-4-scout"}) {
            CAPTURE(id);
            const auto& m = row(id);
            const auto p = ah::detail::parts_of(m);
            const double routed = static_cast<double>(m.experts_per_token) / m.experts;
            const double blocks = (p.block_other + routed * p.block_experts) * m.layers;
            const double head = m.tied_embeddings ? p.embedding : p.output - m.hidden_size;
            CHECK(ah::detail::matmul_parameters(m) == doctest::Approx(blocks + head).epsilon(0.02));
        }
    }
}

TEST_CASE("estimate_parameters") {
    // Published totals (model cards / Hub safetensors metadata) of dense models: the
    // estimate from the config lands within 1 %.
    struct published {
        std::string_view id;
        double total;
    };
    for (const auto& p : {published{"llama-3.1-70b", 70.55e9}, published{"llama-3.1-8b", 8.03e9},
                          published{"llama-3.1-405b", 405e9}, published{"llama-2-7b", 6.74e9},
                          published{"llama-2-13b", 13.0e9}, published{"llama-2-70b", 69.0e9},
                          published{"llama-3.2-1b", 1.24e9}, published{"llama-3.2-3b", 3.21e9},
                          published{"mistral-7b-v0.3", 7.25e9}, published{"mistral-7b-v0.1", 7.24e9},
                          published{"qwen-2.5-0.5b", 0.49e9},
                          published{"qwen-2.5-7b", 7.61e9}, published{"qwen-2.5-14b", 14.7e9},
                          published{"qwen-2.5-32b", 32.5e9}, published{"qwen-2.5-72b", 72.7e9},
                          published{"qwen3-8b", 8.2e9}, published{"qwen3-32b", 32.8e9},
                          published{"phi-3-mini", 3.8e9}, published{"phi-3-medium", 14.0e9},
                          // LLaMA's paper states 6.7B, 13.0B, 32.5B and 65.2B.
                          published{"llama-7b", 6.7e9}, published{"llama-13b", 13.0e9},
                          published{"llama-30b", 32.5e9}, published{"llama-65b", 65.2e9},
                          published{"tinyllama-1.1b", 1.1e9}, published{"gemma-2-2b", 2.61e9},
                          published{"mistral-large-2407", 123e9}, published{"command-r", 35e9},
                          published{"command-r-plus", 104e9}, published{"qwen-2.5-3b", 3.09e9},
                          published{"qwen3-4b", 4.0e9}, published{"qwen3-14b", 14.8e9},
                          published{"mistral-nemo-12b", 12.2e9}, published{"mistral-small-24b-2501", 23.6e9}}) {
        CAPTURE(p.id);
        CHECK(rel_error(ah::estimate_parameters(row(p.id)), p.total) < 0.01);
        CHECK(rel_error(row(p.id).parameters, p.total) < 0.01);
    }
    SUBCASE("exact where the checkpoint holds exactly the counted matrices") {
        CHECK(ah::estimate_parameters(row("llama-3.1-70b")) == 70'553'706'496ull);
        CHECK(ah::estimate_parameters(row("llama-3.2-1b")) == 1'235'814'400ull); // tied embeddings
        CHECK(ah::estimate_parameters(row("tinyllama-1.1b")) == 1'100'048'384ull);
    }
    SUBCASE("saturates on absurd shapes instead of wrapping") {
        ah::model_spec m{.id = "x", .name = "X", .family = "x", .layers = 0xffffffffu,
                         .hidden_size = 0xffffffffu, .intermediate_size = 0xffffffffu,
                         .attention_heads = 1, .kv_heads = 1, .vocab_size = 0xffffffffu, .source = "hand-made"};
        CHECK(ah::estimate_parameters(m) == ~std::uint64_t{0});
    }
    SUBCASE("dense: active == total") {
        CHECK(row("llama-3-8b").active_parameters == row("llama-3-8b").parameters);
    }
}

TEST_CASE("find_model") {
    CHECK(ah::find_model("llama3.1-70b")->id == "llama-3.1-70b");
    CHECK(ah::find_model("Llama-3.1-70B-Instruct")->id == "llama-3.1-70b");
    CHECK(ah::find_model("meta-llama/Llama-3.1-70B-Instruct")->id == "llama-3.1-70b");
    CHECK(ah::find_model("meta-llama/Meta-Llama-3-8B-Instruct")->id == "llama-3-8b");
    CHECK(ah::find_model("Llama 2 7B Chat")->id == "llama-2-7b");
    CHECK(ah::find_model("meta-llama/Llama-2-70b-chat-hf")->id == "llama-2-70b");
    CHECK(ah::find_model("mistralai/Mistral-7B-Instruct-v0.3")->id == "mistral-7b-v0.3");
    CHECK(ah::find_model("mistralai/Mistral-7B-Instruct-v0.1")->id == "mistral-7b-v0.1");
    CHECK(ah::find_model("mistralai/Mistral-7B-v0.1")->id == "mistral-7b-v0.1");
    CHECK(ah::find_model("Mistral-7B-v0.2")->id == "mistral-7b-v0.3");
    CHECK(ah::find_model("mistralai/Mixtral-8x7B-Instruct-v0.1")->id == "mixtral-8x7b");
    CHECK(ah::find_model("Qwen/Qwen2.5-72B-Instruct")->id == "qwen-2.5-72b");
    CHECK(ah::find_model("qwen2.5-0.5b")->id == "qwen-2.5-0.5b");
    CHECK(ah::find_model("Qwen3-235B-A22B")->id == "qwen3-235b-a22b");
    CHECK(ah::find_model("google/gemma-2-9b-it")->id == "gemma-2-9b");
    CHECK(ah::find_model("gemma-3-27b-it")->id == "gemma-3-27b");
    CHECK(ah::find_model("microsoft/Phi-3-mini-4k-instruct")->id == "phi-3-mini");
    CHECK(ah::find_model("microsoft/phi-4")->id == "phi-4");
    CHECK(ah::find_model("deepseek-ai/DeepSeek-R1")->id == "deepseek-r1");
    CHECK(ah::find_model("openai/gpt-oss-120b")->id == "gpt-oss-120b");
    CHECK(ah::find_model("  LLAMA 3.3 70B  ")->id == "llama-3.3-70b");
    CHECK(ah::find_model("huggyllama/llama-7b")->id == "llama-7b");
    CHECK(ah::find_model("LLaMA-33B")->id == "llama-30b");
    CHECK(ah::find_model("TinyLlama/TinyLlama-1.1B-Chat-v1.0")->id == "tinyllama-1.1b");
    CHECK(ah::find_model("google/gemma-2-2b-it")->id == "gemma-2-2b");
    CHECK(ah::find_model("mistralai/Mistral-Large-Instruct-2407")->id == "mistral-large-2407");
    CHECK(ah::find_model("mistralai/Mistral-Large-Instruct-2411")->id == "mistral-large-2407");
    CHECK(ah::find_model("databricks/dbrx-instruct")->id == "dbrx");
    // Fine-tunes under their own names answer to the row of their base model's shape.
    CHECK(ah::find_model("deepseek-ai/DeepSeek-R1-Distill-Llama-70B")->id == "llama-3.3-70b");
    CHECK(ah::find_model("deepseek-ai/DeepSeek-R1-Distill-Qwen-32B")->id == "qwen-2.5-32b");
    CHECK(ah::find_model("Qwen/Qwen2.5-Coder-32B-Instruct")->id == "qwen-2.5-32b");
    CHECK(ah::find_model("Qwen/Qwen2.5-Coder-7B")->id == "qwen-2.5-7b");
    CHECK(ah::find_model("deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B") == nullptr); // no Qwen2.5 1.5B row
    CHECK(ah::find_model("meta-llama/Llama-4-Scout-17B-16E-Instruct")->id == "llama-4-scout");
    CHECK(ah::find_model("meta-llama/Llama-4-Maverick-17B-128E-Instruct")->id == "llama-4-maverick");
    CHECK(ah::find_model("mistralai/Mistral-Nemo-Instruct-2407")->id == "mistral-nemo-12b");
    CHECK(ah::find_model("mistralai/Mistral-Small-24B-Instruct-2501")->id == "mistral-small-24b-2501");
    CHECK(ah::find_model("Qwen/Qwen3-14B")->id == "qwen3-14b");
    CHECK(ah::find_model("Qwen/Qwen2.5-3B-Instruct")->id == "qwen-2.5-3b");
    CHECK(ah::find_model("tiiuae/falcon-180B-chat")->id == "falcon-180b");
    CHECK(ah::find_model("tiiuae/falcon-7b-instruct")->id == "falcon-7b");
    // '+' reads as "plus", so Command R+ is not Command R.
    CHECK(ah::find_model("CohereForAI/c4ai-command-r-v01")->id == "command-r");
    CHECK(ah::find_model("CohereForAI/c4ai-command-r-plus")->id == "command-r-plus");
    CHECK(ah::find_model("Command R+")->id == "command-r-plus");
    CHECK(ah::find_model("command-r")->id == "command-r");
    CHECK(ah::find_model("+") == nullptr);

    CHECK(ah::find_model("") == nullptr);
    CHECK(ah::find_model("   ") == nullptr);
    CHECK(ah::find_model("llama-3.1") == nullptr);
    CHECK(ah::find_model("llama-3.1-70") == nullptr);
    CHECK(ah::find_model("instruct") == nullptr);
    CHECK(ah::find_model(std::string(100000, 'a')) == nullptr);
    CHECK(ah::find_model(std::string("llama\0-3", 8)) == nullptr);
}

// A model known by its size alone gets the catalogue's typical shape.
static_assert(ah::assume_dense_shape(70'000'000'000).layers >= 60 && ah::assume_dense_shape(70'000'000'000).layers <= 100);
static_assert(ah::assume_dense_shape(7'000'000'000, 32, 4096).layers == 32);

TEST_CASE("assume_dense_shape") {
    // The medians are those of real models: hidden sizes of about a hundred per layer, about
    // twelve to fourteen parameters per layer and hidden size squared, grouped-query attention.
    CHECK(ah::typical_dense.hidden_per_layer > 64);
    CHECK(ah::typical_dense.hidden_per_layer < 160);
    CHECK(ah::typical_dense.size_factor > 10);
    CHECK(ah::typical_dense.size_factor < 20);
    CHECK(ah::typical_dense.heads_per_kv_head >= 1);
    CHECK(ah::typical_dense.heads_per_kv_head <= 16);

    // From each dense catalogue model of 7B parameters or more, its parameter count alone
    // gives layers within 55 % of its own and the hidden size within 35 %. The farthest
    // are the shapes furthest from the median: Command R, twice as wide per layer (about
    // half again as many layers as it has), Qwen 2.5 7B, with an FFN 5.3 times its hidden
    // size, and Gemma 2 27B (its hidden size a third too large).
    for (const auto& m : ah::model_catalogue) {
        if (m.is_moe() || m.kv_values_per_token_per_layer || m.parameters < 7'000'000'000) continue;
        CAPTURE(m.id);
        const auto s = ah::assume_dense_shape(m.parameters);
        CHECK(std::abs(static_cast<double>(s.layers) / m.layers - 1) < 0.55);
        CHECK(std::abs(static_cast<double>(s.hidden_size) / m.hidden_size - 1) < 0.35);
        CHECK(s.parameters == m.parameters);
        CHECK(s.attention_heads * s.head_dim == s.hidden_size);
        CHECK(s.attention_heads % s.kv_heads == 0);
    }
    // An assumed shape says so; the catalogue's rows do not.
    CHECK(ah::shape_is_assumed(ah::assume_dense_shape(7'000'000'000)));
    for (const auto& m : ah::model_catalogue) CHECK_FALSE(ah::shape_is_assumed(m));
    // What is given is kept; the rest follows from it.
    const auto l = ah::assume_dense_shape(13'000'000'000, 40);
    CHECK(l.layers == 40);
    CHECK(l.hidden_size % 128 == 0);
    CHECK(std::abs(ah::typical_dense.size_factor * l.layers * l.hidden_size * l.hidden_size / 13e9 - 1) < 0.15);
    const auto h = ah::assume_dense_shape(13'000'000'000, 0, 5120);
    CHECK(h.hidden_size == 5120);
    CHECK(h.layers == static_cast<std::uint32_t>(13e9 / (ah::typical_dense.size_factor * 5120.0 * 5120.0) + 0.5));
    // Degenerate sizes stay a shape.
    const auto tiny = ah::assume_dense_shape(1000);
    CHECK(tiny.layers >= 1);
    CHECK(tiny.hidden_size >= 128);
    CHECK(tiny.kv_heads >= 1);
    const auto huge = ah::assume_dense_shape(~std::uint64_t{0});
    CHECK(huge.layers >= 1);
    CHECK(huge.kv_heads >= 1);
}
