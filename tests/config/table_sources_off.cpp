// AI_HWACCEL_TABLE_SOURCES=0 (the CLI's setting): every table still passes its checks
// (AI_HWACCEL_CHECK_TABLES=1 runs them here as static_asserts), its rows are whole, the
// device and model rows hold no source text, and the cloud instances keep theirs (`cost`
// prints them).
#include "ai_hwaccel/ai_hwaccel.hpp"

#include <cstdio>

namespace ah = ai_hwaccel;

static_assert(AI_HWACCEL_TABLE_SOURCES == 0);

int main() {
    int failures = 0;
    for (const auto& d : ah::device_catalogue)
        if (!std::string_view(d.source).empty() || d.name.empty()) ++failures;
    for (const auto& m : ah::model_catalogue)
        if (!m.source.empty() || m.id.empty()) ++failures;
    for (const auto& i : ah::instance_catalogue)
        if (!i.price_source.starts_with("https://") || i.name.empty()) ++failures;
    // What the tables are for still works: a device, a model, a plan.
    const auto* h100 = ah::find_device("H100 SXM");
    const auto* llama = ah::find_model("llama-3.1-8b");
    if (!h100 || !llama) return 1;
    const std::vector<ah::accelerator_profile> one{ah::profile_from_spec(*h100)};
    if (!ah::plan_sharding(one, {}, *llama, ah::quant_format::bf16).fits) ++failures;
    std::printf("%s\n", failures ? "FAILED" : "tables without sources: ok");
    return failures ? 1 : 0;
}
