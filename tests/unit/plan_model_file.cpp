#include "ai_hwaccel/plan/memory.hpp"
#include "ai_hwaccel/plan/model_file.hpp"
#include "ai_hwaccel/plan/models.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace ah = ai_hwaccel;

namespace {
// A tiny GGUF writer (hand-made files, layout of ggml docs/gguf.md, little-endian).
struct gguf_writer {
    std::vector<std::byte> out;
    void raw(const void* p, std::size_t n) {
        const auto* b = static_cast<const std::byte*>(p);
        out.insert(out.end(), b, b + n);
    }
    template <class T>
    void le(T v) {
        auto u = static_cast<std::uint64_t>(v);
        for (std::size_t i = 0; i < sizeof(T); ++i) out.push_back(static_cast<std::byte>((u >> (8 * i)) & 0xff));
    }
    void str(std::string_view s) {
        le<std::uint64_t>(s.size());
        raw(s.data(), s.size());
    }
    void header(std::uint32_t version, std::uint64_t tensors, std::uint64_t kvs) {
        raw("GGUF", 4);
        le(version);
        le(tensors);
        le(kvs);
    }
    void kv_u32(std::string_view k, std::uint32_t v) {
        str(k);
        le<std::uint32_t>(4);
        le(v);
    }
    void kv_u16(std::string_view k, std::uint16_t v) {
        str(k);
        le<std::uint32_t>(2);
        le(v);
    }
    void kv_i32(std::string_view k, std::int32_t v) {
        str(k);
        le<std::uint32_t>(5);
        le(v);
    }
    void kv_str(std::string_view k, std::string_view v) {
        str(k);
        le<std::uint32_t>(8);
        str(v);
    }
    void kv_tokens(std::uint64_t n) {
        str("tokenizer.ggml.tokens");
        le<std::uint32_t>(9);
        le<std::uint32_t>(8);
        le<std::uint64_t>(n);
        for (std::uint64_t i = 0; i < n; ++i) str("t" + std::to_string(i));
    }
    void tensor(std::string_view name, std::vector<std::uint64_t> dims, std::uint32_t type) {
        str(name);
        le<std::uint32_t>(static_cast<std::uint32_t>(dims.size()));
        for (auto d : dims) le(d);
        le(type);
        le<std::uint64_t>(0);
    }
};

// A tiny llama-shaped model: 2 layers, 64 hidden, 4 heads (2 KV), FFN 128, vocab 5.
std::vector<std::byte> tiny_llama(std::uint32_t version = 3, bool tied = false) {
    gguf_writer w;
    const std::uint64_t tensors = 2 * 9 + 2 + (tied ? 0 : 1);
    w.header(version, tensors, 12);
    w.kv_str("general.architecture", "llama");
    w.kv_str("general.name", "Tiny Llama");
    w.kv_u32("general.file_type", 15); // Q4_K_M
    w.kv_u32("llama.block_count", 2);
    w.kv_u32("llama.embedding_length", 64);
    w.kv_u32("llama.feed_forward_length", 128);
    w.kv_u32("llama.attention.head_count", 4);
    w.kv_u32("llama.attention.head_count_kv", 2);
    w.kv_u32("llama.context_length", 2048);
    w.kv_u32("llama.attention.key_length", 16);
    w.kv_tokens(5);
    // An array of arrays, which the reader must walk and ignore.
    w.str("test.nested");
    w.le<std::uint32_t>(9);
    w.le<std::uint32_t>(9);
    w.le<std::uint64_t>(2);
    for (int i = 0; i < 2; ++i) {
        w.le<std::uint32_t>(4);
        w.le<std::uint64_t>(3);
        for (int j = 0; j < 3; ++j) w.le<std::uint32_t>(7);
    }
    w.tensor("token_embd.weight", {64, 5}, 8); // Q8_0 wants whole blocks of 32 per row
    for (int l = 0; l < 2; ++l) {
        const auto b = "blk." + std::to_string(l) + ".";
        w.tensor(b + "attn_q.weight", {64, 64}, 8);
        w.tensor(b + "attn_k.weight", {64, 32}, 8);
        w.tensor(b + "attn_v.weight", {64, 32}, 1);
        w.tensor(b + "attn_output.weight", {64, 64}, 8);
        w.tensor(b + "ffn_gate.weight", {64, 128}, 8);
        w.tensor(b + "ffn_up.weight", {64, 128}, 8);
        w.tensor(b + "ffn_down.weight", {128, 64}, 1);
        w.tensor(b + "attn_norm.weight", {64}, 0);
        w.tensor(b + "ffn_norm.weight", {64}, 0);
    }
    w.tensor("output_norm.weight", {64}, 0);
    if (!tied) w.tensor("output.weight", {64, 5}, 1);
    return w.out;
}

constexpr std::uint64_t tiny_params(bool tied) {
    const std::uint64_t layer = 64 * 64 * 2 + 64 * 32 * 2 + 64 * 128 * 3 + 64 * 2;
    return 64 * 5 + 2 * layer + 64 + (tied ? 0 : 64 * 5);
}

// A fresh directory under the temp folder, removed at the end of the test.
struct temp_dir {
    std::filesystem::path path;
    explicit temp_dir(std::string_view stem) {
        path = std::filesystem::temp_directory_path() /
               (std::string(stem) + "_" + std::to_string(std::random_device{}()));
        std::filesystem::create_directories(path);
    }
    ~temp_dir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;
};

bool has_problem(const ah::model_file_info& r, std::string_view text) {
    for (const auto& p : r.problems)
        if (p.message.find(text) != std::string::npos) return true;
    return false;
}
} // namespace

