#include "ai_hwaccel/plan/cost.hpp"
#include "ai_hwaccel/plan/models.hpp"

#include <doctest/doctest.h>

#include <string_view>

namespace ah = ai_hwaccel;

// Compile-time: the catalogue's invariants, and a whole plan in a constant expression.
static_assert(ah::detail::instance_rows_are_sane());
static_assert(ah::detail::instance_names_are_unique());
static_assert(ah::instance_catalogue.size() >= 10);
static_assert(ah::parse_instance_provider("AWS") == ah::instance_provider::aws);
static_assert(!ah::parse_instance_provider("ibm").has_value());
static_assert(ah::detail::is_iso_date("2024-08-27"));
static_assert(!ah::detail::is_iso_date("2024-13-01"));
static_assert(!ah::detail::is_iso_date("27/08/2024"));
static_assert(ah::cheapest_instance(*ah::find_model("llama-3.1-8b"), ah::quant_format::fp16).found());

namespace {
constexpr bool every_row_resolves() {
    for (const auto& r : ah::instance_catalogue)
        if (ah::detail::device_index(r.accelerator) == ah::detail::no_device || !(r.price_per_hour_usd > 0))
            return false;
    return true;
}
static_assert(every_row_resolves());

const ah::model_spec& model(std::string_view id) {
    const auto* m = ah::find_model(id);
    REQUIRE(m != nullptr);
    return *m;
}
} // namespace

