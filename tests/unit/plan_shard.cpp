#include "ai_hwaccel/plan/shard.hpp"

#include "ai_hwaccel/core/catalogue.hpp"
#include "ai_hwaccel/plan/models.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <array>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <ranges>
#include <span>
#include <string>
#include <vector>

namespace ah = ai_hwaccel;
using ah::quant_format;

namespace {

ah::accelerator_profile card(std::string_view name, std::uint32_t index) {
    const auto* spec = ah::find_device(name);
    REQUIRE(spec != nullptr);
    return ah::profile_from_spec(*spec, index);
}
std::vector<ah::accelerator_profile> cards(std::string_view name, std::uint32_t count, std::uint32_t first = 0) {
    std::vector<ah::accelerator_profile> out;
    for (std::uint32_t i = 0; i < count; ++i) out.push_back(card(name, first + i));
    return out;
}
const ah::model_spec& model(std::string_view id) {
    const auto* m = ah::find_model(id);
    REQUIRE(m != nullptr);
    return *m;
}
// Hand-made interconnect entries, as detection would report them.
ah::interconnect link(ah::interconnect_kind kind, ah::link_scope scope, double gbps,
                      std::vector<std::uint32_t> devices) {
    ah::interconnect l;
    l.kind = kind;
    l.scope = scope;
    l.name = std::string(ah::to_string(kind));
    l.bandwidth_gbps = {gbps, ah::origin::user};
    l.devices = std::move(devices);
    return l;
}
std::vector<std::uint32_t> iota(std::uint32_t first, std::uint32_t count) {
    std::vector<std::uint32_t> v;
    for (std::uint32_t i = 0; i < count; ++i) v.push_back(first + i);
    return v;
}

// Every replica's stages cover [0, layers) exactly once, in order, each device fits, and
// a tensor-parallel stage's devices share one range.
void check_coverage(const ah::shard_plan& p, std::uint32_t layers) {
    REQUIRE(p.fits);
    for (std::uint32_t r = 0; r < p.replicas; ++r) {
        std::uint32_t next = 0;
        int stage = -1;
        std::uint32_t stage_first = 0;
        for (const auto& d : p.devices) {
            if (d.replica != r) continue;
            CHECK(d.fits);
            CHECK(d.total_bytes() <= d.usable_bytes);
            if (static_cast<int>(d.stage) != stage) {
                CHECK(static_cast<int>(d.stage) == stage + 1);
                stage = d.stage;
                stage_first = d.first_layer;
                CHECK(d.first_layer == next);
                next = d.last_layer;
            } else {
                CHECK(d.first_layer == stage_first);
                CHECK(d.last_layer == next);
            }
        }
        CHECK(next == layers);
    }
}

std::uint32_t layers_on(const ah::shard_plan& p, std::uint16_t device) {
    for (const auto& d : p.devices)
        if (d.device == device) return d.layers();
    return 0;
}

} // namespace

// ---- Compile time: a registry known to the build, a catalogue model, a plan.
namespace {
constexpr std::array<ah::accelerator_profile, 2> two_4090s{
    ah::profile_from_spec(*ah::find_device("RTX 4090"), 0),
    ah::profile_from_spec(*ah::find_device("RTX 4090"), 1),
};
constexpr auto compile_time_plan = ah::plan_sharding(std::span<const ah::accelerator_profile>(two_4090s), {},
                                                     *ah::find_model("llama-3.1-8b"), quant_format::q4_k_m);
constexpr auto compile_time_split =
    ah::plan_sharding(std::span<const ah::accelerator_profile>(two_4090s), {}, *ah::find_model("llama-3.1-70b"),
                      quant_format::q4_k_m);
constexpr auto compile_time_quant =
    ah::suggest_quantization(std::span<const ah::accelerator_profile>(two_4090s), *ah::find_model("llama-3.1-8b"));
} // namespace
static_assert(compile_time_plan.fits);
static_assert(compile_time_plan.strategy == ah::shard_strategy::single_device);
static_assert(compile_time_plan.replicas == 2); // one copy per card
static_assert(compile_time_plan.devices[0].last_layer == 32);
static_assert(compile_time_plan.decode_tokens_per_second > 0);
static_assert(compile_time_split.fits);
static_assert(compile_time_split.strategy == ah::shard_strategy::pipeline_parallel);
static_assert(compile_time_split.devices[0].last_layer == compile_time_split.devices[1].first_layer);
static_assert(compile_time_split.devices[1].last_layer == 80);
static_assert(compile_time_quant.fits && compile_time_quant.format == quant_format::bf16);
namespace {
constexpr auto compile_time_best = ah::plan_best_format(std::span<const ah::accelerator_profile>(two_4090s), {},
                                                        *ah::find_model("llama-3.1-8b"));
} // namespace
static_assert(compile_time_best.choice.fits && compile_time_best.choice.format == compile_time_quant.format);
static_assert(compile_time_best.plan.fits && compile_time_best.plan.quant == compile_time_best.choice.format);
// A plan's device list reads like a container: a random-access range of its filled slots,
// also when built in a constant expression.
using device_list = decltype(ah::shard_plan::devices);
static_assert(std::random_access_iterator<device_list::iterator>);
static_assert(std::ranges::random_access_range<const device_list>);
static_assert(std::ranges::distance(compile_time_split.devices) == 2);
static_assert(compile_time_split.devices.end()[-1].output_head && !compile_time_split.devices.begin()->output_head);
static_assert(ah::support_for(ah::profile_from_spec(*ah::find_device("H100 SXM")), quant_format::fp8_e4m3) ==
              ah::format_support::native);
static_assert(ah::support_for(ah::profile_from_spec(*ah::find_device("T4")), quant_format::bf16) ==
              ah::format_support::none);

TEST_CASE("plan_sharding: 70B has 80 layers and every one is assigned once") {
    const auto& m = model("llama-3.1-70b");
    REQUIRE(m.layers == 80);
    const auto gpus = cards("H100 SXM", 8);
    // bf16 needs two 80 GiB cards; over PCIe only, a two-stage pipeline, four replicas.
    const auto p = ah::plan_sharding(gpus, {}, m, quant_format::bf16);
    CHECK(p.strategy == ah::shard_strategy::pipeline_parallel);
    CHECK(p.stages == 2);
    CHECK(p.replicas == 4);
    CHECK(p.devices.size() == 8);
    check_coverage(p, 80);
    // One replica spread over all eight: eight stages, still 80 layers.
    ah::plan_options spread;
    spread.spread = true;
    const auto s = ah::plan_sharding(gpus, {}, m, quant_format::bf16, {}, spread);
    CHECK(s.replicas == 1);
    CHECK(s.stages == 8);
    check_coverage(s, 80);
    for (const auto& d : s.devices) CHECK(d.layers() == 10); // equal cards, equal ranges
    // The embedding is on the first stage, the head on the last.
    CHECK(s.devices[0].embeddings);
    CHECK(!s.devices[0].output_head);
    CHECK(s.devices[7].output_head);
    CHECK(s.devices[0].weights_bytes > s.devices[3].weights_bytes);
}

TEST_CASE("plan_sharding: unequal devices get unequal, proportional layer counts") {
    // 24 GiB + 12 GiB (hand-picked pair); Llama 2 13B in bf16 (26 GB) needs both.
    std::vector<ah::accelerator_profile> gpus{card("RTX 3060", 0), card("RTX 4090", 1)};
    REQUIRE(gpus[0].memory_bytes.value == 12 * ah::units::gib);
    REQUIRE(gpus[1].memory_bytes.value == 24564 * ah::units::mib); // what its driver reports
    const auto p = ah::plan_sharding(gpus, {}, model("llama-2-13b"), quant_format::bf16);
    REQUIRE(p.fits);
    CHECK(p.strategy == ah::shard_strategy::pipeline_parallel);
    check_coverage(p, 40);
    const double big = layers_on(p, 1), small = layers_on(p, 0);
    CAPTURE(big);
    CAPTURE(small);
    CHECK(big + small == 40);
    CHECK(big / small > 1.7);
    CHECK(big / small < 2.5);
    // Both cards end up about equally full.
    for (const auto& d : p.devices) {
        const double fill = static_cast<double>(d.total_bytes()) / static_cast<double>(d.usable_bytes);
        CAPTURE(fill);
        CHECK(fill > 0.85);
        CHECK(fill <= 1.0);
    }
}

TEST_CASE("plan_sharding: a pipeline takes the devices that hold most layers, the first of equals first") {
    // No links: every card is a unit of its own. The search ranks the units by the layers
    // each holds, one by one for the first few and the rest at once, so a pipeline of
    // more than a few stages reads both. Each replica's devices must be the first ones of
    // the unused cards ordered by room (most first, position order among equals).
    std::vector<ah::accelerator_profile> gpus;
    const char* names[] = {"RTX 3060", "RTX 4090", "RTX 3090"};
    for (std::uint32_t i = 0; i < 24; ++i) gpus.push_back(card(names[i % 3], i));
    // The 4090s and 3090s alike (their drivers report 24 564 and 24 576 MiB, 12 MiB that
    // change no layer count but would order them by bytes here).
    for (auto& g : gpus)
        if (g.name.view().ends_with("3090")) g.memory_bytes = card("RTX 4090", 0).memory_bytes;
    for (const auto q : {quant_format::bf16, quant_format::fp32, quant_format::q8_0}) {
        CAPTURE(ah::to_string(q));
        const auto p = ah::plan_sharding(gpus, {}, model("llama-3.1-70b"), q);
        REQUIRE(p.fits);
        CHECK(p.strategy == ah::shard_strategy::pipeline_parallel);
        std::vector<bool> used(gpus.size(), false);
        std::size_t at = 0;
        for (std::uint32_t r = 0; r < p.replicas; ++r) {
            CAPTURE(r);
            std::vector<std::size_t> mine;
            while (at < p.devices.size() && p.devices[at].replica == r) mine.push_back(p.devices[at++].device);
            std::vector<std::size_t> order; // the unused cards by room, then position
            for (std::size_t i = 0; i < gpus.size(); ++i)
                if (!used[i]) order.push_back(i);
            std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
                return ah::usable_memory(gpus[a]) > ah::usable_memory(gpus[b]);
            });
            order.resize(mine.size());
            std::sort(order.begin(), order.end());
            CHECK(mine == order); // stages follow position order
            for (const auto i : mine) used[i] = true;
        }
        if (q == quant_format::fp32) CHECK(p.stages > 8); // past the units ranked one by one
    }
}

TEST_CASE("support_for: FP8 and NVFP4 weights on GPUs without their units are dequantized") {
    // vLLM: "FP8 models will run on compute capability >= 7.5 (Turing) as weight-only W8A16,
    // utilizing FP8 Marlin"; NVFP4 likewise as W4A16. Before, an A100 could not run FP8.
    CHECK(ah::support_for(card("A100 SXM4 80GB", 0), quant_format::fp8_e4m3) == ah::format_support::dequantized);
    CHECK(ah::support_for(card("RTX 3090", 0), quant_format::fp8_e4m3) == ah::format_support::dequantized);
    CHECK(ah::support_for(card("H100 SXM", 0), quant_format::fp8_e4m3) == ah::format_support::native);
    CHECK(ah::support_for(card("H100 SXM", 0), quant_format::nvfp4) == ah::format_support::dequantized);
    CHECK(ah::support_for(card("B200", 0), quant_format::nvfp4) == ah::format_support::native);
    // Not on a TPU, which has neither the units nor those kernels.
    CHECK(ah::support_for(card("TPU v5p", 0), quant_format::fp8_e4m3) == ah::format_support::none);
    // Prefill: natively where the device multiplies in fp8, else in fp16 at the dequantized
    // efficiency.
    const ah::throughput_constants c;
    const auto h100 = card("H100 SXM", 0), a100 = card("A100 SXM4 80GB", 0);
    CHECK(ah::prefill_compute_rate(h100, quant_format::fp8_e4m3).type == ah::dtype::fp8);
    CHECK(ah::detail::effective_flops(h100, quant_format::fp8_e4m3, c) ==
          doctest::Approx(h100.peak.fp8 * 1e12 * c.prefill_compute_efficiency));
    CHECK(ah::detail::effective_flops(a100, quant_format::fp8_e4m3, c) ==
          doctest::Approx(a100.peak.fp16 * 1e12 * c.prefill_compute_efficiency * c.prefill_dequantized_factor));
}

TEST_CASE("plan_sharding: a model that fits nowhere says so") {
    const auto gpus = cards("RTX 4090", 2);
    const auto& m = model("llama-3.1-405b");
    const auto p = ah::plan_sharding(gpus, {}, m, quant_format::bf16);
    CHECK(!p.fits);
    CHECK(p.outcome == ah::plan_outcome::too_large);
    CHECK(p.strategy == ah::shard_strategy::none);
    CHECK(p.devices.empty());
    CHECK(p.replicas == 0);
    CHECK(p.usable_bytes < p.memory.total_bytes());
    CHECK(ah::describe(p.outcome).find("does not fit") != std::string_view::npos);

    // A big CPU does not rescue it unless asked for.
    ah::accelerator_profile cpu;
    cpu.kind = ah::device_kind::cpu;
    cpu.name = "hand-made host CPU";
    cpu.memory_bytes = {1 * ah::units::tib, ah::origin::user};
    cpu.memory_bandwidth_gbps = {400, ah::origin::user};
    auto with_cpu = gpus;
    with_cpu.push_back(cpu);
    const auto q = ah::plan_sharding(with_cpu, {}, m, quant_format::bf16);
    CHECK(!q.fits);
    CHECK(q.cpu_excluded);
    CHECK(q.kind == ah::device_kind::cuda_gpu);
    ah::plan_options allow;
    allow.allow_cpu = true;
    const auto r = ah::plan_sharding(with_cpu, {}, m, quant_format::bf16, {}, allow);
    CHECK(r.fits);
    CHECK(r.kind == ah::device_kind::cpu);
    CHECK(r.strategy == ah::shard_strategy::single_device);

    // No devices at all, and a format no device runs.
    CHECK(ah::plan_sharding({}, {}, m, quant_format::bf16).outcome == ah::plan_outcome::no_devices);
    // NVFP4 weights: dequantized on GPUs without FP4 units (vLLM's Marlin, W4A16), not
    // run on TPUs, which have neither FP4 units nor those kernels.
    CHECK(ah::plan_sharding(gpus, {}, model("llama-3.1-8b"), quant_format::nvfp4).fits);
    const auto nv = ah::plan_sharding(cards("TPU v5p", 2), {}, model("llama-3.1-8b"), quant_format::nvfp4);
    CHECK(!nv.fits);
    CHECK(nv.outcome == ah::plan_outcome::unsupported_format);
    // A model with no layers.
    CHECK(ah::plan_sharding(gpus, {}, ah::model_spec{}, quant_format::bf16).outcome == ah::plan_outcome::bad_model);
}