TEST_CASE("read_gguf") {
    SUBCASE("a well-formed file") {
        for (std::uint32_t version : {2u, 3u}) {
            CAPTURE(version);
            const auto bytes = tiny_llama(version);
            const auto r = ah::read_gguf(bytes);
            CHECK(r.problems.empty());
            CHECK(r.format == "gguf");
            CHECK(r.version == version);
            CHECK(r.tensor_count == 21);
            CHECK(r.tensors_read == 21);
            CHECK(r.parameters_exact);
            CHECK(r.parameters == tiny_params(false));
            CHECK(r.gguf_file_type == 15);
            REQUIRE(r.quant.has_value());
            CHECK(*r.quant == ah::quant_format::q4_k_m);
            REQUIRE(r.model.has_value());
            const auto s = r.model->spec();
            CHECK(s.family == "llama");
            CHECK(s.name == "Tiny Llama");
            CHECK(s.layers == 2);
            CHECK(s.hidden_size == 64);
            CHECK(s.intermediate_size == 128);
            CHECK(s.attention_heads == 4);
            CHECK(s.kv_heads == 2);
            CHECK(s.head_dim == 16);
            CHECK(s.vocab_size == 5);
            CHECK(s.context_length == 2048);
            CHECK(!s.tied_embeddings);
            CHECK(s.parameters == tiny_params(false));
            CHECK(s.active_parameters == s.parameters);
            CHECK(s.kv_values_per_token() == 2 * 2 * 16);
            // The estimate from the metadata agrees with the tensors for a llama shape.
            CHECK(ah::estimate_parameters(s) == tiny_params(false));
            // Bytes by ggml type follow the block layouts.
            bool saw_q8 = false, saw_f32 = false;
            for (const auto& t : r.by_type) {
                if (t.dtype == "Q8_0") {
                    saw_q8 = true;
                    CHECK(t.ggml_type == 8);
                    CHECK(t.elements == 64 * 5 + 2 * (64 * 64 * 2 + 64 * 32 + 64 * 128 * 2));
                    CHECK(t.bytes == t.elements / 32 * 34);
                }
                if (t.dtype == "F32") {
                    saw_f32 = true;
                    CHECK(t.tensors == 5);
                    CHECK(t.bytes == t.elements * 4);
                }
                CHECK(t.bytes_known);
            }
            CHECK(saw_q8);
            CHECK(saw_f32);
        }
    }
    SUBCASE("tied embeddings: no output.weight") {
        const auto r = ah::read_gguf(tiny_llama(3, true));
        REQUIRE(r.model);
        CHECK(r.model->spec().tied_embeddings);
        CHECK(r.parameters == tiny_params(true));
        CHECK(ah::estimate_parameters(r.model->spec()) == tiny_params(true));
    }
    SUBCASE("the description owns its strings: copies and moves stay valid") {
        ah::model_description copy;
        {
            const auto r = ah::read_gguf(tiny_llama());
            REQUIRE(r.model);
            copy = *r.model;
        }
        auto moved = std::move(copy);
        CHECK(moved.spec().name == "Tiny Llama");
        CHECK(moved.spec().family == "llama");
    }
    SUBCASE("every truncation is reported, never read past") {
        const auto full = tiny_llama();
        for (std::size_t n = 0; n < full.size(); ++n) {
            const std::vector<std::byte> cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
            const auto r = ah::read_gguf(cut);
            CAPTURE(n);
            CHECK(!r.problems.empty());
            CHECK(!r.parameters_exact);
            CHECK(r.parameters <= tiny_params(false));
        }
    }
    SUBCASE("not GGUF, other versions, big-endian") {
        CHECK(has_problem(ah::read_gguf({}), "not a GGUF"));
        const char text[] = "hello world, not a model";
        CHECK(has_problem(ah::read_gguf(std::as_bytes(std::span(text))), "not a GGUF"));
        gguf_writer w1;
        w1.header(1, 0, 0);
        CHECK(has_problem(ah::read_gguf(w1.out), "unsupported GGUF version 1"));
        gguf_writer w4;
        w4.header(0x03000000u, 0, 0);
        CHECK(has_problem(ah::read_gguf(w4.out), "big-endian"));
    }
    SUBCASE("giant counts end at the end of the input") {
        gguf_writer w;
        w.header(3, ~std::uint64_t{0}, ~std::uint64_t{0});
        w.kv_str("general.architecture", "llama");
        const auto r = ah::read_gguf(w.out);
        CHECK(has_problem(r, "truncated metadata"));
        CHECK(!r.model);
    }
    SUBCASE("string and array lengths past the end") {
        gguf_writer w;
        w.header(3, 0, 2);
        w.str("general.architecture");
        w.le<std::uint32_t>(8);
        w.le<std::uint64_t>(1ull << 62); // string length
        CHECK(has_problem(ah::read_gguf(w.out), "truncated"));

        gguf_writer a;
        a.header(3, 0, 1);
        a.str("tokenizer.ggml.tokens");
        a.le<std::uint32_t>(9);
        a.le<std::uint32_t>(4);
        a.le<std::uint64_t>(~std::uint64_t{0} / 2); // u32 elements: way past the end
        CHECK(has_problem(ah::read_gguf(a.out), "runs past the end"));

        gguf_writer s;
        s.header(3, 0, 1);
        s.str("tokenizer.ggml.tokens");
        s.le<std::uint32_t>(9);
        s.le<std::uint32_t>(8);
        s.le<std::uint64_t>(~std::uint64_t{0}); // strings: each needs 8 bytes, loop ends at the end
        CHECK(has_problem(ah::read_gguf(s.out), "truncated"));

        gguf_writer k;
        k.header(3, 0, 1);
        k.le<std::uint64_t>(70000); // key longer than gguf.md allows
        CHECK(has_problem(ah::read_gguf(k.out), "truncated"));
    }
    SUBCASE("arrays nested too deep, unknown value types") {
        gguf_writer w;
        w.header(3, 0, 1);
        w.str("x.deep");
        w.le<std::uint32_t>(9);
        for (int i = 0; i < 6; ++i) {
            w.le<std::uint32_t>(9);
            w.le<std::uint64_t>(1);
        }
        w.le<std::uint32_t>(4);
        w.le<std::uint64_t>(1);
        w.le<std::uint32_t>(1);
        CHECK(has_problem(ah::read_gguf(w.out), "nested too deep"));

        gguf_writer u;
        u.header(3, 0, 1);
        u.str("x.odd");
        u.le<std::uint32_t>(99);
        CHECK(has_problem(ah::read_gguf(u.out), "unknown metadata value type"));
    }
    SUBCASE("duplicate keys and wrong types") {
        gguf_writer w;
        w.header(3, 0, 5);
        w.kv_str("general.architecture", "llama");
        w.kv_str("general.architecture", "qwen2");
        w.kv_u32("llama.block_count", 2);
        w.kv_u32("llama.block_count", 3);
        w.kv_str("llama.embedding_length", "sixty-four");
        const auto r = ah::read_gguf(w.out);
        CHECK(has_problem(r, "duplicate key general.architecture"));
        CHECK(has_problem(r, "duplicate key llama.block_count"));
        CHECK(has_problem(r, "llama.embedding_length is not"));
        REQUIRE(r.model);
        CHECK(r.model->family == "llama"); // the first one wins
        CHECK(r.model->shape.layers == 2);
        CHECK(r.model->shape.hidden_size == 0);
    }
    SUBCASE("per-layer KV heads: the largest, and the cache from their sum") {
        // head_count_kv as an array (OpenELM; Jamba's 0 on its Mamba layers).
        const auto with_kv = [](std::vector<std::uint32_t> kv, std::uint32_t blocks) {
            gguf_writer w;
            w.header(3, 0, 5);
            w.kv_str("general.architecture", "openelm");
            w.kv_u32("openelm.block_count", blocks);
            w.kv_u32("openelm.embedding_length", 64);
            w.kv_u32("openelm.attention.head_count", 4);
            w.str("openelm.attention.head_count_kv");
            w.le<std::uint32_t>(9);
            w.le<std::uint32_t>(4);
            w.le<std::uint64_t>(kv.size());
            for (auto v : kv) w.le(v);
            return ah::read_gguf(w.out);
        };
        const auto r = with_kv({2, 2, 4, 0}, 4);
        CHECK(r.problems.empty());
        REQUIRE(r.model);
        CHECK(r.model->shape.kv_heads == 4);
        // head_dim 16; (2 + 2 + 4 + 0) heads x 2 x 16 values over 4 layers.
        CHECK(r.model->spec().kv_values_per_token() == 64);
        const auto same = with_kv({2, 2, 2, 2}, 4);
        REQUIRE(same.model);
        CHECK(same.model->shape.kv_heads == 2);
        CHECK(same.model->shape.kv_values_per_token_per_layer == 0);
        CHECK(same.model->spec().kv_values_per_token() == 64);
        CHECK(has_problem(with_kv({2, 2}, 4), "head_count_kv lists 2 layers, block_count 4"));
        // The mean is not a latent vector: tensor parallelism still splits the heads.
        CHECK_FALSE(r.model->shape.latent_kv_cache);
        CHECK(r.model->spec().cache_heads() == 4);
    }
    SUBCASE("a model gguf-split cut in two: one file alone is said to be a part, both are the model") {
        // Hand-made, as gguf-split writes them: the metadata and split.* keys in the first
        // file, only the split.* keys in the second; split.no and split.count are u16,
        // split.tensors.count i32.
        const auto first = [](std::uint16_t no) {
            gguf_writer w;
            w.header(3, 2, 9);
            w.kv_str("general.architecture", "llama");
            w.kv_u32("llama.block_count", 1);
            w.kv_u32("llama.embedding_length", 64);
            w.kv_u32("llama.feed_forward_length", 128);
            w.kv_u32("llama.attention.head_count", 4);
            w.kv_u32("llama.attention.head_count_kv", 2);
            w.kv_u16("split.no", no);
            w.kv_u16("split.count", 2);
            w.kv_i32("split.tensors.count", 4);
            w.tensor("token_embd.weight", {64, 10}, 0);
            w.tensor("blk.0.attn_q.weight", {64, 64}, 0);
            return w.out;
        };
        gguf_writer second;
        second.header(3, 2, 3);
        second.kv_u16("split.no", 1);
        second.kv_u16("split.count", 2);
        second.kv_i32("split.tensors.count", 4);
        second.tensor("blk.0.ffn_up.weight", {64, 128}, 0);
        second.tensor("output.weight", {64, 10}, 0);
        const std::uint64_t whole = 640 + 4096 + 8192 + 640;

        const auto a = first(0);
        const auto alone = ah::read_gguf(a);
        CHECK(alone.split_count == 2);
        CHECK(alone.split_tensors == 4);
        CHECK_FALSE(alone.parameters_exact); // before, 2 tensors' count was the model's
        CHECK(has_problem(alone, "file 1 of the 2 of a split model: 2 of its 4 tensors read"));
        REQUIRE(alone.model);
        CHECK_FALSE(alone.model->shape.tied_embeddings); // output.weight is in the other file
        CHECK(alone.model->shape.parameters == ah::estimate_parameters(alone.model->spec()));

        const std::span<const std::byte> more[] = {second.out};
        const auto both = ah::read_gguf(a, more);
        CHECK(both.problems.empty());
        CHECK(both.parameters_exact);
        CHECK(both.tensor_count == 4);
        CHECK(both.parameters == whole);
        REQUIRE(both.model);
        CHECK(both.model->shape.parameters == whole);
        CHECK_FALSE(both.model->shape.tied_embeddings);
        CHECK_FALSE(both.model->shape.gated_ffn); // ffn_up, no gate: seen in the second file

        // The second file out of order: said, and the model is not taken as whole.
        const auto b0 = first(0);
        const std::span<const std::byte> wrong[] = {b0};
        const auto out_of_order = ah::read_gguf(a, wrong);
        CHECK(has_problem(out_of_order, "file 2: split.no is 0, not 1"));
        CHECK_FALSE(out_of_order.parameters_exact);

        // From files named as gguf-split names them, either file finds the other.
        const temp_dir tmp("ai_hwaccel_plan_gguf_split");
        const auto write = [&](const char* name, const std::vector<std::byte>& bytes) {
            std::ofstream o(tmp.path / name, std::ios::binary);
            o.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
        };
        write("tiny-00001-of-00002.gguf", a);
        // The second file with tensor data after its header, as a real one has: only the
        // header is kept of it.
        auto padded = second.out;
        padded.resize(padded.size() + (1u << 20), std::byte{0x5a});
        CHECK(ah::detail::model_files::later_header_size(padded) == second.out.size());
        const std::vector<std::byte> junk(100, std::byte{0x5a}); // not GGUF: all of it is kept
        CHECK(ah::detail::model_files::later_header_size(junk) == junk.size());
        auto cut = second.out; // cut inside its tensor infos: all of it
        cut.resize(cut.size() - 4);
        CHECK(ah::detail::model_files::later_header_size(cut) == cut.size());
        write("tiny-00002-of-00002.gguf", padded);
        for (const char* name : {"tiny-00001-of-00002.gguf", "tiny-00002-of-00002.gguf"}) {
            CAPTURE(name);
            const auto r = ah::read_gguf_file(tmp.path / name);
            CHECK(r.problems.empty());
            CHECK(r.parameters_exact);
            CHECK(r.parameters == whole);
        }
        std::filesystem::remove(tmp.path / "tiny-00002-of-00002.gguf");
        const auto missing = ah::read_gguf_file(tmp.path / "tiny-00001-of-00002.gguf");
        CHECK_FALSE(missing.parameters_exact);
        CHECK(has_problem(missing, "cannot open"));
    }
    SUBCASE("ternary tensors (TQ1_0, TQ2_0) are sized by ggml's blocks") {
        // block_tq1_0: 48 + 4 bytes of trits and a half scale per 256; block_tq2_0: 64 + 2.
        // Before, a ternary model's bytes were unknown.
        gguf_writer w;
        w.header(3, 2, 1);
        w.kv_str("general.architecture", "llama");
        w.tensor("blk.0.ffn_up.weight", {256, 4}, 34);
        w.tensor("blk.0.ffn_down.weight", {512, 2}, 35);
        const auto r = ah::read_gguf(w.out);
        REQUIRE(r.by_type.size() == 2);
        for (const auto& t : r.by_type) {
            CAPTURE(t.dtype);
            CHECK(t.bytes_known);
            CHECK(t.bytes == (t.dtype == "TQ1_0" ? 4 * 54u : 4 * 66u));
        }
    }
    SUBCASE("a tensor type per tensor: one row for the rest past 64, in linear time") {
        gguf_writer w;
        const std::uint32_t n = 5000;
        w.header(3, n, 1);
        w.kv_str("general.architecture", "llama");
        for (std::uint32_t i = 0; i < n; ++i) w.tensor("t" + std::to_string(i), {1}, 1000 + i);
        const auto r = ah::read_gguf(w.out);
        CHECK(r.by_type.size() == 65);
        CHECK(r.by_type.back().dtype == "other types");
        CHECK(r.by_type.back().tensors == n - 64);
        CHECK_FALSE(r.by_type.back().bytes_known);
        CHECK(has_problem(r, "tensors of more than 64 types"));
    }
    SUBCASE("keys and values of other lengths, and DeepSeek's latent cache only where llama.cpp keeps one") {
        struct kv_case {
            const char* arch;
            std::uint32_t heads, heads_kv, key, value, lora, key_mla; // 0: key not written
            std::uint64_t values;
            bool latent;
        };
        // llama.cpp caches the latent vector only with key_length_mla (llama_hparams::is_mla):
        // an older DeepSeek 2 file and MiniCPM3 cache each head's keys and values.
        const kv_case cases[] = {
            {"deepseek2", 16, 16, 192, 128, 512, 0, 16 * (192 + 128), false},  // V2-Lite, before the rework
            {"deepseek2", 16, 1, 576, 512, 512, 192, 512 + 64, true},          // after it
            {"minicpm3", 40, 40, 96, 64, 256, 0, 40 * (96 + 64), false},
            {"llama", 8, 8, 192, 128, 0, 0, 8 * (192 + 128), false},           // value_length alone
            {"llama", 8, 8, 128, 128, 0, 0, 2 * 8 * 128, false},
        };
        for (const auto& k : cases) {
            CAPTURE(k.arch);
            CAPTURE(k.key_mla);
            const std::string a = k.arch;
            gguf_writer w;
            const bool lora = k.lora != 0, mla = k.key_mla != 0;
            w.header(3, 0, 8 + (lora ? 2 : 0) + (mla ? 1 : 0));
            w.kv_str("general.architecture", a);
            w.kv_u32(a + ".block_count", 2);
            w.kv_u32(a + ".embedding_length", 2048);
            w.kv_u32(a + ".attention.head_count", k.heads);
            w.kv_u32(a + ".attention.head_count_kv", k.heads_kv);
            w.kv_u32(a + ".attention.key_length", k.key);
            w.kv_u32(a + ".attention.value_length", k.value);
            w.kv_u32(a + ".feed_forward_length", 4096);
            if (lora) {
                w.kv_u32(a + ".attention.kv_lora_rank", k.lora);
                w.kv_u32(a + ".rope.dimension_count", 64);
            }
            if (mla) w.kv_u32(a + ".attention.key_length_mla", k.key_mla);
            const auto r = ah::read_gguf(w.out);
            INFO(r.problems.size());
            REQUIRE(r.model);
            const auto m = r.model->spec();
            CHECK(m.kv_values_per_token() == k.values);
            CHECK(m.latent_kv_cache == k.latent);
            CHECK(m.cache_heads() == (k.latent ? 1u : k.heads_kv));
            if (mla) CHECK(m.head_dim == k.key_mla);
        }
    }
    SUBCASE("sliding windows on the layers each architecture gives them") {
        const auto with_window = [](std::string_view arch, std::uint32_t blocks) {
            gguf_writer w;
            w.header(3, 0, 5);
            const std::string a(arch);
            w.kv_str("general.architecture", a);
            w.kv_u32(a + ".block_count", blocks);
            w.kv_u32(a + ".embedding_length", 64);
            w.kv_u32(a + ".attention.head_count", 4);
            w.kv_u32(a + ".attention.sliding_window", 4096);
            return ah::read_gguf(w.out);
        };
        const auto g2 = with_window("gemma2", 42); // Gemma 2 9B: alternating
        REQUIRE(g2.model);
        CHECK(g2.model->shape.sliding_window == 4096);
        CHECK(g2.model->shape.sliding_window_layers == 21);
        const auto g3 = with_window("gemma3", 62); // Gemma 3 27B: five of every six
        REQUIRE(g3.model);
        CHECK(g3.model->shape.sliding_window_layers == 52);
        const auto oss = with_window("gpt-oss", 36);
        REQUIRE(oss.model);
        CHECK(oss.model->shape.sliding_window_layers == 18);
        // Unknown: full attention everywhere (the cache overstated, never understated).
        const auto other = with_window("somearch", 32);
        REQUIRE(other.model);
        CHECK(other.model->shape.sliding_window_layers == 0);
        CHECK(other.model->shape.sliding_window == 0);
    }
    SUBCASE("a gate fused with the up projection is a gated FFN") {
        // llama.cpp's phi3 layout: one ffn_up of twice feed_forward_length rows, no ffn_gate.
        const auto with_up = [](std::uint64_t up_rows) {
            gguf_writer w;
            w.header(3, 3, 5);
            w.kv_str("general.architecture", "phi3");
            w.kv_u32("phi3.block_count", 1);
            w.kv_u32("phi3.embedding_length", 64);
            w.kv_u32("phi3.feed_forward_length", 128);
            w.kv_u32("phi3.attention.head_count", 4);
            w.tensor("token_embd.weight", {64, 10}, 0);
            w.tensor("blk.0.ffn_up.weight", {64, up_rows}, 0);
            w.tensor("blk.0.ffn_down.weight", {128, 64}, 0);
            return ah::read_gguf(w.out);
        };
        const auto fused = with_up(256);
        REQUIRE(fused.model);
        CHECK(fused.model->shape.gated_ffn);
        const auto plain = with_up(128);
        REQUIRE(plain.model);
        CHECK_FALSE(plain.model->shape.gated_ffn);
    }
    SUBCASE("hostile tensor infos") {
        auto base = [](std::uint64_t tensors) {
            gguf_writer w;
            w.header(3, tensors, 1);
            w.kv_str("general.architecture", "llama");
            return w;
        };
        auto neg = base(1);
        neg.tensor("a", {~std::uint64_t{0}, 2}, 0);
        CHECK(has_problem(ah::read_gguf(neg.out), "negative dimension"));
        auto ovf = base(1);
        ovf.tensor("b", {1ull << 40, 1ull << 40}, 0);
        const auto r = ah::read_gguf(ovf.out);
        CHECK(has_problem(r, "overflows"));
        CHECK(!r.parameters_exact);
        auto dims = base(1);
        dims.str("c");
        dims.le<std::uint32_t>(1000000);
        CHECK(has_problem(ah::read_gguf(dims.out), "dimensions"));
        auto blocks = base(1);
        blocks.tensor("d", {33, 2}, 2); // Q4_0 rows must be whole 32-blocks
        CHECK(has_problem(ah::read_gguf(blocks.out), "whole number of blocks"));
        auto unknown = base(1);
        unknown.tensor("e", {4}, 777);
        const auto ru = ah::read_gguf(unknown.out);
        REQUIRE(ru.by_type.size() == 1);
        CHECK(!ru.by_type[0].bytes_known);
        CHECK(ru.parameters == 4);
    }
    SUBCASE("mixture of experts: active weights from the expert tensors") {
        gguf_writer w;
        w.header(3, 3, 5);
        w.kv_str("general.architecture", "qwen3moe");
        w.kv_u32("qwen3moe.block_count", 1);
        w.kv_u32("qwen3moe.expert_count", 4);
        w.kv_u32("qwen3moe.expert_used_count", 1);
        w.kv_u32("qwen3moe.expert_feed_forward_length", 8);
        w.tensor("blk.0.ffn_up_exps.weight", {16, 8, 4}, 0);
        w.tensor("blk.0.ffn_down_exps.weight", {8, 16, 4}, 0);
        w.tensor("token_embd.weight", {16, 10}, 0);
        const auto r = ah::read_gguf(w.out);
        CHECK(r.problems.empty());
        REQUIRE(r.model);
        const auto s = r.model->spec();
        CHECK(s.experts == 4);
        CHECK(s.experts_per_token == 1);
        CHECK(s.intermediate_size == 8);
        CHECK(s.parameters == 16 * 8 * 4 * 2 + 160);
        CHECK(s.active_parameters == 16 * 8 * 2 + 160);
    }
    SUBCASE("an FFN with up projections and no gates is a plain one (Falcon)") {
        CHECK(ah::read_gguf(tiny_llama()).model->spec().gated_ffn);
        gguf_writer w;
        w.header(3, 4, 4);
        w.kv_str("general.architecture", "falcon");
        w.kv_u32("falcon.block_count", 1);
        w.kv_u32("falcon.embedding_length", 16);
        w.kv_u32("falcon.attention.head_count", 2);
        w.tensor("token_embd.weight", {16, 10}, 0);
        w.tensor("blk.0.attn_qkv.weight", {16, 24}, 0);
        w.tensor("blk.0.ffn_up.weight", {16, 64}, 0);
        w.tensor("blk.0.ffn_down.weight", {64, 16}, 0);
        const auto r = ah::read_gguf(w.out);
        REQUIRE(r.model);
        const auto s = r.model->spec();
        CHECK(!s.gated_ffn);
        CHECK(s.parameters == 16 * 10 + 16 * 24 + 2 * 16 * 64); // counted from the tensors
    }
    SUBCASE("read_gguf_file reads at most max_bytes") {
        const temp_dir tmp("ai_hwaccel_plan_gguf");
        const auto& dir = tmp.path;
        const auto path = dir / "tiny.gguf";
        {
            std::ofstream f(path, std::ios::binary);
            const auto bytes = tiny_llama();
            f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
        }
        const auto whole = ah::read_gguf_file(path);
        CHECK(whole.problems.empty());
        REQUIRE(whole.model);
        CHECK(whole.model->source == path.string());
        const auto part = ah::read_gguf_file(path, 100);
        CHECK(!part.problems.empty());
        CHECK(has_problem(ah::read_gguf_file(dir / "missing.gguf"), "cannot open"));
    }
}

