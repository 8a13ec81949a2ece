// An embedded product whose hardware is known when it is built: an edge box with one
// NVIDIA L4 serving Llama 3.1 8B in FP8 to four users at 8k context.
//
// The build compiles one backend (CUDA; see CMakeLists.txt: AI_HWACCEL_BACKENDS_NONE=1
// AI_HWACCEL_BACKEND_CUDA=1), so the binary carries no other vendor's probe, and the
// deployment is planned by the compiler: if the model stopped fitting (a larger context,
// a bigger model, a smaller board) the build would fail at the static_assert below instead
// of the device failing in the field. The output is deterministic and checked by the tests.
#include <ai_hwaccel/core.hpp>
#include <ai_hwaccel/plan/models.hpp>
#include <ai_hwaccel/plan/shard.hpp>

#include <array>
#include <cstdio>
#include <span>

namespace ah = ai_hwaccel;

namespace product {
constexpr std::array<ah::accelerator_profile, 1> board{ah::profile_from_spec(*ah::find_device("NVIDIA L4"))};
constexpr const ah::model_spec& model = *ah::find_model("llama-3.1-8b");
constexpr ah::quant_format format = ah::quant_format::fp8_e4m3;
constexpr ah::inference_shape shape{.context = 8192, .batch = 4};
constexpr ah::shard_plan plan =
    ah::plan_sharding(std::span<const ah::accelerator_profile>(board), {}, model, format, shape);
} // namespace product

// The configuration this file was built for: CUDA and nothing else.
static_assert(ah::is_compiled(ah::backend_id::cuda));
static_assert(!ah::is_compiled(ah::backend_id::rocm) && !ah::is_compiled(ah::backend_id::vulkan));
static_assert(ah::compiled_backend_mask == 1u << static_cast<unsigned>(ah::backend_id::cuda));

// The deployment, checked by the compiler.
static_assert(product::plan.fits, "Llama 3.1 8B in FP8 no longer fits the L4 at this context and batch");
static_assert(product::plan.strategy == ah::shard_strategy::single_device);
static_assert(product::plan.devices[0].total_bytes() <= product::plan.devices[0].usable_bytes);
// The L4 computes in FP8 natively (Ada), so no dequantization is involved.
static_assert(ah::support_for(product::board[0], product::format) == ah::format_support::native);

int main() {
    constexpr auto& p = product::plan;
    constexpr ah::device_shard d = p.devices[0];
    std::printf("compiled backends:");
    for (const ah::backend_info& b : ah::backend_table)
        if (b.compiled) std::printf(" %.*s", static_cast<int>(b.name.size()), b.name.data());
    std::printf("\n");
    std::printf("plan (computed at compile time): %.*s in %.*s on %s, context %u, batch %u\n",
                static_cast<int>(product::model.name.size()), product::model.name.data(),
                static_cast<int>(ah::to_string(p.quant).size()), ah::to_string(p.quant).data(),
                product::board[0].name.c_str(), product::shape.context, product::shape.batch);
    std::printf("  %.*s, layers [%u, %u)\n", static_cast<int>(ah::to_string(p.strategy).size()),
                ah::to_string(p.strategy).data(), d.first_layer, d.last_layer);
    std::printf("  weights %.2f GiB + KV cache %.2f GiB + overhead %.2f GiB = %.2f GiB of %.2f GiB usable\n",
                ah::units::to_gib(d.weights_bytes), ah::units::to_gib(d.kv_cache_bytes),
                ah::units::to_gib(d.overhead_bytes), ah::units::to_gib(d.total_bytes()),
                ah::units::to_gib(d.usable_bytes));
    std::printf("  decode %.1f tokens/s per sequence, prefill %.0f tokens/s\n", p.decode_tokens_per_second,
                p.prefill_tokens_per_second);
    return 0;
}