TEST_CASE("plan_sharding: NVSwitch gives tensor parallel, PCIe gives pipeline") {
    const auto gpus = cards("H100 SXM", 8);
    const std::vector<ah::interconnect> nvswitch{
        link(ah::interconnect_kind::nvswitch, ah::link_scope::intra_node, 900, iota(0, 8))};
    const auto& big = model("llama-3.1-405b"); // fp8: ~380 GiB, needs all eight
    const auto tp = ah::plan_sharding(gpus, nvswitch, big, quant_format::fp8_e4m3);
    REQUIRE(tp.fits);
    CHECK(tp.strategy == ah::shard_strategy::tensor_parallel);
    CHECK(tp.tensor_parallel == 8);
    CHECK(tp.stages == 1);
    CHECK(tp.replicas == 1);
    CHECK(tp.tensor_link.kind == ah::interconnect_kind::nvswitch);
    CHECK(tp.tensor_link.gbps == doctest::Approx(450));
    check_coverage(tp, big.layers);
    for (const auto& d : tp.devices) CHECK(d.tensor_size == 8);

    const auto pp = ah::plan_sharding(gpus, {}, big, quant_format::fp8_e4m3);
    REQUIRE(pp.fits);
    CHECK(pp.strategy == ah::shard_strategy::pipeline_parallel);
    CHECK(pp.tensor_parallel == 1);
    CHECK(pp.stages >= 6);
    CHECK(pp.pipeline_link.kind == ah::interconnect_kind::pcie);
    check_coverage(pp, big.layers);
    // Tensor parallel divides the bytes each device reads; a pipeline does not.
    CHECK(tp.decode_tokens_per_second > 3 * pp.decode_tokens_per_second);

    // 70B bf16: the smallest tensor-parallel group that holds it, replicated.
    const auto tp70 = ah::plan_sharding(gpus, nvswitch, model("llama-3.1-70b"), quant_format::bf16);
    CHECK(tp70.strategy == ah::shard_strategy::tensor_parallel);
    CHECK(tp70.tensor_parallel == 2);
    CHECK(tp70.replicas == 4);
    CHECK(tp70.is_data_parallel());
    CHECK(tp70.aggregate_decode_tokens_per_second == doctest::Approx(4 * tp70.decode_tokens_per_second));
    check_coverage(tp70, 80);
    // Each replica decodes its batch: the aggregate counts every sequence.
    const auto batch16 = ah::plan_sharding(gpus, nvswitch, model("llama-3.1-70b"), quant_format::bf16, {.batch = 16});
    REQUIRE(batch16.replicas >= 2);
    CHECK(batch16.aggregate_decode_tokens_per_second ==
          doctest::Approx(batch16.replicas * 16.0 * batch16.decode_tokens_per_second));
}

TEST_CASE("plan_sharding: a tensor-parallel group splits the KV heads as runtimes can") {
    const auto gpus = cards("H100 SXM", 8);
    const std::vector<ah::interconnect> nvswitch{
        link(ah::interconnect_kind::nvswitch, ah::link_scope::intra_node, 900, iota(0, 8))};
    ah::plan_options spread;
    spread.spread = true;
    // Qwen2.5 7B: 28 heads, 4 KV heads. 7 ranks divide the heads but not the KV heads (nor
    // do the KV heads divide 7): vLLM refuses it. The widest group is 4.
    const auto& qwen = model("qwen-2.5-7b");
    REQUIRE(qwen.attention_heads == 28);
    REQUIRE(qwen.kv_heads == 4);
    const auto p = ah::plan_sharding(gpus, nvswitch, qwen, quant_format::bf16, {}, spread);
    REQUIRE(p.fits);
    CHECK(p.tensor_parallel == 4);
    for (const auto& d : p.devices) CHECK((d.tensor_size == 1 || d.tensor_size == 2 || d.tensor_size == 4));
    check_coverage(p, qwen.layers);
    // 8 KV heads over 8 ranks (one each) and over 16 ranks would copy each to two.
    const auto l70 = ah::plan_sharding(gpus, nvswitch, model("llama-3.1-70b"), quant_format::bf16, {}, spread);
    CHECK(l70.tensor_parallel == 8);
}

TEST_CASE("plan_sharding: every rank of a tensor-parallel group holds a latent (MLA) cache whole") {
    // DeepSeek V3 caches one 576-value vector per token and layer that every head reads;
    // tensor parallelism splits its heads, not that vector.
    const auto gpus = cards("H200 SXM", 8);
    const std::vector<ah::interconnect> nvswitch{
        link(ah::interconnect_kind::nvswitch, ah::link_scope::intra_node, 900, iota(0, 8))};
    const auto& ds = model("deepseek-v3");
    REQUIRE(ds.kv_values_per_token_per_layer == 576);
    const ah::inference_shape s{.context = 8192};
    const auto p = ah::plan_sharding(gpus, nvswitch, ds, quant_format::fp8_e4m3, s);
    REQUIRE(p.fits);
    CHECK(p.tensor_parallel == 8);
    const double kv = static_cast<double>(ah::kv_cache_bytes(ds, s));
    std::uint32_t stages = 0;
    for (const auto& d : p.devices) {
        const double share = static_cast<double>(d.layers()) / ds.layers;
        CHECK(static_cast<double>(d.kv_cache_bytes) == doctest::Approx(kv * share).epsilon(1e-6));
        if (d.stage + 1u > stages) stages = d.stage + 1u;
    }
    CHECK(stages == p.stages);
    // At 128k tokens and a batch of 8 the whole cache (68.6 GiB) and an eighth of the
    // weights hold on no H200: eight ranks of one group cannot, a pipeline of stages that
    // each cache their own layers can.
    const ah::inference_shape long_batch{.context = 131072, .batch = 8};
    const auto big = ah::plan_sharding(gpus, nvswitch, ds, quant_format::fp8_e4m3, long_batch);
    REQUIRE(big.fits);
    CHECK(big.tensor_parallel < 8);
    CHECK(big.stages > 1);
    const double big_kv = static_cast<double>(ah::kv_cache_bytes(ds, long_batch));
    for (const auto& d : big.devices)
        CHECK(static_cast<double>(d.kv_cache_bytes) ==
              doctest::Approx(big_kv * d.layers() / ds.layers).epsilon(1e-6));
    check_coverage(big, ds.layers);
}

TEST_CASE("plan_sharding: a rank's decode reads the KV cache it holds, replicated heads included") {
    const auto gpus = cards("H100 SXM", 8);
    const std::vector<ah::interconnect> nvswitch{
        link(ah::interconnect_kind::nvswitch, ah::link_scope::intra_node, 900, iota(0, 8))};
    ah::plan_options spread;
    spread.spread = true;
    const ah::inference_shape s{.context = 32768, .batch = 8};
    // Llama 3.1 70B has 8 KV heads: one per rank of 8. With 2 KV heads the cache is a
    // quarter as large, but each of the 8 ranks holds (and reads) one of the two heads, a
    // half of it: the same bytes per rank. The weights are the same, so is a decode step.
    const auto& l70 = model("llama-3.1-70b");
    REQUIRE(l70.kv_heads == 8);
    auto two_kv = l70;
    two_kv.kv_heads = 2;
    REQUIRE(ah::kv_cache_bytes(two_kv, s) * 4 == ah::kv_cache_bytes(l70, s));
    const auto eight = ah::plan_sharding(gpus, nvswitch, l70, quant_format::bf16, s, spread);
    const auto two = ah::plan_sharding(gpus, nvswitch, two_kv, quant_format::bf16, s, spread);
    REQUIRE(eight.fits);
    REQUIRE(two.fits);
    REQUIRE(eight.tensor_parallel == 8);
    REQUIRE(two.tensor_parallel == 8);
    CHECK(two.devices[0].kv_cache_bytes == eight.devices[0].kv_cache_bytes);
    CHECK(two.decode_compute_seconds == doctest::Approx(eight.decode_compute_seconds).epsilon(1e-9));

    // A latent (MLA) cache is whole on every rank: a longer context costs each of 8 ranks
    // what it costs one device holding everything (its bytes at the device's rate).
    const auto h200 = cards("H200 SXM", 8);
    const auto& ds = model("deepseek-v3");
    const ah::inference_shape short_ctx{.context = 8192, .batch = 4}, long_ctx{.context = 32768, .batch = 4};
    const auto a = ah::plan_sharding(h200, nvswitch, ds, quant_format::fp8_e4m3, short_ctx);
    const auto b = ah::plan_sharding(h200, nvswitch, ds, quant_format::fp8_e4m3, long_ctx);
    REQUIRE(a.fits);
    REQUIRE(b.fits);
    REQUIRE(a.tensor_parallel == 8);
    REQUIRE(b.tensor_parallel == 8);
    REQUIRE(a.stages == 1);
    REQUIRE(b.stages == 1);
    const auto one_a = ah::estimate_throughput(h200[0], ds, quant_format::fp8_e4m3, short_ctx);
    const auto one_b = ah::estimate_throughput(h200[0], ds, quant_format::fp8_e4m3, long_ctx);
    const double one_device = 1.0 / one_b.decode_tokens_per_second - 1.0 / one_a.decode_tokens_per_second;
    REQUIRE(one_device > 0);
    CHECK(b.decode_compute_seconds - a.decode_compute_seconds == doctest::Approx(one_device).epsilon(1e-6));
}

TEST_CASE("plan_sharding: the first stage holds the token embedding, the last the output head, as stored") {
    // Q4_K_M stores Llama 3.1 70B's token embedding in Q4_K and its output head in Q6_K:
    // the last stage's fixed bytes are the head's, larger than the first stage's.
    const auto gpus = cards("RTX 4090", 4);
    ah::plan_options spread;
    spread.spread = true;
    const auto& l70 = model("llama-3.1-70b");
    for (const auto q : {quant_format::q4_k_m, quant_format::q2_k, quant_format::q8_0, quant_format::iq2_xxs}) {
        CAPTURE(ah::to_string(q));
        const auto p = ah::plan_sharding(gpus, {}, l70, q, {}, spread);
        REQUIRE(p.fits);
        REQUIRE(p.stages == 4);
        const std::uint64_t per_layer = ah::layer_weight_bytes(l70, q);
        const auto& first = p.devices[0];
        const auto& last = p.devices[p.devices.size() - 1];
        REQUIRE(first.embeddings);
        REQUIRE(last.output_head);
        const std::uint64_t embed = first.weights_bytes - first.layers() * per_layer;
        const std::uint64_t head = last.weights_bytes - last.layers() * per_layer;
        CHECK(embed + head == ah::non_layer_weight_bytes(l70, q));
        // vocabulary x hidden at the embedding's type; the head's adds the final norm.
        const double values = static_cast<double>(l70.vocab_size) * l70.hidden_size;
        if (q == quant_format::q4_k_m) {
            CHECK(static_cast<double>(embed) == doctest::Approx(values * 4.5 / 8).epsilon(0.001));
            CHECK(static_cast<double>(head) == doctest::Approx(values * 6.5625 / 8).epsilon(0.001));
        }
        if (q == quant_format::q8_0)
            CHECK(static_cast<double>(embed) == doctest::Approx(static_cast<double>(head)).epsilon(0.001));
        else CHECK(embed < head);
    }
}

TEST_CASE("plan_sharding: spread gives a model no more stages than it has layers") {
    // A 3-layer model over 8 cards: three stages of a layer each; five more would hold
    // nothing and add a hop each.
    auto tiny = model("llama-3.1-8b");
    tiny.layers = 3;
    tiny.parameters = 3ull * 218'112'000 + 2ull * 128256 * 4096 + 4096;
    ah::plan_options spread;
    spread.spread = true;
    const auto p = ah::plan_sharding(cards("RTX 4090", 8), {}, tiny, quant_format::bf16, {}, spread);
    REQUIRE(p.fits);
    CHECK(p.stages == 3);
    CHECK(p.devices.size() == 3);
    for (const auto& d : p.devices) CHECK(d.layers() == 1);
    check_coverage(p, 3);
    // Fewer cards than layers: every card takes part, as before.
    const auto four =
        ah::plan_sharding(cards("RTX 4090", 4), {}, model("llama-3.1-8b"), quant_format::bf16, {}, spread);
    REQUIRE(four.fits);
    CHECK(four.devices.size() == 4);
}