#if AI_HWACCEL_JSON
namespace {
std::vector<std::byte> safetensors(std::string_view json, std::uint64_t declared = ~std::uint64_t{0}) {
    gguf_writer w; // reuse the little-endian helpers
    w.le<std::uint64_t>(declared == ~std::uint64_t{0} ? json.size() : declared);
    w.raw(json.data(), json.size());
    return w.out;
}
} // namespace

TEST_CASE("read_safetensors") {
    // Hand-made header: two tensors and metadata.
    const std::string header = R"({"__metadata__":{"format":"pt"},)"
                               R"("model.embed_tokens.weight":{"dtype":"BF16","shape":[10,16],"data_offsets":[0,320]},)"
                               R"("model.norm.weight":{"dtype":"F32","shape":[16],"data_offsets":[320,384]}})";
    SUBCASE("tensors, dtypes, bytes") {
        const auto r = ah::read_safetensors(safetensors(header));
        CHECK(r.problems.empty());
        CHECK(r.format == "safetensors");
        CHECK(r.tensor_count == 2);
        CHECK(r.parameters == 176);
        CHECK(r.parameters_exact);
        REQUIRE(r.by_type.size() == 2);
        for (const auto& t : r.by_type) {
            if (t.dtype == "BF16") CHECK(t.bytes == 320);
            if (t.dtype == "F32") CHECK(t.bytes == 64);
        }
        CHECK(!r.model);
    }
    SUBCASE("with config.json (hand-made, Llama 3.1 70B's fields)") {
        const std::string cfg = R"({"_name_or_path":"meta-llama/Llama-3.1-70B","model_type":"llama",)"
                                R"("num_hidden_layers":80,"hidden_size":8192,"intermediate_size":28672,)"
                                R"("num_attention_heads":64,"num_key_value_heads":8,"vocab_size":128256,)"
                                R"("max_position_embeddings":131072,"tie_word_embeddings":false})";
        const auto r = ah::read_safetensors(safetensors(header), cfg);
        REQUIRE(r.model);
        const auto s = r.model->spec();
        CHECK(s.layers == 80);
        CHECK(s.kv_heads == 8);
        CHECK(s.family == "llama");
        CHECK(ah::find_model(s.name) != nullptr);
        // 176 parameters are not a 70B model: one file of a sharded checkpoint, whose count
        // is not the model's (before, it was taken for it).
        CHECK(r.parameters == 176);
        CHECK_FALSE(r.parameters_exact);
        CHECK(s.parameters == ah::estimate_parameters(s));
        CHECK(s.parameters > 60'000'000'000);
        CHECK(has_problem(r, "under half of the"));
    }
    SUBCASE("a sharded checkpoint read whole, with config.json") {
        // Hand-made: a 2-layer llama cut in two files, as Hugging Face shards them.
        const std::string first = R"({"model.embed_tokens.weight":{"dtype":"BF16","shape":[1000,64]},)"
                                  R"("model.layers.0.self_attn.q_proj.weight":{"dtype":"BF16","shape":[64,64]}})";
        const std::string second = R"({"model.layers.1.self_attn.q_proj.weight":{"dtype":"BF16","shape":[64,64]},)"
                                   R"("lm_head.weight":{"dtype":"BF16","shape":[1000,64]}})";
        const std::string cfg = R"({"model_type":"llama","num_hidden_layers":2,"hidden_size":64,)"
                                R"("num_attention_heads":4,"num_key_value_heads":2,"vocab_size":1000})";
        const auto a = safetensors(first), b = safetensors(second);
        const std::span<const std::byte> files[] = {a, b};
        const auto whole = ah::read_safetensors_shards(files, cfg);
        INFO(whole.problems.size());
        CHECK(whole.problems.empty());
        CHECK(whole.tensor_count == 4);
        CHECK(whole.parameters_exact);
        REQUIRE(whole.model);
        CHECK(whole.model->shape.parameters == 2 * 64000 + 2 * 4096);

        const temp_dir tmp("ai_hwaccel_plan_st_shards");
        for (int k = 0; k < 2; ++k) {
            const auto& bytes = k == 0 ? a : b;
            std::ofstream o(tmp.path / ("model-0000" + std::to_string(k + 1) + "-of-00002.safetensors"), std::ios::binary);
            o.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
        }
        std::ofstream(tmp.path / "config.json") << cfg;
        // Either file names the checkpoint: both are read.
        for (const char* name : {"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}) {
            CAPTURE(name);
            const auto r = ah::read_safetensors_file(tmp.path / name, tmp.path / "config.json");
            CHECK(r.problems.empty());
            CHECK(r.parameters_exact);
            CHECK(r.parameters == 2 * 64000 + 2 * 4096);
        }
        // A file missing: said, and the shape's estimate is used.
        std::filesystem::remove(tmp.path / "model-00002-of-00002.safetensors");
        const auto short_one = ah::read_safetensors_file(tmp.path / "model-00001-of-00002.safetensors");
        CHECK_FALSE(short_one.parameters_exact);
        CHECK(has_problem(short_one, "model-00002-of-00002.safetensors, a file of this checkpoint"));
    }
    SUBCASE("parse_hf_config: MoE, MLA, sliding windows, text_config") {
        std::vector<ah::model_file_problem> ps;
        const auto ds = ah::parse_hf_config(
            R"({"model_type":"deepseek_v3","num_hidden_layers":61,"hidden_size":7168,"moe_intermediate_size":2048,)"
            R"("intermediate_size":18432,"num_attention_heads":128,"num_key_value_heads":128,"n_routed_experts":256,)"
            R"("num_experts_per_tok":8,"kv_lora_rank":512,"qk_rope_head_dim":64,"vocab_size":129280})",
            ps);
        REQUIRE(ds);
        CHECK(ps.empty());
        CHECK(ds->shape.experts == 256);
        CHECK(ds->shape.intermediate_size == 2048);
        CHECK(ds->spec().kv_values_per_token() == 576);
        CHECK(ds->shape.latent_kv_cache);
        CHECK(ds->spec().cache_heads() == 1);

        // MiniCPM3 projects keys and values through a low rank too, but every head's are
        // cached (transformers, vLLM, llama.cpp): 40 x (96 + 64) values, not 256 + 32.
        const auto cpm = ah::parse_hf_config(
            R"({"model_type":"minicpm3","num_hidden_layers":62,"hidden_size":2560,"num_attention_heads":40,)"
            R"("num_key_value_heads":40,"kv_lora_rank":256,"q_lora_rank":768,"qk_nope_head_dim":64,)"
            R"("qk_rope_head_dim":32,"v_head_dim":64,"intermediate_size":6400,"vocab_size":73448})",
            ps);
        REQUIRE(cpm);
        CHECK(cpm->spec().kv_values_per_token() == 40 * (96 + 64));
        CHECK_FALSE(cpm->shape.latent_kv_cache);
        CHECK(cpm->spec().cache_heads() == 40);
        CHECK(cpm->shape.head_dim == 96);

        const auto g3 = ah::parse_hf_config(
            R"({"model_type":"gemma3","text_config":{"num_hidden_layers":62,"hidden_size":5376,)"
            R"("intermediate_size":21504,"num_attention_heads":32,"num_key_value_heads":16,"head_dim":128,)"
            R"("sliding_window":1024,"sliding_window_pattern":6}})",
            ps);
        REQUIRE(g3);
        CHECK(g3->shape.layers == 62);
        CHECK(g3->shape.sliding_window_layers == 52);

        const auto oss = ah::parse_hf_config(
            R"({"num_hidden_layers":4,"hidden_size":64,"num_attention_heads":4,"num_key_value_heads":2,)"
            R"("sliding_window":128,"layer_types":["sliding_attention","full_attention","sliding_attention","full_attention"],)"
            R"("num_local_experts":8,"num_experts_per_tok":2,"intermediate_size":32})",
            ps);
        REQUIRE(oss);
        CHECK(oss->shape.sliding_window_layers == 2);
        CHECK(oss->shape.active_parameters < oss->shape.parameters);

        const auto off = ah::parse_hf_config(
            R"({"num_hidden_layers":4,"hidden_size":64,"num_attention_heads":4,"sliding_window":4096,"use_sliding_window":false})", ps);
        REQUIRE(off);
        CHECK(off->shape.sliding_window == 0);
    }
    SUBCASE("parse_hf_config: the window patterns Google's configs leave out, Llama 4's chunks") {
        std::vector<ah::model_file_problem> ps;
        // google/gemma-2-9b: sliding_window and no pattern; layers alternate.
        const auto g2 = ah::parse_hf_config(
            R"({"model_type":"gemma2","num_hidden_layers":42,"hidden_size":3584,"intermediate_size":14336,)"
            R"("num_attention_heads":16,"num_key_value_heads":8,"head_dim":256,"sliding_window":4096,)"
            R"("sliding_window_size":4096,"vocab_size":256000})",
            ps);
        REQUIRE(g2);
        CHECK(g2->shape.sliding_window == 4096);
        CHECK(g2->shape.sliding_window_layers == 21);
        const auto* g2_row = ah::find_model("gemma-2-9b");
        REQUIRE(g2_row);
        CHECK(g2->shape.sliding_window_layers == g2_row->sliding_window_layers);
        // No tie_word_embeddings: Gemma's default, tied (9.24 billion parameters, not 10.16).
        CHECK(g2->shape.tied_embeddings);
        CHECK(g2->shape.parameters == g2_row->parameters);
        // google/gemma-3-27b-it's text_config: no sliding_window_pattern (transformers' default 6).
        const auto g3 = ah::parse_hf_config(
            R"({"model_type":"gemma3","text_config":{"model_type":"gemma3_text","num_hidden_layers":62,)"
            R"("hidden_size":5376,"intermediate_size":21504,"num_attention_heads":32,"num_key_value_heads":16,)"
            R"("head_dim":128,"sliding_window":1024}})",
            ps);
        REQUIRE(g3);
        CHECK(g3->shape.sliding_window_layers == 52);
        // Keys it leaves out hold Gemma3TextConfig's defaults: a 262,208-token vocabulary,
        // 131,072 positions, tied embeddings (27.0 billion parameters, not 25.6).
        CHECK(g3->shape.vocab_size == 262208);
        CHECK(g3->shape.context_length == 131072);
        CHECK(g3->shape.tied_embeddings);
        const auto* g3_row = ah::find_model("gemma-3-27b");
        REQUIRE(g3_row);
        CHECK(g3->shape.parameters == g3_row->parameters);
        // Llama 4 Scout: chunked attention (8192) on the layers with RoPE, all but every fourth.
        const auto scout = ah::parse_hf_config(
            R"({"model_type":"llama4","text_config":{"model_type":"llama4_text","num_hidden_layers":48,)"
            R"("hidden_size":5120,"intermediate_size":8192,"num_attention_heads":40,"num_key_value_heads":8,)"
            R"("head_dim":128,"attention_chunk_size":8192,"num_local_experts":16,"num_experts_per_tok":1,)"
            R"("no_rope_layers":[]}})",
            ps);
        REQUIRE(scout);
        CHECK(scout->shape.sliding_window == 8192);
        CHECK(scout->shape.sliding_window_layers == 36);
        const auto listed = ah::parse_hf_config(
            R"({"model_type":"llama4_text","num_hidden_layers":4,"hidden_size":64,"num_attention_heads":4,)"
            R"("attention_chunk_size":8192,"no_rope_layers":[1,1,0,0]})",
            ps);
        REQUIRE(listed);
        CHECK(listed->shape.sliding_window_layers == 2);
        // Mistral 7B v0.1 and Phi-3 declare a window on every layer that llama.cpp (whose
        // cache memory.hpp follows) ignores: none here, as in their catalogue rows.
        const auto mistral = ah::parse_hf_config(
            R"({"model_type":"mistral","num_hidden_layers":32,"hidden_size":4096,"num_attention_heads":32,)"
            R"("num_key_value_heads":8,"sliding_window":4096})",
            ps);
        REQUIRE(mistral);
        CHECK(mistral->shape.sliding_window_layers == 0);
        CHECK(mistral->shape.sliding_window == 0);
        // microsoft/Phi-3-mini-4k-instruct's config (its shape keys and window).
        const auto phi3 = ah::parse_hf_config(
            R"({"model_type":"phi3","num_hidden_layers":32,"hidden_size":3072,"intermediate_size":8192,)"
            R"("num_attention_heads":32,"num_key_value_heads":32,"sliding_window":2047,"vocab_size":32064,)"
            R"("max_position_embeddings":4096,"tie_word_embeddings":false})",
            ps);
        REQUIRE(phi3);
        const auto* phi3_row = ah::find_model("phi-3-mini");
        REQUIRE(phi3_row != nullptr);
        CHECK(phi3->shape.sliding_window_layers == 0);
        CHECK(ah::kv_cache_bytes(phi3->shape, {4096}) == ah::kv_cache_bytes(*phi3_row, {4096}));
        // Cohere 2: every fourth layer global where the config gives no pattern.
        const auto cohere2 = ah::parse_hf_config(
            R"({"model_type":"cohere2","num_hidden_layers":32,"hidden_size":4096,"num_attention_heads":32,)"
            R"("num_key_value_heads":8,"sliding_window":4096})",
            ps);
        REQUIRE(cohere2);
        CHECK(cohere2->shape.sliding_window_layers == 24);
    }
    SUBCASE("parse_hf_config: Falcon and DBRX spell their shapes otherwise") {
        // Hand-made, after the keys of tiiuae/falcon-7b, falcon-40b (both the transformers
        // and the older RefinedWeb spellings) and databricks/dbrx-instruct.
        std::vector<ah::model_file_problem> ps;
        const auto f7 = ah::parse_hf_config(
            R"({"model_type":"falcon","num_hidden_layers":32,"hidden_size":4544,"num_attention_heads":71,)"
            R"("multi_query":true,"new_decoder_architecture":false,"vocab_size":65024,"tie_word_embeddings":true})",
            ps);
        REQUIRE(f7);
        CHECK(ps.empty());
        CHECK(f7->shape.kv_heads == 1);
        CHECK(f7->shape.intermediate_size == 4 * 4544);
        CHECK(!f7->shape.gated_ffn);
        // Two FFN matrices per block, not three: the catalogue's count.
        CHECK(f7->shape.parameters == ah::find_model("falcon-7b")->parameters);

        const auto f40 = ah::parse_hf_config(
            R"({"model_type":"RefinedWeb","n_layer":60,"hidden_size":8192,"n_head":128,"n_head_kv":8,)"
            R"("multi_query":true,"new_decoder_architecture":true,"vocab_size":65024})",
            ps);
        REQUIRE(f40);
        CHECK(f40->shape.layers == 60);
        CHECK(f40->shape.kv_heads == 8);
        CHECK(f40->shape.intermediate_size == 4 * 8192);
        CHECK(!f40->shape.gated_ffn);

        const auto dbrx = ah::parse_hf_config(
            R"({"model_type":"dbrx","d_model":6144,"n_heads":48,"n_layers":40,"max_seq_len":32768,"vocab_size":100352,)"
            R"("attn_config":{"kv_n_heads":8,"clip_qkv":8,"rope_theta":500000},)"
            R"("ffn_config":{"ffn_hidden_size":10752,"moe_num_experts":16,"moe_top_k":4}})",
            ps);
        REQUIRE(dbrx);
        CHECK(ps.empty());
        CHECK(dbrx->shape.layers == 40);
        CHECK(dbrx->shape.attention_heads == 48);
        CHECK(dbrx->shape.kv_heads == 8);
        CHECK(dbrx->shape.context_length == 32768);
        CHECK(dbrx->shape.experts == 16);
        CHECK(dbrx->shape.experts_per_token == 4);
        CHECK(dbrx->shape.intermediate_size == 10752);
        CHECK(dbrx->shape.parameters == ah::find_model("dbrx")->parameters);
        CHECK(dbrx->shape.gated_ffn);

        // GPT-2 small (openai-community/gpt2's keys; n_inner null: four times n_embd): OpenAI's
        // 124M, within 1 % (position embeddings and biases are not counted); a gated FFN of
        // that width would give 152M.
        const auto gpt2 = ah::parse_hf_config(
            R"({"model_type":"gpt2","n_layer":12,"n_embd":768,"n_head":12,"n_inner":null,"n_positions":1024,)"
            R"("vocab_size":50257})",
            ps);
        REQUIRE(gpt2);
        CHECK(gpt2->shape.tied_embeddings); // GPT-2's default: the config does not say
        CHECK(!gpt2->shape.gated_ffn);
        CHECK(gpt2->shape.intermediate_size == 3072);
        CHECK(gpt2->shape.context_length == 1024);
        CHECK(std::abs(static_cast<double>(gpt2->shape.parameters) / 124e6 - 1) < 0.01);

        // A nested object of the wrong type is not read, and says nothing.
        const auto odd = ah::parse_hf_config(R"({"n_layers":2,"d_model":64,"n_heads":4,"ffn_config":[1],"attn_config":3})", ps);
        REQUIRE(odd);
        CHECK(odd->shape.kv_heads == 4);
        CHECK(odd->shape.experts == 0);
    }
    SUBCASE("hostile config.json") {
        std::vector<ah::model_file_problem> ps;
        CHECK(!ah::parse_hf_config("not json", ps));
        CHECK(!ah::parse_hf_config("[1,2]", ps));
        CHECK(!ah::parse_hf_config(std::string(100000, '[') + std::string(100000, ']'), ps));
        ps.clear();
        const auto m = ah::parse_hf_config(
            R"({"num_hidden_layers":-3,"hidden_size":"big","num_attention_heads":1e30,"num_key_value_heads":3,"vocab_size":99999999999})", ps);
        REQUIRE(m);
        CHECK(m->shape.layers == 0);
        CHECK(m->shape.hidden_size == 0);
        CHECK(m->shape.vocab_size == 0);
        CHECK(ps.size() >= 4);
    }
    SUBCASE("quantized checkpoints: packed elements are not parameters") {
        // gpt-oss's MXFP4 experts (U8 *_blocks, two 4-bit weights a byte, with U8 scales) and
        // a GPTQ layer (I32 qweight, eight a word): the count falls back on config.json's
        // shape, and says why (before, 63e9 elements of gpt-oss-120b passed for exact).
        const std::string oss = R"({"model.layers.0.mlp.experts.gate_up_proj_blocks":{"dtype":"U8","shape":[128,5760,90,16]},)"
                                R"("model.layers.0.mlp.experts.gate_up_proj_scales":{"dtype":"U8","shape":[128,5760,90]},)"
                                R"("model.embed_tokens.weight":{"dtype":"BF16","shape":[201088,2880]}})";
        const std::string cfg = R"({"model_type":"gpt_oss","num_hidden_layers":36,"hidden_size":2880,"intermediate_size":2880,)"
                                R"("num_attention_heads":64,"num_key_value_heads":8,"head_dim":64,"vocab_size":201088,)"
                                R"("num_local_experts":128,"num_experts_per_tok":4})";
        const auto r = ah::read_safetensors(safetensors(oss), cfg);
        CHECK_FALSE(r.parameters_exact);
        CHECK(has_problem(r, "not the parameter count"));
        REQUIRE(r.model);
        CHECK(r.model->shape.parameters == ah::estimate_parameters(r.model->spec()));
        CHECK(r.model->shape.parameters > 100'000'000'000);
        const auto gptq = ah::read_safetensors(
            safetensors(R"({"model.layers.0.mlp.up_proj.qweight":{"dtype":"I32","shape":[512,14336]},)"
                        R"("model.layers.0.mlp.up_proj.scales":{"dtype":"F16","shape":[32,14336]}})"));
        CHECK_FALSE(gptq.parameters_exact);
        // FP8 weights are one a byte: counted exactly, a new dtype name included.
        const auto fp8 = ah::read_safetensors(safetensors(R"({"w":{"dtype":"F8_E4M3FNUZ","shape":[4],"data_offsets":[0,4]}})"));
        CHECK(fp8.parameters_exact);
        CHECK(fp8.problems.empty());
        REQUIRE(fp8.by_type.size() == 1);
        CHECK(fp8.by_type[0].bytes_known);
        CHECK(fp8.by_type[0].bytes == 4);
    }
    SUBCASE("hostile headers") {
        // More experts a token than experts, and tensors whose count nears 2^64: the
        // active count stays a count no larger than the total (before, an active share
        // over 1 scaled it past 2^64, undefined behaviour).
        const auto odd_moe = ah::read_safetensors(
            safetensors(R"({"a":{"dtype":"F16","shape":[4294967296,2147483648]},"b":{"dtype":"F16","shape":[4294967296,2147483648]}})"),
            R"({"num_hidden_layers":1,"hidden_size":1,"num_attention_heads":1,"num_local_experts":1,)"
            R"("num_experts_per_tok":1000,"intermediate_size":1000})");
        REQUIRE(odd_moe.model);
        CHECK(has_problem(odd_moe, "exceeds the expert count"));
        CHECK(odd_moe.model->shape.active_parameters <= odd_moe.model->shape.parameters);
        CHECK(has_problem(ah::read_safetensors({}), "no header length"));
        CHECK(has_problem(ah::read_safetensors(safetensors("{}", 1ull << 40)), "exceeds the cap"));
        CHECK(has_problem(ah::read_safetensors(safetensors("{}", 1000)), "truncated"));
        CHECK(has_problem(ah::read_safetensors(safetensors("{\"a\":")), "not a JSON object"));
        CHECK(has_problem(ah::read_safetensors(safetensors("[]")), "not a JSON object"));
        CHECK(has_problem(ah::read_safetensors(safetensors(std::string(5000, '['))), "nested too deep"));
        const auto r = ah::read_safetensors(safetensors(
            R"({"a":{"dtype":"F16","shape":[-1,4]},"b":{"dtype":"F16","shape":[4294967296,4294967296,4294967296]},)"
            R"("c":7,"d":{"dtype":"F16"},"e":{"dtype":"F16","shape":[[1],[2]]},"f":{"dtype":"F16","shape":[2,2],"data_offsets":[10,0]},)"
            R"("g":{"dtype":"X9","shape":[3]},"h":{"dtype":"F16","shape":[2],"data_offsets":[0,99]}})"));
        CHECK(has_problem(r, "tensor a"));
        CHECK(has_problem(r, "overflows"));
        CHECK(has_problem(r, "tensor c is not an object"));
        CHECK(has_problem(r, "tensor d"));
        CHECK(has_problem(r, "tensor e"));
        CHECK(has_problem(r, "tensor h: data_offsets disagree"));
        CHECK(!r.parameters_exact);
        CHECK(r.parameters == 4 + 3 + 2);
        // 2^61 F64 elements take 2^64 bytes: saturated, not wrapped to 0.
        const auto huge = ah::read_safetensors(safetensors(R"({"x":{"dtype":"F64","shape":[2305843009213693952]}})"));
        REQUIRE(huge.by_type.size() == 1);
        CHECK(huge.by_type[0].bytes == ~std::uint64_t{0});
        // Every truncation of a good header is refused cleanly.
        const auto full = safetensors(header);
        for (std::size_t n = 0; n + 1 < full.size(); ++n) {
            const std::vector<std::byte> cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
            CHECK(!ah::read_safetensors(cut).problems.empty());
        }
    }
    SUBCASE("read_safetensors_file") {
        const temp_dir tmp("ai_hwaccel_plan_st");
        const auto& dir = tmp.path;
        {
            const auto bytes = safetensors(header);
            std::ofstream f(dir / "model.safetensors", std::ios::binary);
            f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
            std::ofstream c(dir / "config.json");
            c << R"({"model_type":"qwen2","num_hidden_layers":24,"hidden_size":896,"num_attention_heads":14,"num_key_value_heads":2})";
        }
        const auto r = ah::read_safetensors_file(dir / "model.safetensors", dir / "config.json");
        CHECK(r.problems.size() == 1); // 176 parameters are not this shape's model
        REQUIRE(r.model);
        CHECK(r.model->shape.layers == 24);
        CHECK(r.parameters == 176);
        CHECK(has_problem(ah::read_safetensors_file(dir / "none.safetensors"), "cannot open"));
    }
}
#endif

TEST_CASE("the GGUF header benchmarks/llama_cpp/synthetic_gguf.py writes is the model llama.cpp timed") {
    // The ctest synthetic_gguf_read runs this case on the header the script writes for
    // Llama 3 8B in Q4_K_M (its fixture synthetic_gguf_write makes it); elsewhere it has no
    // file to read. The figures are llama-bench's for the whole file on the H200
    // (tests/calibration/h200/llama-bench.jsonl: model_n_params, model_size), so the
    // reader, the script and llama.cpp agree on what was measured.
    const char* path = std::getenv("AI_HWACCEL_SYNTHETIC_GGUF");
    if (!path) return;
    const auto r = ah::read_gguf_file(path);
    CHECK(r.problems.empty());
    CHECK(r.version == 3);
    CHECK(r.tensors_read == 291);
    REQUIRE(r.parameters_exact);
    CHECK(r.parameters == 8'030'261'248u);
    std::uint64_t bytes = 0;
    for (const auto& t : r.by_type) bytes += t.bytes;
    CHECK(bytes == 4'912'898'048u);
    REQUIRE(r.quant);
    CHECK(*r.quant == ah::quant_format::q4_k_m);
    REQUIRE(r.model);
    const auto s = r.model->spec();
    CHECK(s.layers == 32);
    CHECK(s.hidden_size == 4096);
    CHECK(s.intermediate_size == 14336);
    CHECK(s.attention_heads == 32);
    CHECK(s.kv_heads == 8);
    CHECK(s.vocab_size == 128256);
    // And the catalogue's Llama 3 8B sized in Q4_K_M comes within 1 % of those bytes.
    const auto* llama = ah::find_model("llama-3-8b");
    REQUIRE(llama != nullptr);
    CHECK(std::fabs(static_cast<double>(ah::weight_bytes(*llama, ah::quant_format::q4_k_m)) / 4'912'898'048.0 - 1) <
          0.01);
}
