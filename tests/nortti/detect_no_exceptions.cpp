// Detection and planning in a build without exceptions or RTTI (every backend compiled
// in, no JSON): the whole detection engine, each backend and the planning room must
// compile there, and a detection of this machine and a plan must run.
#include "ai_hwaccel/cache/async.hpp"
#include "ai_hwaccel/cache/lazy.hpp"
#include "ai_hwaccel/cache/ttl.hpp"
#include "ai_hwaccel/detect/detect.hpp"
#include "ai_hwaccel/detect/formats.hpp"
#include "ai_hwaccel/plan/cluster.hpp"
#include "ai_hwaccel/plan/cost.hpp"
#include "ai_hwaccel/plan/shard.hpp"
#include "ai_hwaccel/plan/training.hpp"

#include <cstdio>

namespace ah = ai_hwaccel;

int main() {
    const auto reg = ah::detect();
    const auto* m = ah::find_model("llama-3.1-8b");
    const auto gpu = ah::profile_from_spec(*ah::find_device("H100 SXM"));
    const auto plan = ah::plan_sharding(std::span<const ah::accelerator_profile>(&gpu, 1), {}, *m,
                                        ah::quant_format::bf16);
    std::printf("devices %zu, plan fits %d\n", reg.size(), plan.fits ? 1 : 0);
    return reg.size() >= 1 && plan.fits ? 0 : 1;
}