TEST_CASE("plan_sharding: two 8-GPU nodes: tensor inside nodes, pipeline across InfiniBand") {
    const auto gpus = cards("H100 SXM", 16);
    const std::vector<ah::interconnect> links{
        link(ah::interconnect_kind::nvswitch, ah::link_scope::intra_node, 900, iota(0, 8)),
        link(ah::interconnect_kind::nvswitch, ah::link_scope::intra_node, 900, iota(8, 8)),
        // NDR 400 Gb/s, both ways; listing the GPUs it serves, as on a flat view of two nodes.
        link(ah::interconnect_kind::infiniband, ah::link_scope::inter_node, 100, iota(0, 16)),
    };
    const auto& m = model("llama-3.1-405b"); // bf16: ~757 GiB, more than one node's 576
    const auto p = ah::plan_sharding(gpus, links, m, quant_format::bf16);
    REQUIRE(p.fits);
    CHECK(p.strategy == ah::shard_strategy::tensor_pipeline);
    CHECK(p.stages == 2);
    CHECK(p.tensor_parallel == 8);
    CHECK(p.replicas == 1);
    CHECK(p.devices.size() == 16);
    CHECK(p.pipeline_link.kind == ah::interconnect_kind::infiniband);
    CHECK(p.pipeline_link.gbps == doctest::Approx(50));
    check_coverage(p, 126);
    // Each node is one stage: GPUs 0-7 on stage 0, 8-15 on stage 1.
    for (const auto& d : p.devices) CHECK(d.stage == (d.index < 8 ? 0 : 1));
    // Without the switches: a plain pipeline.
    const auto flat = ah::plan_sharding(gpus, {}, m, quant_format::bf16);
    CHECK(flat.strategy == ah::shard_strategy::pipeline_parallel);
    CHECK(p.decode_tokens_per_second > 3 * flat.decode_tokens_per_second);
}

TEST_CASE("plan_sharding: splitting does not make the estimate jump") {
    const auto& m = model("llama-3.1-8b");
    const auto one = cards("H100 SXM", 1);
    const auto two = cards("H100 SXM", 2);
    ah::plan_options spread;
    spread.spread = true;
    const auto single = ah::plan_sharding(one, {}, m, quant_format::bf16);
    REQUIRE(single.strategy == ah::shard_strategy::single_device);
    // The single-device plan is the device's own estimate.
    CHECK(single.decode_tokens_per_second ==
          doctest::Approx(ah::estimate_throughput(one[0], m, quant_format::bf16).decode_tokens_per_second));

    const auto pipe = ah::plan_sharding(two, {}, m, quant_format::bf16, {}, spread);
    REQUIRE(pipe.strategy == ah::shard_strategy::pipeline_parallel);
    const double pipe_ratio = pipe.decode_tokens_per_second / single.decode_tokens_per_second;
    CAPTURE(pipe_ratio);
    CHECK(pipe_ratio > 0.8);
    CHECK(pipe_ratio <= 1.0); // a pipeline adds a hop, never speed, for one sequence

    const std::vector<ah::interconnect> nvlink{
        link(ah::interconnect_kind::nvlink, ah::link_scope::intra_node, 900, {0, 1})};
    const auto tp = ah::plan_sharding(two, nvlink, m, quant_format::bf16, {}, spread);
    REQUIRE(tp.strategy == ah::shard_strategy::tensor_parallel);
    const double tp_ratio = tp.decode_tokens_per_second / single.decode_tokens_per_second;
    CAPTURE(tp_ratio);
    CHECK(tp_ratio > 1.2);
    CHECK(tp_ratio < 2.0);
    CHECK(tp.decode_tensor_seconds > 0);

    // A model too big for one card: split over two, it runs at about the rate one card
    // with the memory for it would (the peer's estimate jumped a thousandfold here).
    const auto& m70 = model("llama-3.1-70b");
    const auto big = ah::plan_sharding(two, {}, m70, quant_format::fp8_e4m3, {}, spread);
    REQUIRE(big.fits);
    REQUIRE(big.stages == 2);
    const double whole = ah::estimate_throughput(one[0], m70, quant_format::fp8_e4m3).decode_tokens_per_second;
    const double scale = big.decode_tokens_per_second / whole;
    CAPTURE(scale);
    CHECK(scale > 0.8);
    CHECK(scale <= 1.0);
    // and at roughly 8/70 of the 8B model's rate on one card.
    const auto small = ah::plan_sharding(one, {}, m, quant_format::fp8_e4m3);
    const double per_param = big.decode_tokens_per_second / (small.decode_tokens_per_second * 8.03 / 70.55);
    CAPTURE(per_param);
    CHECK(per_param > 0.5);
    CHECK(per_param < 2.0);
}

TEST_CASE("plan_sharding: llama.cpp layer split over two RTX 4090s (calibration rows 61, 49)") {
    // Llama 3 70B Q4_K_M, tg512, 2 x RTX 4090 over PCIe measured 19.22 tok/s (row 61) and
    // 2 x RTX 3090 16.57 tok/s (row 49). A loose bound: the planner composes
    // estimate_throughput, whose own error is reported by the calibration.
    const auto& m = model("llama-3-70b");
    ah::inference_shape shape{.context = 512};
    const auto p4090 = ah::plan_sharding(cards("RTX 4090", 2), {}, m, quant_format::q4_k_m, shape);
    REQUIRE(p4090.fits);
    CHECK(p4090.stages == 2);
    CAPTURE(p4090.decode_tokens_per_second);
    CHECK(p4090.decode_tokens_per_second > 19.22 * 0.6);
    CHECK(p4090.decode_tokens_per_second < 19.22 * 1.4);
    const auto p3090 = ah::plan_sharding(cards("RTX 3090", 2), {}, m, quant_format::q4_k_m, shape);
    REQUIRE(p3090.fits);
    CAPTURE(p3090.decode_tokens_per_second);
    CHECK(p3090.decode_tokens_per_second > 16.57 * 0.6);
    CHECK(p3090.decode_tokens_per_second < 16.57 * 1.4);
}

TEST_CASE("plan_sharding: a long prompt pipelines over the stages (calibration row 120)") {
    // Llama 3 70B F16 over 8 x RTX 4090 (layer split over PCIe), pp4096 measured
    // 2311.43 tok/s (row 120) against 1183.87 for pp512 (row 119): the 8 micro-batches
    // of a 4096-token prompt keep several cards busy at once.
    const auto& m = model("llama-3-70b");
    const auto gpus = cards("RTX 4090", 8);
    const ah::inference_shape shape{.context = 4096};
    const auto p = ah::plan_sharding(gpus, {}, m, quant_format::fp16, shape);
    REQUIRE(p.fits);
    REQUIRE(p.stages >= 7); // the smallest layout that fits: 7 or 8 cards
    ah::plan_options sequential;
    sequential.throughput.prefill_batch_tokens = 0; // one micro-batch at a time
    const auto q = ah::plan_sharding(gpus, {}, m, quant_format::fp16, shape, sequential);
    REQUIRE(q.prefill_tokens_per_second > 0);
    // 4 micro-batches per 2048-token batch over n nearly equal stages: close to
    // 4 / (1 + 3/n) times the rate of one stage after another, never more.
    const double n = p.stages;
    const double gain = p.prefill_tokens_per_second / q.prefill_tokens_per_second;
    CAPTURE(gain);
    CHECK(gain > 0.85 * 4 / (1 + 3 / n));
    CHECK(gain <= 4 / (1 + 3 / n) * (1 + 1e-9));
    CHECK(p.decode_tokens_per_second == doctest::Approx(q.decode_tokens_per_second)); // decode is untouched
    CAPTURE(p.prefill_tokens_per_second);
    CHECK(std::fabs(p.prefill_tokens_per_second / 2311.43 - 1) < 0.25);
    // A prompt of one micro-batch has nothing to overlap, whatever the context.
    for (const ah::inference_shape short_prompt : {ah::inference_shape{.context = 512},
                                                   ah::inference_shape{.context = 4096, .prompt = 512}}) {
        CAPTURE(short_prompt.context);
        const auto a = ah::plan_sharding(gpus, {}, m, quant_format::fp16, short_prompt);
        const auto b = ah::plan_sharding(gpus, {}, m, quant_format::fp16, short_prompt, sequential);
        CHECK(a.prefill_tokens_per_second == doctest::Approx(b.prefill_tokens_per_second));
    }
    // The prompt changes prefill only: the layout and decode follow the context.
    const auto p512 = ah::plan_sharding(gpus, {}, m, quant_format::fp16, {.context = 4096, .prompt = 512});
    CHECK(p512.stages == p.stages);
    CHECK(p512.decode_tokens_per_second == doctest::Approx(p.decode_tokens_per_second));
    CHECK(p512.prefill_tokens_per_second < p.prefill_tokens_per_second);
}

TEST_CASE("plan_sharding: a device whose rate is unknown leaves the plan's rate unknown") {
    // Two cards with bandwidth but no compute peak: prefill is unknown on each, and the
    // links' transfer times alone are no rate (they once gave millions of tokens/s).
    auto gpus = cards("RTX 4090", 2);
    for (auto& g : gpus) {
        g.peak = {};
        g.peak_from = ah::origin::none;
    }
    const auto& m = model("llama-3.1-8b");
    const auto one = ah::plan_sharding(std::span(gpus.data(), 1), {}, m, quant_format::fp16);
    REQUIRE(one.fits);
    CHECK(one.prefill_tokens_per_second == 0);
    ah::plan_options split;
    split.spread = true; // both cards in one replica
    const auto p = ah::plan_sharding(gpus, {}, m, quant_format::fp16, {}, split);
    REQUIRE(p.fits);
    CHECK(p.replicas == 1);
    CHECK(p.prefill_tokens_per_second == 0);
    CHECK(p.decode_tokens_per_second > 0); // bandwidth is known: decode is
    // No bandwidth on one of them: decode is unknown too.
    gpus[1].memory_bandwidth_gbps = {};
    CHECK(ah::plan_sharding(gpus, {}, m, quant_format::fp16, {}, split).decode_tokens_per_second == 0);
}

