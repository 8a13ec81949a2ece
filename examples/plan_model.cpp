// Plans Llama 3.1 70B on a workstation with two GeForce RTX 4090s, described from the
// device catalogue (no detection: the output is deterministic and checked by the tests).
// First the quantization that fits, then how the model is laid out on the two cards and
// how fast it is expected to decode. Every number is an estimate.
#include <ai_hwaccel/core.hpp>
#include <ai_hwaccel/plan/models.hpp>
#include <ai_hwaccel/plan/shard.hpp>

#include <array>
#include <cstdio>
#include <span>
#include <string_view>

namespace ah = ai_hwaccel;

namespace {
double gib(std::uint64_t bytes) { return ah::units::to_gib(bytes); }
void print(std::string_view label, std::string_view value) {
    std::printf("%-22s %.*s\n", label.data(), static_cast<int>(value.size()), value.data());
}
} // namespace

int main() {
    const ah::device_spec* card = ah::find_device("RTX 4090");
    const ah::model_spec* model = ah::find_model("llama-3.1-70b");
    if (!card || !model) return 1;
    // Two cards in PCIe slots: no NVLink, so no links are given and the planner uses PCIe.
    const std::array<ah::accelerator_profile, 2> devices{ah::profile_from_spec(*card, 0),
                                                         ah::profile_from_spec(*card, 1)};
    const ah::inference_shape shape{.context = 8192, .batch = 1};

    std::printf("%.*s on 2 x %.*s (%.0f GiB each), context %u\n\n", static_cast<int>(model->name.size()),
                model->name.data(), static_cast<int>(card->name.size()), card->name.data(), gib(card->memory_bytes),
                shape.context);

    // 1. The highest-quality format that fits.
    const ah::quantization_choice q = ah::suggest_quantization(devices, *model, shape);
    print("suggested format", q.fits ? ah::to_string(q.format) : std::string_view("none fits"));
    print("outcome", ah::describe(q.outcome));
    std::printf("%-22s %.2f GiB (weights %.2f, KV cache %.2f, overhead %.2f)\n", "memory needed",
                gib(q.memory.total_bytes()), gib(q.memory.weights_bytes), gib(q.memory.kv_cache_bytes),
                gib(q.memory.overhead_bytes));
    std::printf("%-22s %.2f GiB on %u device(s)\n\n", "usable memory", gib(q.usable_bytes), q.devices);
    if (!q.fits) return 0;

    // 2. The layout in that format.
    const ah::shard_plan plan = ah::plan_sharding(devices, {}, *model, q.format, shape);
    print("strategy", ah::to_string(plan.strategy));
    std::printf("%-22s %u replica(s), %u stage(s), tensor parallel %u\n", "shape", plan.replicas, plan.stages,
                plan.tensor_parallel);
    print("pipeline link", ah::to_string(plan.pipeline_link.kind));
    for (const ah::device_shard& s : plan.devices) {
        std::printf("  device %u: layers [%2u, %2u)%s%s  weights %5.2f GiB, KV %4.2f GiB, overhead %4.2f GiB"
                    " = %5.2f of %5.2f GiB\n",
                    s.device, s.first_layer, s.last_layer, s.embeddings ? " +embeddings" : "",
                    s.output_head ? " +head" : "", gib(s.weights_bytes), gib(s.kv_cache_bytes),
                    gib(s.overhead_bytes), gib(s.total_bytes()), gib(s.usable_bytes));
    }
    std::printf("%-22s %.1f tokens/s per sequence (compute %.1f ms, pipeline hops %.2f ms per token)\n", "decode",
                plan.decode_tokens_per_second, plan.decode_compute_seconds * 1e3, plan.decode_pipeline_seconds * 1e3);
    // A prompt of the whole context: its 512-token micro-batches overlap on the two cards.
    std::printf("%-22s %.0f tokens/s (a prompt of %u tokens)\n", "prefill", plan.prefill_tokens_per_second,
                ah::prompt_tokens(shape));

    // 3. The same model in 16 bits does not fit, and says why.
    const ah::shard_plan bf16 = ah::plan_sharding(devices, {}, *model, ah::quant_format::bf16, shape);
    std::printf("\nin BF16: %s (%.1f GiB needed, %.1f GiB usable)\n", bf16.fits ? "fits" : "does not fit",
                gib(bf16.memory.total_bytes()), gib(bf16.usable_bytes));
    print("reason", ah::describe(bf16.outcome));
    return 0;
}