TEST_CASE("instance_catalogue") {
    bool providers[ah::cloud_provider_count] = {};
    for (const auto& r : ah::instance_catalogue) {
        CAPTURE(r.name);
        providers[static_cast<std::size_t>(r.provider)] = true;
        const auto* d = r.device();
        REQUIRE(d != nullptr);
        CHECK(d->name == r.accelerator);
        CHECK(r.price_per_hour_usd > 0);
        CHECK((ah::detail::is_iso_date(r.price_date) || ah::detail::is_commit(r.price_snapshot)));
        CHECK(r.price_source.starts_with("https://"));
        CHECK(r.host_memory_bytes() > 0);
        CHECK(ah::find_instance(r.name) == &r);
    }
    CHECK(providers[static_cast<std::size_t>(ah::instance_provider::aws)]);
    CHECK(providers[static_cast<std::size_t>(ah::instance_provider::gcp)]);
    CHECK(providers[static_cast<std::size_t>(ah::instance_provider::azure)]);
    // GiB and GB stay apart: Google's 85 GB is not 85 GiB.
    CHECK(ah::find_instance("a2-highgpu-1g")->host_memory_bytes() == 85'000'000'000ull);
    CHECK(ah::find_instance("p5.48xlarge")->host_memory_bytes() == 2048ull << 30);
}

TEST_CASE("estimate_instance_cost") {
    const auto& m8 = model("llama-3.1-8b");
    const auto& p5 = *ah::find_instance("p5.48xlarge");
    const auto e = ah::estimate_instance_cost(p5, m8, ah::quant_format::fp16);
    CHECK(e.fits);
    CHECK(e.decode_tokens_per_second > 0);
    // The stated formula, recomputed.
    CHECK(e.usd_per_million_output_tokens ==
          doctest::Approx(p5.price_per_hour_usd / (e.decode_tokens_per_second * 3600.0) * 1e6));
    // Eight NVSwitch-joined devices decode faster than one of them would, and less than
    // eight times faster: the fixed per-layer cost of each token does not shrink with N.
    const auto one = ah::estimate_throughput(ah::profile_from_spec(*p5.device()), m8, ah::quant_format::fp16);
    CHECK(e.decode_tokens_per_second > 1.2 * one.decode_tokens_per_second);
    CHECK(e.decode_tokens_per_second < 8 * one.decode_tokens_per_second);

    // A single 24 GiB L4 cannot hold a 70B model at fp16.
    const auto l4 = ah::estimate_instance_cost(*ah::find_instance("g6.2xlarge"), model("llama-3.1-70b"),
                                               ah::quant_format::fp16);
    CHECK_FALSE(l4.fits);
    CHECK(l4.required_bytes > l4.available_bytes);

    // GGUF block formats are not offered on Trainium (the Neuron stack does not load GGUF).
    const auto trn = ah::estimate_instance_cost(*ah::find_instance("trn1.32xlarge"), m8, ah::quant_format::q4_k_m);
    CHECK_FALSE(trn.format_supported);
    CHECK_FALSE(trn.fits);
    ah::cost_assumptions any_format;
    any_format.gguf_on_gpus_only = false;
    CHECK(ah::estimate_instance_cost(*ah::find_instance("trn1.32xlarge"), m8, ah::quant_format::q4_k_m, {}, any_format)
              .fits);
}

TEST_CASE("cheapest_instance") {
    SUBCASE("Llama 3.1 70B at Q4_K_M") {
        const auto& m = model("llama-3.1-70b");
        const auto best = ah::cheapest_instance(m, ah::quant_format::q4_k_m);
        REQUIRE(best.found());
        CAPTURE(best.instance->name);
        // Properties, not a name: it holds the model, it is a GPU instance (GGUF), and no
        // other row that holds it is cheaper per hour.
        CHECK(best.required_bytes <= best.available_bytes);
        CHECK(best.required_bytes > 40ull * 1'000'000'000); // ~42 GB of weights alone
        CHECK(ah::family_of(best.instance->device()->kind) == ah::family::gpu);
        CHECK(best.usd_per_million_output_tokens > 0);
        for (const auto& r : ah::instance_catalogue) {
            const auto e = ah::estimate_instance_cost(r, m, ah::quant_format::q4_k_m);
            if (e.fits) CHECK(best.price_per_hour_usd <= r.price_per_hour_usd);
        }
        // A model this size needs more than one 24 GiB device.
        CHECK(best.available_bytes > 24ull << 30);
    }
    SUBCASE("Llama 3.1 8B at F16") {
        const auto& m = model("llama-3.1-8b");
        const auto best = ah::cheapest_instance(m, ah::quant_format::fp16);
        REQUIRE(best.found());
        CAPTURE(best.instance->name);
        CHECK(best.required_bytes > 16ull * 1'000'000'000); // 8.03e9 weights x 2 bytes
        CHECK(best.required_bytes <= best.available_bytes);
        // The cheapest rows that hold 16 GB are single-device instances.
        CHECK(best.instance->accelerator_count == 1);
        CHECK(best.price_per_hour_usd < 5);
        for (const auto& r : ah::instance_catalogue) {
            const auto e = ah::estimate_instance_cost(r, m, ah::quant_format::fp16);
            if (e.fits) CHECK(best.price_per_hour_usd <= r.price_per_hour_usd);
        }
    }
    SUBCASE("per million tokens") {
        const auto& m = model("llama-3.1-8b");
        const auto best = ah::cheapest_instance(m, ah::quant_format::fp16, {}, ah::cost_objective::price_per_million_tokens);
        REQUIRE(best.found());
        for (const auto& r : ah::instance_catalogue) {
            const auto e = ah::estimate_instance_cost(r, m, ah::quant_format::fp16);
            if (e.fits && e.usd_per_million_output_tokens > 0)
                CHECK(best.usd_per_million_output_tokens <= e.usd_per_million_output_tokens);
        }
    }
    SUBCASE("a model that fits nowhere") {
        // Llama 3.1 405B at FP32 (about 1.6 TB of weights) with four 128k-token sequences
        // (about 0.27 TB of f16 KV cache) exceeds every instance's accelerators; the
        // largest, trn2.48xlarge, has 16 x 96 GiB = 1.65 TB.
        ah::inference_shape shape;
        shape.context = 131072;
        shape.batch = 4;
        const auto none = ah::cheapest_instance(model("llama-3.1-405b"), ah::quant_format::fp32, shape);
        CHECK_FALSE(none.found());
        CHECK(none.instance == nullptr);
        CHECK(none.required_bytes > 1'800'000'000'000ull);
        for (const auto& r : ah::instance_catalogue)
            CHECK_FALSE(ah::estimate_instance_cost(r, model("llama-3.1-405b"), ah::quant_format::fp32, shape).fits);
        CHECK(none.usd_per_million_output_tokens == 0);
    }
    SUBCASE("an empty table") {
        const auto none = ah::cheapest_instance(model("llama-3.1-8b"), ah::quant_format::fp16, {},
                                                ah::cost_objective::price_per_hour, {}, {});
        CHECK_FALSE(none.found());
    }
}