TEST_CASE("suggest_quantization") {
    SUBCASE("highest quality that fits one card") {
        const auto q = ah::suggest_quantization(cards("RTX 4090", 1), model("llama-3.1-8b"));
        CHECK(q.fits);
        CHECK(q.format == quant_format::bf16);
        CHECK(q.support == ah::format_support::native);
        CHECK(q.kind == ah::device_kind::cuda_gpu);
        const auto big = ah::suggest_quantization(cards("RTX 4090", 1), model("llama-3.1-70b"));
        CHECK(big.fits);
        CHECK(ah::bits_per_weight(big.format) < 2.6);
        CHECK(big.memory.total_bytes() <= big.usable_bytes);
        CHECK(big.support == ah::format_support::native); // GGUF blocks multiply in int8
    }
    SUBCASE("a legacy format a K-quant beats in fewer bits is not a candidate unless asked for") {
        // Qwen 2.5 32B on one RTX 4090: Q4_1 (5.0 bits) fits, and so does Q4_K_M (4.9
        // bits), which llama.cpp measures at +0.18 perplexity against Q4_1's +0.45.
        const auto q = ah::suggest_quantization(cards("RTX 4090", 1), model("qwen-2.5-32b"));
        REQUIRE(q.fits);
        CHECK(q.format == quant_format::q4_k_m);
        ah::plan_options only_q4_1;
        only_q4_1.formats = {quant_format::q4_1};
        CHECK(ah::suggest_quantization(cards("RTX 4090", 1), model("qwen-2.5-32b"), {}, only_q4_1).fits);
        // Nothing the default candidates hold is superseded; everything else is.
        ah::detail::shard::candidate_list storage;
        const auto c = ah::detail::shard::candidates_of({}, storage);
        for (const auto& row : ah::quant_table) {
            CAPTURE(row.name);
            const bool candidate = std::ranges::find(c, row.id) != c.end();
            CHECK(candidate == (row.bits_per_weight <= 16 && ah::superseded_by(row.id) == row.id));
        }
        CHECK(std::ranges::find(c, quant_format::q5_1) == c.end());
        CHECK(std::ranges::find(c, quant_format::q5_0) != c.end());
        // A bit limit keeps the formats at or under it; a limit that is not a number, all.
        ah::plan_options eight;
        eight.max_bits_per_weight = 8.5;
        const auto c8 = ah::detail::shard::candidates_of(eight, storage);
        REQUIRE_FALSE(c8.empty());
        CHECK(c8.front() == quant_format::q8_0);
        ah::plan_options nan;
        nan.max_bits_per_weight = std::numeric_limits<double>::quiet_NaN();
        CHECK(ah::detail::shard::candidates_of(nan, storage).front() == quant_format::fp32);
    }
    SUBCASE("the combined memory of several devices counts") {
        // The peer picked INT8 for 70B on 8 x A100 80GB because one card cannot hold bf16.
        const auto q = ah::suggest_quantization(cards("A100 SXM4 80GB", 8), model("llama-3.1-70b"));
        CHECK(q.fits);
        CHECK(q.format == quant_format::bf16);
        CHECK(q.devices == 8);
    }
    SUBCASE("equal bits: native wins") {
        // T4 has no bf16: fp16 of the same size is chosen.
        CHECK(ah::suggest_quantization(cards("T4", 1), model("llama-3.2-1b")).format == quant_format::fp16);
        // MXFP4 and IQ4_XS both cost 4.25 bits; H100 runs IQ4_XS's int8 natively and
        // dequantizes MXFP4; B200 computes fp4 natively.
        ah::plan_options o;
        o.formats = {quant_format::mxfp4, quant_format::iq4_xs};
        const auto h = ah::suggest_quantization(cards("H100 SXM", 1), model("llama-3.1-8b"), {}, o);
        CHECK(h.format == quant_format::iq4_xs);
        CHECK(h.support == ah::format_support::native);
        const auto b = ah::suggest_quantization(cards("B200", 1), model("llama-3.1-8b"), {}, o);
        CHECK(b.format == quant_format::mxfp4);
        CHECK(b.support == ah::format_support::native);
    }
    SUBCASE("fp16 weights on a GPU without an fp16 figure") {
        // Apple's catalogue rows give the M1 Pro no peak at all and the M1 8-core fp32
        // only; F16 files run on both, and a 1B model in 16 GiB needs no quantization.
        for (const std::string name : {"Apple M1 Pro 16-core GPU", "Apple M1 8-core GPU"}) {
            CAPTURE(name);
            auto gpu = card(name, 0);
            gpu.memory_bytes = {16 * ah::units::gib, ah::origin::user};
            CHECK(ah::support_for(gpu, quant_format::fp16) == ah::format_support::dequantized);
            CHECK(ah::support_for(gpu, quant_format::bf16) == ah::format_support::none);
            const std::vector<ah::accelerator_profile> mac{gpu};
            const auto q = ah::suggest_quantization(mac, model("llama-3.2-1b"));
            CHECK(q.fits);
            CHECK(q.format == quant_format::fp16);
            const auto p = ah::plan_sharding(mac, {}, model("llama-3.2-1b"), quant_format::fp16);
            CHECK(p.fits);
            // Decode follows the bandwidth, which Apple gave for the M1 Pro, not the M1.
            CHECK((p.decode_tokens_per_second > 0) == gpu.memory_bandwidth_gbps.has_value());
        }
        // Where no rate at all is known (an M4 GPU, a WSE-3), BF16 runs as FP16 does: nothing
        // says the device lacks it. A known rate without bf16 (the M1's fp32) still refuses it.
        for (const std::string name : {"Apple M4 Pro 20-core GPU", "Cerebras WSE-3"}) {
            CAPTURE(name);
            const auto d = card(name, 0);
            REQUIRE(d.peak_from == ah::origin::none);
            for (const auto q : {quant_format::fp32, quant_format::fp16, quant_format::bf16})
                CHECK(ah::support_for(d, q) == ah::format_support::dequantized);
        }
        CHECK(ah::support_for(card("Apple M1 8-core GPU", 0), quant_format::bf16) == ah::format_support::none);
        // A TPU has a bf16 rate and none for fp16: fp16 checkpoints run in bf16. A device
        // that computes in int8 only still cannot, nor can it dequantize int4 weights.
        CHECK(ah::support_for(card("TPU v5p", 0), quant_format::fp16) == ah::format_support::dequantized);
        CHECK(ah::support_for(card("AMD XDNA NPU (Phoenix)", 0), quant_format::fp16) == ah::format_support::none);
        CHECK(ah::support_for(card("AMD XDNA NPU (Phoenix)", 0), quant_format::int4) == ah::format_support::none);
        // Intel's NPUs multiply fp16 (at half their int8 rate), so OpenVINO's FP16 models and
        // its int4-weight LLMs run on them; llama.cpp's formats still do not (below).
        for (const std::string name : {"Intel NPU (Meteor Lake)", "Intel NPU (Lunar Lake)"}) {
            CAPTURE(name);
            const auto npu = card(name, 0);
            CHECK(npu.peak.fp16 * 2 == doctest::Approx(npu.peak.int8));
            CHECK(ah::support_for(npu, quant_format::fp16) == ah::format_support::native);
            CHECK(ah::support_for(npu, quant_format::int8) == ah::format_support::native);
            CHECK(ah::support_for(npu, quant_format::int4) == ah::format_support::dequantized);
            CHECK(ah::support_for(npu, quant_format::bf16) == ah::format_support::none);
            // A 14B model does not fit 16 GiB of laptop memory in int8; in int4 it does.
            auto sized = npu;
            sized.memory_bytes = {16 * ah::units::gib, ah::origin::user};
            const std::vector<ah::accelerator_profile> laptop{sized};
            const auto q = ah::suggest_quantization(laptop, model("qwen-2.5-14b"));
            CHECK(q.fits);
            CHECK(q.format == quant_format::int4);
        }
    }
    SUBCASE("llama.cpp's formats on CPUs and GPUs only") {
        // GGUF files load in llama.cpp alone; the TPU, Neuron, Gaudi and NPU stacks take
        // none, whatever the chip computes in (a TPU v5p multiplies int8, not Q8_0 blocks).
        for (const std::string name : {"TPU v5p", "Gaudi 3 HL-325L", "Trainium", "Inferentia2", "Intel NPU (Lunar Lake)"}) {
            CAPTURE(name);
            const auto d = card(name, 0);
            for (const auto q : {quant_format::q8_0, quant_format::q4_k_m, quant_format::iq2_xs})
                CHECK(ah::support_for(d, q) == ah::format_support::none);
        }
        CHECK(ah::support_for(card("TPU v5p", 0), quant_format::int8) == ah::format_support::native);
        for (const std::string name : {"H100 SXM", "MI300X", "Apple M1 Pro 16-core GPU", "Intel Arc A770 16GB"}) {
            CAPTURE(name);
            CHECK(ah::support_for(card(name, 0), quant_format::q4_k_m) != ah::format_support::none);
        }
        ah::accelerator_profile cpu;
        cpu.kind = ah::device_kind::cpu;
        CHECK(ah::support_for(cpu, quant_format::q4_k_m) == ah::format_support::dequantized);
        // Eight TPU v5e chips and Llama 3.1 70B at 128k tokens: INT8, not Q8_0 or Q6_K.
        const auto tpus = cards("TPU v5e", 8);
        const auto q = ah::suggest_quantization(tpus, model("llama-3.1-70b"), {.context = 131072});
        REQUIRE(q.fits);
        CHECK(ah::info(q.format).scheme != ah::quant_scheme::gguf_block);
        CHECK(ah::info(q.format).scheme != ah::quant_scheme::gguf_mix);
        // Nothing fits: the smallest format named is one the chips run, not IQ1_S.
        const auto none = ah::suggest_quantization(cards("TPU v5e", 1), model("llama-3.1-405b"));
        CHECK_FALSE(none.fits);
        CHECK(none.outcome == ah::plan_outcome::too_large);
        CHECK(ah::support_for(tpus[0], none.format) != ah::format_support::none);
    }
    SUBCASE("nothing fits") {
        const auto q = ah::suggest_quantization(cards("RTX 3060", 1), model("llama-3.1-405b"));
        CHECK(!q.fits);
        CHECK(q.outcome == ah::plan_outcome::too_large);
        CHECK(ah::suggest_quantization({}, model("llama-3.1-8b")).outcome == ah::plan_outcome::no_devices);
    }
    SUBCASE("the CPU only when allowed") {
        ah::accelerator_profile cpu;
        cpu.kind = ah::device_kind::cpu;
        cpu.memory_bytes = {64 * ah::units::gib, ah::origin::user};
        const std::vector<ah::accelerator_profile> host{cpu};
        const auto no = ah::suggest_quantization(host, model("llama-3.1-8b"));
        CHECK(!no.fits);
        CHECK(no.outcome == ah::plan_outcome::no_devices);
        CHECK(no.cpu_excluded);
        ah::plan_options allow;
        allow.allow_cpu = true;
        const auto yes = ah::suggest_quantization(host, model("llama-3.1-8b"), {}, allow);
        CHECK(yes.fits);
        CHECK(yes.format == quant_format::bf16);
        CHECK(yes.kind == ah::device_kind::cpu);
    }
    SUBCASE("an Apple GPU holds no more than Metal's working set") {
        // recommendedMaxWorkingSetSize as llama.cpp logs it: 2/3 of 16 and 32 GiB, 3/4 of
        // 64 and 96 GiB, below the 90 % the headroom alone would leave.
        auto mac = card("Apple M1 Pro 16-core GPU", 0);
        const ah::plan_options o;
        for (const auto& size : {std::pair{16ull, 2.0 / 3}, {32ull, 2.0 / 3}, {64ull, 0.75}, {96ull, 0.75}}) {
            const std::uint64_t gib = size.first;
            const double share = size.second;
            CAPTURE(gib);
            mac.memory_bytes = {gib * ah::units::gib, ah::origin::tool};
            const auto u = ah::detail::shard::usable(mac, o);
            CHECK(static_cast<double>(u) == doctest::Approx(share * static_cast<double>(gib * ah::units::gib)));
            // A discrete card of the same size keeps the headroom's 90 %.
            auto discrete = mac;
            discrete.unified_memory = false;
            CHECK(ah::detail::shard::usable(discrete, o) > u);
        }
        CHECK(ah::detail::shard::usable(mac, o) == 72 * ah::units::gib); // 96 GiB machine
        // 16 GiB: Mixtral 8x7B in IQ2_XS (about 13 GiB with its cache) would fill 90 % of
        // the memory but not the 10.7 GiB Metal lets it keep.
        mac.memory_bytes = {16 * ah::units::gib, ah::origin::tool};
        const std::vector<ah::accelerator_profile> one{mac};
        const auto p = ah::plan_sharding(one, {}, model("mixtral-8x7b"), quant_format::iq2_xs);
        CHECK_FALSE(p.fits);
        CHECK(p.memory.total_bytes() < ah::detail::shard::usable_of(16 * ah::units::gib, o));
        CHECK(p.memory.total_bytes() > ah::detail::shard::metal_working_set(16 * ah::units::gib));
        const auto q = ah::suggest_quantization(one, model("mixtral-8x7b"));
        if (q.fits) CHECK(q.memory.total_bytes() <= ah::detail::shard::metal_working_set(16 * ah::units::gib));
    }
    SUBCASE("unified memory counts once") {
        // Hand-made: two GPU views of one 64 GiB unified pool.
        ah::accelerator_profile a;
        a.kind = ah::device_kind::metal_gpu;
        a.unified_memory = true;
        a.memory_bytes = {64 * ah::units::gib, ah::origin::user};
        a.memory_bandwidth_gbps = {400, ah::origin::user};
        a.peak = {.fp32 = 10, .bf16 = 20, .fp16 = 20};
        a.peak_from = ah::origin::user;
        auto b = a;
        b.index = 1;
        const std::vector<ah::accelerator_profile> shared{a, b};
        ah::plan_options o;
        o.formats = {quant_format::bf16};
        const auto q = ah::suggest_quantization(shared, model("qwen-2.5-32b"), {}, o); // 65 GB
        CHECK(!q.fits);
        auto discrete = shared;
        for (auto& d : discrete) d.unified_memory = false;
        const auto d = ah::suggest_quantization(discrete, model("qwen-2.5-32b"), {}, o);
        CHECK(d.fits);
        CHECK(d.devices == 2);
    }
}

