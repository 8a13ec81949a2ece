// A consumer's program: it uses the tables, the registry and detection, and fails loudly
// if any of them does not behave.
#include <ai_hwaccel/ai_hwaccel.hpp>

#include <cstdio>

int main() {
    namespace ah = ai_hwaccel;
    const ah::device_spec* h100 = ah::find_device("H100 SXM");
    if (!h100 || h100->memory_bandwidth_gbps < 3000) {
        std::puts("catalogue lookup failed");
        return 1;
    }
    static_assert(ah::bits_per_weight(ah::quant_format::q8_0) == 8.5);
#ifdef EXPECTED_BACKEND_MASK
    // The consumer asked CMake for a backend set; the headers must see exactly that set.
    if (ah::compiled_backend_mask != EXPECTED_BACKEND_MASK) {
        std::printf("backend mask %#x, expected %#x\n", ah::compiled_backend_mask, EXPECTED_BACKEND_MASK);
        return 1;
    }
#endif
    const auto reg = ah::detect();
    if (reg.all().empty() || !reg.all()[0].is_cpu()) {
        std::puts("detect() returned no CPU profile");
        return 1;
    }
    auto what_if = reg.what_if_add(std::vector{ah::profile_from_spec(*h100)});
    if (!what_if.has_accelerator() || what_if.best_available()->spec != h100) {
        std::puts("what-if registry is wrong");
        return 1;
    }
    std::printf("consumer ok: ai_hwaccel %s, %zu device(s) detected, best what-if device: %s\n",
                ah::version.text, reg.size(), what_if.best_available()->name.c_str());
    return 0;
}