TEST_CASE("plan_options::count_memory_in_use: plans on the memory free now") {
    const ah::plan_options whole;
    ah::plan_options now;
    now.count_memory_in_use = true;
    const std::uint64_t gib = ah::units::gib;
    SUBCASE("usable_memory") {
        auto h100 = card("H100 SXM", 0);
        h100.memory_bytes = {80 * gib, ah::origin::tool};
        CHECK(ah::usable_memory(h100, whole) == ah::usable_memory(h100, now)); // nothing reported
        CHECK(ah::usable_memory(h100) == ah::detail::shard::usable_of(80 * gib, whole));
        h100.memory_free_bytes = {50 * gib, ah::origin::tool}; // free alone: 30 GiB in use
        CHECK(ah::usable_memory(h100, now) == ah::detail::shard::usable_of(50 * gib, whole));
        // Both known: the more of used and not free. 30 GiB not free but 20 used: 10 GiB
        // the driver keeps (neither used nor free) is not to be had either.
        h100.memory_used_bytes = {20 * gib, ah::origin::tool};
        CHECK(ah::usable_memory(h100, now) == ah::detail::shard::usable_of(50 * gib, whole));
        h100.memory_used_bytes = {40 * gib, ah::origin::tool}; // more used than not free
        CHECK(ah::usable_memory(h100, now) == ah::detail::shard::usable_of(40 * gib, whole));
        h100.memory_used_bytes = {20 * gib, ah::origin::tool};
        CHECK(ah::usable_memory(h100, whole) == ah::detail::shard::usable_of(80 * gib, whole));
        // An H200 as detection read it on a real one (driver 580.159.04): nvidia-smi's
        // Used leaves out the 615 MiB the driver reserves, so only its free says so.
        {
            constexpr std::uint64_t mib = 1024ull * 1024;
            auto h200 = card("H200 SXM", 0);
            h200.memory_bytes = {143771 * mib, ah::origin::tool};
            h200.memory_used_bytes = {0, ah::origin::tool};
            h200.memory_free_bytes = {143156 * mib, ah::origin::tool};
            CHECK(ah::usable_memory(h200, now) == ah::detail::shard::usable_of(143156 * mib, whole));
        }
        h100.memory_used_bytes = {90 * gib, ah::origin::tool}; // more than the memory: nothing left
        CHECK(ah::usable_memory(h100, now) == 0);
        h100.memory_used_bytes = {};
        h100.memory_free_bytes = {96 * gib, ah::origin::tool}; // free past the memory: none in use
        CHECK(ah::usable_memory(h100, now) == ah::usable_memory(h100, whole));
        // Unified memory on a Mac: what is in use comes off first, and Metal's working set
        // still caps the rest.
        auto mac = card("Apple M1 Pro 16-core GPU", 0);
        mac.memory_bytes = {32 * gib, ah::origin::tool};
        mac.memory_used_bytes = {2 * gib, ah::origin::tool};
        CHECK(ah::usable_memory(mac, now) == ah::detail::shard::metal_working_set(32 * gib));
        mac.memory_used_bytes = {20 * gib, ah::origin::tool};
        CHECK(ah::usable_memory(mac, now) == ah::detail::shard::usable_of(12 * gib, whole));
    }
    SUBCASE("a busy device holds less, and the plans say so") {
        // Llama 3.1 8B in BF16 (about 17 GiB with its cache) on a 24 GiB card that another
        // process fills to 10 GiB: it fits the card, not what is left of it.
        auto rtx = card("GeForce RTX 4090", 0);
        rtx.memory_used_bytes = {10 * gib, ah::origin::tool};
        const std::vector<ah::accelerator_profile> one{rtx};
        const auto& m = model("llama-3.1-8b");
        const auto idle = ah::plan_sharding(one, {}, m, quant_format::bf16, {}, whole);
        const auto busy = ah::plan_sharding(one, {}, m, quant_format::bf16, {}, now);
        REQUIRE(idle.fits);
        CHECK_FALSE(busy.fits);
        CHECK(busy.outcome == ah::plan_outcome::too_large);
        CHECK(busy.usable_bytes == ah::usable_memory(rtx, now));
        CHECK(idle.devices[0].usable_bytes == ah::usable_memory(rtx, whole));
        // The suggestion drops to a format that fits what is free, and the plan of it fits.
        const auto q = ah::suggest_quantization(one, m, {}, now);
        REQUIRE(q.fits);
        CHECK(ah::bits_per_weight(q.format) < 16);
        CHECK(q.usable_bytes == ah::usable_memory(rtx, now));
        const auto p = ah::plan_sharding(one, {}, m, q.format, {}, now);
        CHECK(p.fits);
        CHECK(p.devices[0].total_bytes() <= ah::usable_memory(rtx, now));
        CHECK(ah::plan_best_format(one, {}, m, {}, whole).choice.format == quant_format::bf16);
        CHECK(ah::bits_per_weight(ah::plan_best_format(one, {}, m, {}, now).choice.format) < 16);
    }
    SUBCASE("the busier device of two takes fewer layers") {
        auto cards2 = cards("GeForce RTX 4090", 2);
        cards2[1].memory_used_bytes = {6 * gib, ah::origin::tool};
        const auto& m = model("qwen-2.5-14b"); // about 29 GiB in BF16: both cards, a pipeline
        const auto p = ah::plan_sharding(cards2, {}, m, quant_format::bf16, {}, now);
        REQUIRE(p.fits);
        REQUIRE(p.devices.size() == 2);
        const auto& idle = p.devices[0].device == 0 ? p.devices[0] : p.devices[1];
        const auto& busy = p.devices[0].device == 0 ? p.devices[1] : p.devices[0];
        CHECK(busy.layers() < idle.layers());
        CHECK(busy.usable_bytes < idle.usable_bytes);
    }
}
static_assert([] {
    ah::accelerator_profile d;
    d.memory_bytes = {100, ah::origin::tool};
    d.memory_used_bytes = {40, ah::origin::tool};
    ah::plan_options o;
    o.memory_headroom = 0;
    o.count_memory_in_use = true;
    return ah::usable_memory(d, o) == 60 && ah::usable_memory(d) == 90;
}());

TEST_CASE("plan_sharding: a group on a full mesh uses only the links inside it") {
    // Eight MI300X joined all to all by xGMI, seven links of 128 GB/s (both directions)
    // each: a group of t GPUs all-reduces over t - 1 of them, 64 GB/s each way apiece.
    auto mi = cards("MI300X", 8);
    const std::vector<ah::interconnect> xgmi{
        link(ah::interconnect_kind::xgmi, ah::link_scope::intra_node, 896, iota(0, 8))};
    ah::plan_options spread;
    spread.spread = true;
    const auto& m = model("llama-3.1-405b");
    const auto whole = ah::plan_sharding(mi, xgmi, m, quant_format::fp8_e4m3, {}, spread);
    REQUIRE(whole.fits);
    CHECK(whole.tensor_parallel == 8);
    CHECK(whole.tensor_link.kind == ah::interconnect_kind::xgmi);
    CHECK(whole.tensor_link.gbps == doctest::Approx(448)); // all seven links of each GPU
    const auto smallest = ah::plan_sharding(mi, xgmi, m, quant_format::fp8_e4m3); // fewest GPUs that hold it
    REQUIRE(smallest.fits);
    REQUIRE(smallest.tensor_parallel > 1);
    REQUIRE(smallest.tensor_parallel < 8);
    CHECK(smallest.tensor_link.gbps ==
          doctest::Approx(64.0 * static_cast<double>(smallest.tensor_parallel - 1)));

    // The same GPUs as if behind a switch (no link_peers): every group gets the whole
    // figure, so the all-reduces of the narrower group cost less than on the mesh.
    static constexpr ah::device_spec switched = [] {
        auto s = *ah::find_device("MI300X");
        s.link_peers = 0;
        return s;
    }();
    auto sw = mi;
    for (auto& d : sw) d.spec = &switched;
    const auto fast = ah::plan_sharding(sw, xgmi, m, quant_format::fp8_e4m3);
    REQUIRE(fast.fits);
    CHECK(fast.tensor_parallel == smallest.tensor_parallel);
    CHECK(fast.tensor_link.gbps == doctest::Approx(448));
    CHECK(fast.decode_tensor_seconds < smallest.decode_tensor_seconds);
    CHECK(fast.prefill_tokens_per_second > smallest.prefill_tokens_per_second);
    CHECK(fast.decode_compute_seconds == doctest::Approx(smallest.decode_compute_seconds));
    // All eight: the mesh's every link is used, the same as the switch.
    const auto fast8 = ah::plan_sharding(sw, xgmi, m, quant_format::fp8_e4m3, {}, spread);
    CHECK(fast8.decode_tensor_seconds == doctest::Approx(whole.decode_tensor_seconds));

    // A pair of Llama 3.1 70B in BF16 on eight devices, each way: NVSwitch rows have no
    // link_peers, so H100s get the switch's whole 450 GB/s; Gaudi 3 joins its cards by 21
    // scale-up ports of 200 GbE, three to each peer, so a pair gets 3 x 25 = 75 GB/s.
    struct pair_case {
        std::string_view device;
        ah::interconnect_kind fabric;
        double fabric_gbps, pair_gbps;
    };
    for (const auto& c : {pair_case{"H100 SXM", ah::interconnect_kind::nvswitch, 900, 450},
                          pair_case{"HL-325L", ah::interconnect_kind::gaudi_roce, 1050, 75}}) {
        CAPTURE(c.device);
        const std::vector<ah::interconnect> fabric{
            link(c.fabric, ah::link_scope::intra_node, c.fabric_gbps, iota(0, 8))};
        const auto pair = ah::plan_sharding(cards(c.device, 8), fabric, model("llama-3.1-70b"), quant_format::bf16);
        REQUIRE(pair.fits);
        REQUIRE(pair.tensor_parallel == 2);
        CHECK(pair.tensor_link.gbps == doctest::Approx(c.pair_gbps));
    }
}
TEST_CASE("plan_sharding: a TPU group smaller than a torus axis has no wraparound") {
    // v5e: a 2D torus, four ICI links of 50 GB/s each way (400 GB/s both ways per chip).
    // Llama 3.1 70B in INT8 needs all eight chips of a host, a 2 x 4 block: two axes,
    // one direction of one link each, 100 GB/s, not the chip's whole 200.
    const std::vector<ah::interconnect> ici{
        link(ah::interconnect_kind::ici, ah::link_scope::intra_node, 400, iota(0, 8))};
    const auto v5e = ah::plan_sharding(cards("TPU v5e", 8), ici, model("llama-3.1-70b"), quant_format::int8);
    REQUIRE(v5e.fits);
    CHECK(v5e.tensor_parallel == 8);
    CHECK(v5e.tensor_link.gbps == doctest::Approx(100));
    // v5p: a 3D torus, six links of 100 GB/s each way. A pair uses one link, four chips
    // (2 x 2) two, eight (2 x 2 x 2) three.
    const std::vector<ah::interconnect> ici_p{
        link(ah::interconnect_kind::ici, ah::link_scope::intra_node, 1200, iota(0, 8))};
    const auto chip = card("TPU v5p", 0);
    for (const auto& c : {std::pair{2u, 100.0}, {4u, 200.0}, {8u, 300.0}}) {
        const std::uint32_t t = c.first;
        const double gbps = c.second;
        CAPTURE(t);
        ah::plan_options spread;
        spread.spread = true;
        const auto p = ah::plan_sharding(cards("TPU v5p", t), ici_p, model("llama-3.1-8b"), quant_format::bf16, {},
                                         spread);
        REQUIRE(p.fits);
        REQUIRE(p.tensor_parallel == t);
        CHECK(p.tensor_link.gbps == doctest::Approx(gbps));
        CHECK(ah::detail::shard::group_link({ah::interconnect_kind::ici, 600}, chip, t).gbps == doctest::Approx(gbps));
    }
    // 16 chips and more may span a whole axis and its wraparound: the whole figure.
    CHECK(ah::detail::shard::group_link({ah::interconnect_kind::ici, 600}, chip, 16).gbps == 600);
}
static_assert([] {
    // A pipeline hop inside a full mesh crosses one peer link; a lone device needs no link.
    const ah::accelerator_profile d = ah::profile_from_spec(*ah::find_device("MI300X"));
    const ah::plan_link mesh{ah::interconnect_kind::xgmi, 448};
    using ah::detail::shard::group_link;
    return group_link(mesh, d, 2).gbps == 64 && group_link(mesh, d, 8).gbps == 448 &&
           group_link(mesh, d, 1).gbps == 448 && group_link({ah::interconnect_kind::pcie, 32}, d, 4).gbps == 32;
}());

TEST_CASE("plan_sharding: capacity limits") {
    // 300 cards: the first 256 are planned, one 8B replica each, and the plan says so.
    const auto many = cards("RTX 4090", 300);
    const auto p = ah::plan_sharding(many, {}, model("llama-3.1-8b"), quant_format::q4_k_m);
    CHECK(p.fits);
    CHECK(p.truncated);
    CHECK(p.replicas == ah::max_plan_devices);
    CHECK(p.devices.size() == ah::max_plan_devices);
    CHECK(p.aggregate_decode_tokens_per_second == doctest::Approx(256 * p.decode_tokens_per_second));
    // Data parallel off: one replica, the rest idle.
    ah::plan_options one;
    one.data_parallel = false;
    CHECK(ah::plan_sharding(many, {}, model("llama-3.1-8b"), quant_format::q4_k_m, {}, one).replicas == 1);
    // Out-of-range headroom is clamped: 100 % headroom leaves nothing usable.
    ah::plan_options none;
    none.memory_headroom = 2.0;
    const auto z = ah::plan_sharding(cards("RTX 4090", 2), {}, model("llama-3.2-1b"), quant_format::q4_0, {}, none);
    CHECK(!z.fits);
    CHECK(z.usable_bytes == 0);
}

namespace {
// The workstation's view (hand-made): an RTX 4090 from the catalogue and an iGPU
// reporting 31 GiB of shared memory and no bandwidth, as Vulkan shows it.
std::vector<ah::accelerator_profile> card_and_igpu() {
    std::vector<ah::accelerator_profile> devs{card("RTX 4090", 0)};
    ah::accelerator_profile igpu;
    igpu.kind = ah::device_kind::intel_gpu;
    igpu.maker = ah::vendor::intel;
    igpu.index = 1;
    igpu.unified_memory = true;
    igpu.memory_bytes = {31ull << 30, ah::origin::tool};
    devs.push_back(igpu);
    return devs;
}
} // namespace

TEST_CASE("suggest_quantization: neighbouring devices are counted alike only when they are alike") {
    // suggest_quantization visits runs of neighbours that match in kind, usable memory and
    // the peak rates support_test reads; a neighbour differing in any of them starts a run
    // of its own, and its count must be what a test of each device on its own gives.
    auto gpus = cards("H100 SXM", 8);
    for (const std::size_t i : {2u, 3u, 6u}) gpus[i].peak.bf16 = 0; // no bf16: BF16 does not run there
    gpus[4].memory_bytes = {40 * ah::units::gib, ah::origin::user};
    const auto& m = model("llama-3.1-8b");
    const auto count_of = [&](quant_format f) {
        std::uint32_t n = 0;
        std::uint64_t bytes = 0;
        for (const auto& d : gpus)
            if (ah::support_for(d, f) != ah::format_support::none) {
                ++n;
                bytes += ah::usable_memory(d);
            }
        return std::pair{n, bytes};
    };
    for (const auto f : {quant_format::bf16, quant_format::fp16, quant_format::fp8_e4m3, quant_format::q4_k_m}) {
        CAPTURE(ah::to_string(f));
        ah::plan_options o;
        o.formats = {f};
        const auto q = ah::suggest_quantization(gpus, m, {}, o);
        REQUIRE(q.fits);
        CHECK(q.format == f);
        const auto expected = count_of(f);
        CHECK(q.devices == expected.first);
        CHECK(q.usable_bytes == expected.second);
    }
    ah::plan_options bf16;
    bf16.formats = {quant_format::bf16};
    CHECK(ah::suggest_quantization(gpus, m, {}, bf16).devices == 5);
    CHECK(ah::suggest_quantization(gpus, m, {}, bf16).usable_bytes ==
          4 * ah::usable_memory(gpus[0]) + ah::usable_memory(gpus[4]));
    // A device whose rates are unknown dequantizes what the others run natively: the
    // natively running ones fit first and are the only ones counted.
    gpus[1].peak = {};
    gpus[1].peak_from = ah::origin::none;
    ah::plan_options fp8;
    fp8.formats = {quant_format::fp8_e4m3};
    const auto q8 = ah::suggest_quantization(gpus, m, {}, fp8);
    REQUIRE(q8.fits);
    CHECK(q8.support == ah::format_support::native);
    CHECK(q8.devices == 7);
    // Unified-memory devices of one host are one pool however alike they are.
    auto macs = cards("Apple M2 Max 38-core GPU", 3);
    for (auto& mac : macs) mac.memory_bytes = {64 * ah::units::gib, ah::origin::user};
    const auto pooled = ah::suggest_quantization(macs, m);
    REQUIRE(pooled.fits);
    CHECK(pooled.devices == 1);
    CHECK(pooled.usable_bytes == ah::usable_memory(macs[0]));
    // But APUs on NUMA nodes of their own each have their node's memory: four MI300As as
    // amd-smi lists them on a real node (64 289 MB each, NODE 0 to 3) are four devices
    // (before, one: a 70B model in BF16 did not fit a node that holds 250 GB).
    auto apus = cards("AMD Instinct MI300A", 4);
    for (std::int32_t n = 0; n < 4; ++n) {
        apus[static_cast<std::size_t>(n)].memory_bytes = {64289ull << 20, ah::origin::tool};
        apus[static_cast<std::size_t>(n)].numa_node = {n, ah::origin::sysfs};
    }
    REQUIRE(apus[0].unified_memory);
    const auto& big = model("llama-3.1-70b");
    ah::plan_options only_bf16;
    only_bf16.formats = {quant_format::bf16};
    const auto node = ah::suggest_quantization(apus, big, {}, only_bf16);
    REQUIRE(node.fits);
    CHECK(node.devices == 4);
    const auto plan = ah::plan_sharding(apus, {}, big, quant_format::bf16);
    CHECK(plan.fits);
    CHECK(plan.candidate_devices == 4);
    // Without NUMA nodes they are views of one pool, as before.
    for (auto& a : apus) a.numa_node.reset();
    CHECK_FALSE(ah::suggest_quantization(apus, big, {}, only_bf16).fits);
}

TEST_CASE("suggest_quantization: a discrete card wins over an integrated GPU with more shared memory") {
    auto devs = card_and_igpu();
    const auto q = ah::suggest_quantization(std::span<const ah::accelerator_profile>(devs), model("llama-3.1-8b"));
    REQUIRE(q.fits);
    CHECK(q.kind == ah::device_kind::cuda_gpu); // its speed can be estimated; the iGPU's cannot
    // Only when nothing fits the card does the iGPU get the model.
    const auto big = ah::suggest_quantization(std::span<const ah::accelerator_profile>(devs), model("qwen2.5-32b"),
                                              {}, {});
    if (big.fits && big.kind == ah::device_kind::intel_gpu) {
        const auto on_card = ah::suggest_quantization(
            std::span<const ah::accelerator_profile>(devs.data(), 1), model("qwen2.5-32b"));
        CHECK_FALSE(on_card.fits);
    }
}

// ---- Properties over a grid of models, device mixes and counts (1-16, 64, 128). The
// planner keeps per-island state between replicas and answers suggest_quantization's fit
// test in closed form; these are the properties every answer must keep.
namespace {

struct grid_cluster {
    std::vector<ah::accelerator_profile> devices;
    std::vector<ah::interconnect> links;
};

// mix 0: H100 SXM, NVSwitch per 8, InfiniBand between nodes (the benchmark's cluster);
TEST_CASE("plan_sharding: one machine's network port carries no hop between its own devices") {
    // Four RTX 3090s in two NVLink pairs and a 25 GbE port, as detection lists a NIC (no
    // devices): the hop between the pairs crosses PCIe inside the machine.
    const auto gpus = cards("RTX 3090", 4);
    std::vector<ah::interconnect> links{
        link(ah::interconnect_kind::nvlink, ah::link_scope::intra_node, 112.5, iota(0, 2)),
        link(ah::interconnect_kind::nvlink, ah::link_scope::intra_node, 112.5, iota(2, 2)),
    };
    const auto& m = model("llama-3.1-70b");
    ah::plan_options o;
    o.spread = true;
    const auto without = ah::plan_sharding(gpus, links, m, quant_format::q4_k_m, {}, o);
    links.push_back(link(ah::interconnect_kind::ethernet, ah::link_scope::inter_node, 6.25, {}));
    const auto with = ah::plan_sharding(gpus, links, m, quant_format::q4_k_m, {}, o);
    REQUIRE(with.fits);
    REQUIRE(with.stages == 2);
    CHECK(with.pipeline_link.kind == ah::interconnect_kind::pcie);
    CHECK(with.pipeline_link.gbps == doctest::Approx(without.pipeline_link.gbps));
    CHECK(with.decode_tokens_per_second == doctest::Approx(without.decode_tokens_per_second));
    CHECK(with.prefill_tokens_per_second == doctest::Approx(without.prefill_tokens_per_second));
}

// mix 1: RTX 3060 / 4090 / 3090 in turn over PCIe; mix 2: A100 40GB, NVLink pairs, an
// InfiniBand port listing every fourth GPU.
grid_cluster grid_mix(int mix, std::uint32_t n) {
    grid_cluster c;
    const char* consumer[] = {"RTX 3060", "RTX 4090", "RTX 3090"};
    for (std::uint32_t i = 0; i < n; ++i)
        c.devices.push_back(card(mix == 0 ? "H100 SXM" : mix == 1 ? consumer[i % 3] : "A100 SXM4 40GB", i));
    const std::uint32_t island = mix == 0 ? 8 : mix == 2 ? 2 : 0;
    for (std::uint32_t first = 0; island != 0 && first < n; first += island)
        c.links.push_back(link(mix == 0 ? ah::interconnect_kind::nvswitch : ah::interconnect_kind::nvlink,
                               ah::link_scope::intra_node, 900, iota(first, std::min(island, n - first))));
    if (mix == 0 && n > 8)
        c.links.push_back(link(ah::interconnect_kind::infiniband, ah::link_scope::inter_node, 100, iota(0, n)));
    for (std::uint32_t i = 0; mix == 2 && i < n; i += 4)
        c.links.push_back(link(ah::interconnect_kind::infiniband, ah::link_scope::inter_node, 50, {i}));
    return c;
}

void check_plan(const ah::shard_plan& p, const ah::model_spec& m, std::size_t devices) {
    CHECK(p.devices.size() <= devices);
    CHECK(p.fits == (p.replicas > 0));
    CHECK(p.fits == (p.outcome == ah::plan_outcome::fits));
    if (!p.fits) {
        CHECK(p.devices.empty());
        return;
    }
    check_coverage(p, m.layers);
    std::vector<bool> used(devices, false);
    std::uint32_t replicas = 0;
    for (const auto& d : p.devices) {
        REQUIRE(d.device < devices);
        CHECK(!used[d.device]); // a device serves one stage of one replica
        used[d.device] = true;
        CHECK(d.fits == (d.total_bytes() <= d.usable_bytes));
        CHECK(d.tensor_rank < d.tensor_size);
        CHECK(d.embeddings == (d.stage == 0));
        if (d.replica + 1u > replicas) replicas = d.replica + 1u;
    }
    CHECK(replicas == p.replicas);
    CHECK(p.usable_bytes >= p.largest_device_bytes);
    CHECK(p.decode_tokens_per_second > 0);
    CHECK(p.aggregate_decode_tokens_per_second >= p.decode_tokens_per_second);
}

} // namespace

TEST_CASE("plan_sharding and suggest_quantization: properties over a grid") {
    const char* models[] = {"llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "qwen-2.5-32b", "deepseek-v3"};
    const quant_format formats[] = {quant_format::bf16, quant_format::fp8_e4m3, quant_format::q4_k_m};
    std::vector<std::uint32_t> counts;
    for (std::uint32_t n = 1; n <= 16; ++n) counts.push_back(n);
    counts.push_back(64);
    counts.push_back(128);
    std::size_t fitted = 0, strategies = 0;
    bool seen[5] = {};
    for (int mix = 0; mix < 3; ++mix)
        for (const auto n : counts) {
            const auto c = grid_mix(mix, n);
            for (const std::string id : models) {
                const auto& m = model(id);
                CAPTURE(mix);
                CAPTURE(n);
                CAPTURE(id);
                for (const auto q : formats) {
                    const auto p = ah::plan_sharding(c.devices, c.links, m, q);
                    check_plan(p, m, n);
                    if (p.fits) ++fitted;
                    seen[static_cast<int>(p.strategy)] = true;
                    // One replica at most without data parallelism; the same first replica.
                    ah::plan_options one;
                    one.data_parallel = false;
                    const auto single = ah::plan_sharding(c.devices, c.links, m, q, {}, one);
                    check_plan(single, m, n);
                    CHECK(single.replicas == (p.fits ? 1u : 0u));
                    CHECK(single.strategy == p.strategy);
                    CHECK(single.decode_tokens_per_second == p.decode_tokens_per_second);
                }
                const auto s = ah::suggest_quantization(c.devices, m);
                if (s.fits) {
                    CHECK(s.devices >= 1);
                    CHECK(s.devices <= n);
                    CHECK(s.memory.total_bytes() <= s.usable_bytes);
                }
            }
        }
    for (bool b : seen) strategies += b;
    CHECK(fitted > 300);    // the grid reaches plans that fit,
    CHECK(strategies == 5); // every strategy and the failure
}

TEST_CASE("suggest_quantization: fitting only gets easier with more devices, as a spread pipeline") {
    // Cards of one kind, largest first: the first stage of a pipeline over all of them is
    // the largest card and the last the smallest, as suggest_quantization assumes. Whether
    // the k largest hold a model can only go from no to yes as k grows, and agrees with
    // plan_sharding spreading one replica over the same k cards.
    const char* names[] = {"H100 SXM", "A100 SXM4 40GB", "RTX 4090", "RTX 3090", "RTX 3060"};
    std::vector<ah::accelerator_profile> all;
    for (std::uint32_t i = 0; i < 20; ++i) all.push_back(card(names[i / 4], i));
    ah::plan_options spread;
    spread.spread = true;
    for (const std::string id : {"llama-3.1-70b", "llama-3.1-405b", "qwen-2.5-32b", "mixtral-8x7b"}) {
        const auto& m = model(id);
        for (const auto q : {quant_format::bf16, quant_format::q4_k_m, quant_format::fp16}) {
            ah::plan_options only;
            only.formats = {q};
            bool before = false;
            for (std::size_t k = 1; k <= all.size(); ++k) {
                const std::span<const ah::accelerator_profile> first(all.data(), k);
                const auto s = ah::suggest_quantization(first, m, {}, only);
                CAPTURE(id);
                CAPTURE(k);
                CHECK((!before || s.fits)); // monotone
                before = s.fits;
                if (k >= 2) CHECK(s.fits == ah::plan_sharding(first, {}, m, q, {}, spread).fits);
                if (s.fits) CHECK(s.devices == k);
            }
        }
    }
}

TEST_CASE("suggest_quantization: its fit test agrees with a spread pipeline near the limits") {
    // Every catalogue model on two and three cards of hand-set memory, largest first, so
    // that many models sit just above or below what the cards hold.
    const std::uint64_t gib[] = {6, 8, 12, 16, 20, 24, 32, 40, 48, 64, 80, 96, 141, 192, 288};
    ah::plan_options spread;
    spread.spread = true;
    std::size_t fits = 0, total = 0;
    for (std::size_t mi = 0; mi < ah::model_catalogue_size; ++mi) {
        const auto& m = ah::model_catalogue[mi];
        for (const auto q : {quant_format::bf16, quant_format::q8_0, quant_format::q4_k_m, quant_format::iq2_xxs}) {
            ah::plan_options only;
            only.formats = {q};
            for (std::size_t a = 0; a < std::size(gib); ++a)
                for (std::size_t b = 0; b <= a; ++b)
                    for (std::uint32_t cards_n = 2; cards_n <= 3; ++cards_n) {
                        std::vector<ah::accelerator_profile> devs;
                        for (std::uint32_t i = 0; i < cards_n; ++i) {
                            auto d = card("H100 SXM", i);
                            d.memory_bytes = {(i == 0 ? gib[a] : gib[b]) * ah::units::gib, ah::origin::user};
                            devs.push_back(d);
                        }
                        const auto s = ah::suggest_quantization(devs, m, {}, only);
                        const auto p = ah::plan_sharding(devs, {}, m, q, {}, spread);
                        CAPTURE(m.id);
                        CAPTURE(a);
                        CAPTURE(b);
                        CAPTURE(cards_n);
                        CHECK(s.fits == p.fits);
                        fits += s.fits;
                        ++total;
                    }
        }
    }
    CHECK(fits > total / 10); // both answers occur often
    CHECK(fits < total * 9 / 10);
}

TEST_CASE("plan_sharding: a device that cannot hold either end of a pipeline takes no part in one") {
    // Mistral NeMo 12B in Q8_0 with a 58k-token context needs about 22 GiB. Another job
    // holds 23 GiB of card 0's 24, so with count_memory_in_use it can hold neither the
    // embedding nor the output head; card 1 alone falls just short. A pipeline that gives
    // card 0 the embedding and no layers is no plan.
    const auto& m = model("mistral-nemo-12b");
    ah::plan_options o;
    o.count_memory_in_use = true;
    auto devices = cards("RTX 4090", 2);
    devices[0].memory_used_bytes = {23 * ah::units::gib, ah::origin::user};
    const ah::inference_shape shape{.context = 59392};
    CHECK(ah::usable_memory(devices[0], o) < ah::units::gib);
    for (const bool spread : {false, true}) {
        ah::plan_options so = o;
        so.spread = spread;
        CAPTURE(spread);
        const auto p = ah::plan_sharding(devices, {}, m, quant_format::q8_0, shape, so);
        CHECK(!p.fits);
        CHECK(p.outcome == ah::plan_outcome::too_large);
    }
    // suggest_quantization counts both cards (both run Q8_0) but tests the pipeline over
    // card 1 alone, and picks a format that plans there.
    const auto s = ah::suggest_quantization(devices, m, shape, o);
    REQUIRE(s.fits);
    CHECK(ah::bits_per_weight(s.format) < ah::bits_per_weight(quant_format::q8_0));
    CHECK(s.devices == 2);
    const auto small = ah::plan_sharding(devices, {}, m, s.format, shape, o);
    check_coverage(small, m.layers);
    for (const auto& d : small.devices) CHECK(d.device == 1);

    // With a third card free, the model is a pipeline over cards 1 and 2, card 0 left out.
    devices.push_back(card("RTX 4090", 2));
    for (const bool spread : {false, true}) {
        ah::plan_options so = o;
        so.spread = spread;
        CAPTURE(spread);
        const auto p = ah::plan_sharding(devices, {}, m, quant_format::q8_0, shape, so);
        check_coverage(p, m.layers);
        CHECK(p.stages == 2);
        for (const auto& d : p.devices) CHECK(d.device != 0);
    }
    const auto s3 = ah::suggest_quantization(devices, m, shape, o);
    REQUIRE(s3.fits);
    CHECK(ah::bits_per_weight(s3.format) >= ah::bits_per_weight(quant_format::q8_0));
    const auto big = ah::plan_sharding(devices, {}, m, s3.format, shape, o);
    check_coverage(big, m.layers);
    for (const auto& d : big.devices) CHECK(d.device != 0);
}

TEST_CASE("plan_sharding: every device of a plan that fits holds its share, busy devices among them") {
    // Random clusters of two to six cards of one model, some of them mostly taken by other
    // jobs (count_memory_in_use), every catalogue model, long contexts: whatever the
    // planner or suggest_quantization answers, no device of a plan that fits is over its
    // usable memory.
    std::uint64_t state = 0x9e3779b97f4a7c15ull;
    const auto next = [&](std::uint64_t n) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        return state % n;
    };
    const char* names[] = {"RTX 4090", "RTX 3060", "L4", "A100 SXM4 80GB"};
    const quant_format formats[] = {quant_format::bf16, quant_format::q8_0, quant_format::q4_k_m};
    std::size_t fits = 0, total = 0;
    for (int c = 0; c < 600; ++c) {
        const auto* spec = ah::find_device(names[next(std::size(names))]);
        REQUIRE(spec != nullptr);
        const auto n = static_cast<std::uint32_t>(2 + next(5));
        std::vector<ah::accelerator_profile> devices;
        for (std::uint32_t i = 0; i < n; ++i) {
            auto d = ah::profile_from_spec(*spec, i);
            const std::uint64_t memory = d.memory_bytes.value_or(0);
            if (next(3) == 0) d.memory_used_bytes = {memory - memory / (4 + next(60)), ah::origin::user};
            devices.push_back(d);
        }
        const auto& m = ah::model_catalogue[next(ah::model_catalogue_size)];
        const ah::inference_shape shape{.context = static_cast<std::uint32_t>(4096 + next(126976))};
        ah::plan_options o;
        o.count_memory_in_use = true;
        o.spread = next(2) == 0;
        CAPTURE(c);
        CAPTURE(m.id);
        const auto q = formats[next(std::size(formats))];
        const auto p = ah::plan_sharding(devices, {}, m, q, shape, o);
        if (p.fits) check_coverage(p, m.layers);
        const auto s = ah::suggest_quantization(devices, m, shape, o);
        if (s.fits) {
            const auto ps = ah::plan_sharding(devices, {}, m, s.format, shape, o);
            CHECK(ps.fits);
            if (ps.fits) check_coverage(ps, m.layers);
        }
        fits += p.fits;
        ++total;
    }
    CHECK(fits > total / 10);
    CHECK(fits < total * 9 / 10);
}

TEST_CASE("plan_sharding: a stage holds the cache of the full-attention layers it may get") {
    // Models that attend to a short window on most layers and to the whole context on the
    // others: a stage's cache depends on how many of the full layers fall in its range.
    // Checked against each model's published layer pattern (transformers' configs): Gemma 3
    // makes every sixth layer global, Llama 4 every fourth, Gemma 2 and gpt-oss every second
    // (the windowed layer first).
    const auto full_layer = [](const ah::model_spec& m, std::uint32_t i) {
        if (m.family == "gemma3") return (i + 1) % 6 == 0;
        if (m.family == "llama4") return (i + 1) % 4 == 0;
        return i % 2 == 1; // gemma2, gpt-oss
    };
    std::size_t fits = 0, stages = 0;
    for (const auto& m : ah::model_catalogue) {
        if (m.sliding_window_layers == 0 || m.sliding_window_layers >= m.layers) continue;
        for (const char* name : {"RTX 4060 Ti 16GB", "RTX 4090", "L4"})
            for (std::uint32_t n = 2; n <= 6; ++n)
                for (const std::uint32_t context : {32768u, 131072u})
                    for (const auto q : {quant_format::q4_k_m, quant_format::q8_0}) {
                        const ah::inference_shape shape{.context = context};
                        const auto p = ah::plan_sharding(cards(name, n), {}, m, q, shape);
                        if (!p.fits) continue;
                        ++fits;
                        CAPTURE(m.id);
                        CAPTURE(name);
                        CAPTURE(n);
                        CAPTURE(context);
                        const std::uint64_t full = ah::layer_kv_cache_bytes(m, shape);
                        const std::uint64_t window = ah::layer_kv_cache_bytes(
                            m, {.context = context < m.sliding_window ? context : m.sliding_window});
                        for (const auto& d : p.devices) {
                            std::uint64_t kv = 0;
                            for (std::uint32_t i = d.first_layer; i < d.last_layer; ++i)
                                kv += full_layer(m, i) ? full : window;
                            CHECK(d.kv_cache_bytes >= kv);
                            CHECK(d.weights_bytes + kv + d.overhead_bytes <= d.usable_bytes);
                            stages += d.layers() < m.layers;
                        }
                    }
    }
    CHECK(fits > 20);
    CHECK(stages > 20); // pipelines, not only single devices
}

TEST_CASE("plan_sharding: once a kind fits, a kind that can hold the model is still planned") {
    // Llama 3.1 8B in BF16 needs about 17 GB: two RX 7600 XT (the first kind seen) hold
    // it as a pipeline; the RTX 4090 after them holds it alone, with less than twice that
    // usable, and decodes faster, so it must be planned and win. A TPU v5e (16 GiB) runs
    // BF16 but holds the model nowhere: passing it over leaves the answer as it is.
    const auto& m = model("llama-3.1-8b");
    std::vector<ah::accelerator_profile> devices = cards("RX 7600 XT", 2);
    devices.push_back(card("RTX 4090", 0));
    const auto p = ah::plan_sharding(devices, {}, m, quant_format::bf16);
    REQUIRE(p.fits);
    CHECK(p.kind == ah::device_kind::cuda_gpu);
    CHECK(p.strategy == ah::shard_strategy::single_device);
    CHECK(p.usable_bytes >= p.memory.total_bytes());
    CHECK(p.usable_bytes < 2 * p.memory.total_bytes());
    const auto amd = ah::plan_sharding(std::span(devices).first(2), {}, m, quant_format::bf16);
    REQUIRE(amd.fits);
    CHECK(amd.decode_tokens_per_second < p.decode_tokens_per_second);

    const auto tpu = card("TPU v5e", 0);
    const auto alone = ah::plan_sharding(std::span(&tpu, 1), {}, m, quant_format::bf16);
    CHECK(alone.candidate_devices == 1); // a candidate: the pass-over, not the format, leaves it out
    CHECK(!alone.fits);
    CHECK(alone.usable_bytes < alone.memory.total_bytes());
    devices.push_back(tpu);
    const auto q = ah::plan_sharding(devices, {}, m, quant_format::bf16);
    CHECK(q.kind == p.kind);
    CHECK(q.strategy == p.strategy);
    CHECK(q.replicas == p.replicas);
    CHECK(q.usable_bytes == p.usable_bytes);
    CHECK(q.decode_tokens_per_second == p.decode_tokens_per_second);
    REQUIRE(q.devices.size() == 1);
    CHECK(q.devices[0].device == 2);
}

TEST_CASE("plan_sharding: a fast link never makes a model stop fitting") {
    // A tensor-parallel group replicates what does not divide over its ranks: the KV heads
    // when there are fewer than ranks (Qwen3 30B-A3B has 4), each rank's rounded-up share
    // (Phi-4's 10 KV heads over 4 ranks: 3 each). With a long context and many sequences
    // the KV cache dominates; where the island's widest group cannot hold the model, a
    // narrower one or a pipeline over the same devices may: the plan with the link must fit
    // whenever the plan without it does, and what suggest_quantization picks must plan.
    const ah::inference_shape shapes[] = {{.context = 131072}, {.context = 131072, .batch = 32},
                                          {.context = 32768, .batch = 32}};
    std::size_t fits = 0, total = 0;
    for (std::uint32_t n : {2u, 4u, 8u}) {
        const auto devs = cards("H100 SXM", n);
        const std::vector<ah::interconnect> nvs{
            link(ah::interconnect_kind::nvswitch, ah::link_scope::intra_node, 900, iota(0, n))};
        for (const auto& m : ah::model_catalogue)
            for (const auto& shape : shapes)
                for (const auto q : {quant_format::fp32, quant_format::bf16, quant_format::q8_0, quant_format::q4_k_m,
                                     quant_format::q2_k}) {
                    CAPTURE(n);
                    CAPTURE(m.id);
                    CAPTURE(shape.batch);
                    CAPTURE(ah::to_string(q));
                    const auto with = ah::plan_sharding(devs, nvs, m, q, shape);
                    const auto without = ah::plan_sharding(devs, {}, m, q, shape);
                    CHECK((!without.fits || with.fits));
                    if (with.fits) check_coverage(with, m.layers);
                    fits += with.fits;
                    ++total;
                }
    }
    CHECK(fits > total / 10);
    // Cases that did not fit with the link: the widest group holds too much.
    const auto four = cards("H100 SXM", 4);
    const std::vector<ah::interconnect> nvs4{
        link(ah::interconnect_kind::nvswitch, ah::link_scope::intra_node, 900, iota(0, 4))};
    const auto phi = ah::plan_sharding(four, nvs4, model("phi-4"), quant_format::fp32, {.context = 32768, .batch = 32});
    CHECK(phi.fits);
    CHECK(phi.tensor_parallel < 4);
    const auto eight = cards("H100 SXM", 8);
    const std::vector<ah::interconnect> nvs8{
        link(ah::interconnect_kind::nvswitch, ah::link_scope::intra_node, 900, iota(0, 8))};
    const auto& qwen = model("qwen3-30b-a3b");
    const ah::inference_shape many{.context = 131072, .batch = 32};
    CHECK(ah::plan_sharding(eight, nvs8, qwen, quant_format::bf16, many).fits);
    const auto s = ah::suggest_quantization(eight, qwen, many);
    REQUIRE(s.fits);
    CHECK(ah::plan_sharding(eight, nvs8, qwen, s.format, many).fits);
}

// ---- plan_best_format: the planner's word on the format.
namespace {

// `n` catalogue devices joined by one intra-node link over all of them (none: no link).
grid_cluster linked(std::string_view name, std::uint32_t n, ah::interconnect_kind kind, double gbps) {
    grid_cluster c;
    c.devices = cards(name, n);
    if (kind != ah::interconnect_kind::none && n > 1)
        c.links.push_back(link(kind, ah::link_scope::intra_node, gbps, iota(0, n)));
    return c;
}

// suggest_quantization's candidates, worked out here from the table: every format up to
// 16 bits that none supersedes, most bits first, table order among equals.
std::vector<quant_format> default_candidates() {
    std::vector<quant_format> out;
    for (const auto& row : ah::quant_table) {
        if (row.bits_per_weight > 16.0 || ah::superseded_by(row.id) != row.id) continue;
        auto at = out.end();
        while (at != out.begin() && ah::bits_per_weight(*(at - 1)) < row.bits_per_weight) --at;
        out.insert(at, row.id);
    }
    return out;
}

bool all_native(std::span<const ah::accelerator_profile> devs, const ah::shard_plan& p) {
    for (const auto& d : p.devices)
        if (ah::support_for(devs[d.device], p.quant) != ah::format_support::native) return false;
    return !p.devices.empty();
}

} // namespace

TEST_CASE("plan_best_format") {
    SUBCASE("tensor parallel over NVSwitch holds more bits than the layer-pipeline test allows") {
        // Llama 3.1 70B at 32k context on four A100 40GB: the suggestion's fit test keeps the
        // embedding, output head and logits buffer whole on one card; the planner splits
        // them over four ranks, which holds bf16.
        const ah::inference_shape mid{.context = 32768};
        const auto c = linked("A100 SXM4 40GB", 4, ah::interconnect_kind::nvswitch, 600);
        const auto& m = model("llama-3.1-70b");
        const auto s = ah::suggest_quantization(c.devices, m, mid);
        REQUIRE(s.fits);
        CHECK(ah::plan_sharding(c.devices, c.links, m, quant_format::bf16, mid).fits);
        const auto b = ah::plan_best_format(c.devices, c.links, m, mid);
        REQUIRE(b.choice.fits);
        CHECK(ah::bits_per_weight(b.choice.format) > ah::bits_per_weight(s.format));
        CHECK(ah::bits_per_weight(b.choice.format) == 16);
        CHECK(b.choice.outcome == ah::plan_outcome::fits);
        CHECK(b.choice.kind == ah::device_kind::cuda_gpu);
        CHECK(b.choice.devices == 4);
        CHECK(b.plan.fits);
        CHECK(b.plan.quant == b.choice.format);
        CHECK(b.plan.tensor_parallel > 1);
        CHECK(b.choice.memory.total_bytes() == b.plan.memory.total_bytes());
        CHECK(b.choice.usable_bytes == b.plan.usable_bytes);
        CHECK(b.choice.support == (all_native(c.devices, b.plan) ? ah::format_support::native
                                                                 : ah::format_support::dequantized));
        check_coverage(b.plan, m.layers);
        // Without the link every chip is its own island: the planner builds the pipeline
        // the suggestion assumed, and agrees with it.
        const auto alone = ah::plan_best_format(c.devices, {}, m, mid);
        CHECK(alone.choice.format == s.format);
    }
    SUBCASE("Llama 3.1 405B on four H100s over NVLink: Q5_K_M, not the larger and worse Q5_1") {
        const auto c = linked("H100 SXM", 4, ah::interconnect_kind::nvswitch, 900);
        const auto b = ah::plan_best_format(c.devices, c.links, model("llama-3.1-405b"));
        REQUIRE(b.choice.fits);
        CHECK(b.choice.format == quant_format::q5_k_m);
        CHECK(b.plan.fits);
    }
    SUBCASE("the planner fits where the suggestion finds nothing") {
        // Qwen3 32B, 32k context x 8 sequences, on two A100 40GB: no candidate passes the
        // suggestion's test, the smallest one plans with the cards tensor parallel.
        const ah::inference_shape eight_long{.context = 32768, .batch = 8};
        const auto c = linked("A100 SXM4 40GB", 2, ah::interconnect_kind::nvswitch, 600);
        const auto& m = model("qwen3-32b");
        const auto s = ah::suggest_quantization(c.devices, m, eight_long);
        CHECK_FALSE(s.fits);
        const auto b = ah::plan_best_format(c.devices, c.links, m, eight_long);
        REQUIRE(b.choice.fits);
        CHECK(b.plan.fits);
        CHECK(b.choice.outcome == ah::plan_outcome::fits);
        CHECK(b.choice.format == b.plan.quant);
        CHECK(b.choice.format == default_candidates().back()); // only the smallest fits
        check_coverage(b.plan, m.layers);
    }
    SUBCASE("nothing fits: the suggestion's answer and the smallest candidate's plan") {
        const auto c = linked("RTX 3060", 1, ah::interconnect_kind::none, 0);
        const auto& m = model("llama-3.1-405b");
        const auto s = ah::suggest_quantization(c.devices, m);
        const auto b = ah::plan_best_format(c.devices, c.links, m);
        CHECK_FALSE(b.choice.fits);
        CHECK(b.choice.outcome == s.outcome);
        CHECK(b.choice.format == s.format);
        CHECK(b.choice.format == default_candidates().back());
        CHECK_FALSE(b.plan.fits);
        CHECK(b.plan.quant == s.format);
        CHECK(b.plan.outcome == ah::plan_outcome::too_large);
        const auto none = ah::plan_best_format({}, {}, m);
        CHECK(none.choice.outcome == ah::plan_outcome::no_devices);
        CHECK(none.plan.outcome == ah::plan_outcome::no_devices);
        ah::model_spec empty;
        CHECK(ah::plan_best_format(c.devices, {}, empty).plan.outcome == ah::plan_outcome::bad_model);
    }
    SUBCASE("equal bits: the format the plan's devices run natively") {
        // As for suggest_quantization: H100 multiplies IQ4_XS's int8 and dequantizes MXFP4;
        // B200 computes fp4.
        ah::plan_options o;
        o.formats = {quant_format::mxfp4, quant_format::iq4_xs};
        const auto h = ah::plan_best_format(cards("H100 SXM", 1), {}, model("llama-3.1-8b"), {}, o);
        CHECK(h.choice.format == quant_format::iq4_xs);
        CHECK(h.choice.support == ah::format_support::native);
        const auto b = ah::plan_best_format(cards("B200", 1), {}, model("llama-3.1-8b"), {}, o);
        CHECK(b.choice.format == quant_format::mxfp4);
        CHECK(b.choice.support == ah::format_support::native);
        // A format list is kept as given: nothing outside it is planned.
        o.formats = {quant_format::q4_k_m};
        CHECK(ah::plan_best_format(cards("H100 SXM", 8), {}, model("llama-3.1-8b"), {}, o).choice.format ==
              quant_format::q4_k_m);
    }
    SUBCASE("a discrete card wins over an integrated GPU with more shared memory") {
        const auto devs = card_and_igpu();
        const auto b = ah::plan_best_format(devs, {}, model("llama-3.1-8b"));
        REQUIRE(b.choice.fits);
        CHECK(b.choice.kind == ah::device_kind::cuda_gpu);
        CHECK(b.plan.kind == ah::device_kind::cuda_gpu);
        CHECK(b.choice.format == ah::suggest_quantization(devs, model("llama-3.1-8b")).format);
    }
}

TEST_CASE("plan_best_format: properties over models, device sets and shapes") {
    // Every device here has a known bandwidth, so plans of any kind compete on bits alone.
    const std::vector<grid_cluster> sets{
        linked("A100 SXM4 40GB", 4, ah::interconnect_kind::nvswitch, 600),
        linked("A100 SXM4 40GB", 2, ah::interconnect_kind::nvswitch, 600),
        linked("TPU v5e", 4, ah::interconnect_kind::ici, 1600),
        linked("MI300X", 8, ah::interconnect_kind::xgmi, 896),
        linked("H100 SXM", 4, ah::interconnect_kind::nvswitch, 900),
        linked("RTX 4090", 2, ah::interconnect_kind::none, 0),
        grid_mix(2, 6), // A100 40GB, NVLink pairs
    };
    const char* models[] = {"llama-3.1-8b", "llama-3.1-70b", "qwen-2.5-72b", "qwen3-235b-a22b", "phi-4",
                            "mixtral-8x7b", "llama-3.1-405b", "qwen3-32b"};
    const ah::inference_shape shapes[] = {{.context = 4096}, {.context = 131072}, {.context = 32768, .batch = 8}};
    const auto cand = default_candidates();
    std::size_t fitted = 0, better = 0, rescued = 0;
    for (const auto& c : sets)
        for (const std::string id : models)
            for (const auto& shape : shapes) {
                const auto& m = model(id);
                CAPTURE(c.devices.front().name.view());
                CAPTURE(c.devices.size());
                CAPTURE(id);
                CAPTURE(shape.context);
                std::vector<bool> fits(cand.size()), native(cand.size());
                bool any = false;
                for (std::size_t i = 0; i < cand.size(); ++i) {
                    const auto p = ah::plan_sharding(c.devices, c.links, m, cand[i], shape);
                    fits[i] = p.fits;
                    native[i] = all_native(c.devices, p);
                    any = any || p.fits;
                }
                const auto at = [&](quant_format f) {
                    return static_cast<std::size_t>(std::ranges::find(cand, f) - cand.begin());
                };
                const auto s = ah::suggest_quantization(c.devices, m, shape);
                const auto b = ah::plan_best_format(c.devices, c.links, m, shape);
                CHECK(b.choice.fits == any);
                CHECK(b.plan.fits == b.choice.fits);
                CHECK(b.plan.quant == b.choice.format);
                if (!b.choice.fits) {
                    CHECK(b.choice.format == s.format);
                    CHECK(b.choice.outcome == s.outcome);
                    continue;
                }
                ++fitted;
                const auto bi = at(b.choice.format);
                REQUIRE(bi < cand.size());
                const double bits = ah::bits_per_weight(b.choice.format);
                CHECK(b.choice.support ==
                      (native[bi] ? ah::format_support::native : ah::format_support::dequantized));
                CHECK(b.choice.kind == b.plan.kind);
                CHECK(b.choice.devices == b.plan.candidate_devices);
                CHECK(b.choice.usable_bytes == b.plan.usable_bytes);
                CHECK(b.choice.memory.total_bytes() == b.plan.memory.total_bytes());
                CHECK(b.plan.decode_tokens_per_second ==
                      ah::plan_sharding(c.devices, c.links, m, b.choice.format, shape).decode_tokens_per_second);
                // No candidate of more bits plans; of equal bits, one earlier in the order
                // plans only where the answer is the suggestion or runs natively and it not.
                const bool is_suggestion = s.fits && b.choice.format == s.format;
                for (std::size_t i = 0; i < cand.size(); ++i) {
                    const double ib = ah::bits_per_weight(cand[i]);
                    if (ib > bits) CHECK_FALSE(fits[i]);
                    if (ib != bits || i == bi || !fits[i] || is_suggestion) continue;
                    if (native[i]) CHECK(native[bi]);
                    if (i < bi) CHECK((native[bi] && !native[i]));
                }
                // The suggestion stands when the planner fits it and nothing of more bits.
                if (s.fits && fits[at(s.format)]) {
                    bool more = false;
                    for (std::size_t i = 0; i < cand.size(); ++i)
                        more = more || (fits[i] && ah::bits_per_weight(cand[i]) > ah::bits_per_weight(s.format));
                    if (!more) CHECK(b.choice.format == s.format);
                    CHECK(bits >= ah::bits_per_weight(s.format));
                    better += bits > ah::bits_per_weight(s.format);
                }
                rescued += !s.fits;
            }
    CHECK(fitted > 40);  // most cases plan,
    CHECK(better > 0);   // some in more bits than the suggestion,
    CHECK(rescued > 0);  // and some where the suggestion found nothing
}

TEST_CASE("slot_list") {
    ah::slot_list<ah::device_shard, 3> l;
    CHECK(l.empty());
    CHECK(l.capacity() == 3);
    ah::device_shard d;
    for (std::uint16_t i = 0; i < 3; ++i) {
        d.device = i;
        CHECK(l.push_back(d));
    }
    CHECK(l.full());
    CHECK_FALSE(l.push_back(d)); // full: nothing appended
    CHECK(l.size() == 3);
    // emplace_back gives a default device_shard.
    ah::slot_list<ah::device_shard, 2> m;
    auto& fresh = m.emplace_back();
    CHECK(fresh.tensor_size == 1);
    CHECK(fresh.weights_bytes == 0);
    // Copies hold the same filled slots; iteration sees exactly them.
    const auto copy = l;
    std::vector<std::uint16_t> seen;
    for (const auto& s : copy) seen.push_back(s.device);
    CHECK(seen == std::vector<std::uint16_t>{0, 1, 2});
    CHECK(copy.end() - copy.begin() == 3);
    CHECK(copy[2].device == 2);
}

// Described devices linked as built (catalogue_links): tensor parallelism over the row's
// fast link never spans two of its groups (two HGX boards, two bridged pairs); where a
// tensor-parallel group does cross groups, the plan says its link is PCIe.
TEST_CASE("plan_sharding on catalogue devices linked as built") {
    const auto& llama405 = *ah::find_model("llama-3.1-405b");
    const auto& llama70 = *ah::find_model("llama-3.1-70b");
    std::size_t rows = 0, tensor_groups = 0;
    for (const auto& row : ah::device_catalogue) {
        if (row.link_domain < 2 || row.memory_bytes == 0) continue;
        ++rows;
        const std::uint32_t n = std::min<std::uint32_t>(2u * row.link_domain + 1u, 64u);
        std::vector<ah::accelerator_profile> devices;
        for (std::uint32_t i = 0; i < n; ++i) devices.push_back(ah::profile_from_spec(row, i));
        const auto links = ah::catalogue_links(row, n);
        for (const auto* m : {&llama405, &llama70}) {
            for (const bool spread : {false, true}) {
                ah::plan_options o;
                o.spread = spread;
                const auto best = ah::plan_best_format(devices, links, *m, {}, o);
                if (!best.plan.fits) continue;
                const auto& p = best.plan;
                CAPTURE(row.name);
                CAPTURE(m->id);
                CAPTURE(spread);
                for (const auto& a : p.devices) {
                    if (a.tensor_size < 2) continue;
                    for (const auto& b : p.devices) {
                        if (b.replica != a.replica || b.stage != a.stage) continue;
                        ++tensor_groups;
                        if (a.device / row.link_domain != b.device / row.link_domain)
                            CHECK(p.tensor_link.kind == ah::interconnect_kind::pcie);
                    }
                }
                if (p.tensor_parallel > 1 && p.tensor_link.kind == row.link)
                    CHECK(p.tensor_parallel <= row.link_domain);
            }
        }
    }
    CHECK(rows >= 40);
    CHECK(tensor_groups > 0);
    // Sixteen H100 SXM: one board's eight hold each stage, the two boards are two stages.
    const auto& h100 = *ah::find_device("H100 SXM");
    std::vector<ah::accelerator_profile> sixteen;
    for (std::uint32_t i = 0; i < 16; ++i) sixteen.push_back(ah::profile_from_spec(h100, i));
    const auto p = ah::plan_sharding(sixteen, ah::catalogue_links(h100, 16), llama405, quant_format::bf16);
    REQUIRE(p.fits);
    CHECK(p.tensor_parallel == 8);
    CHECK(p.stages == 2);
    CHECK(p.tensor_link.kind == ah::interconnect_kind::nvlink);
    CHECK(p.pipeline_link.kind == ah::interconnect_kind::pcie);
}
