// Smoke test of an installed ai-hwaccel: the catalogue answers, and the backends the
// package options asked for are the ones compiled in.
#include <ai_hwaccel/core.hpp>

#include <cstdio>

int main() {
    namespace ah = ai_hwaccel;
    const ah::device_spec* spec = ah::find_device("H100 SXM");
    if (spec == nullptr) {
        std::puts("ai_hwaccel: the device catalogue has no H100");
        return 1;
    }
    std::printf("ai_hwaccel %s backends:", ah::version.text);
    for (const ah::backend_info& b : ah::backend_table) {
        if (b.compiled) std::printf(" %.*s", static_cast<int>(b.name.size()), b.name.data());
    }
    std::printf(" mask=%#x\n", static_cast<unsigned>(ah::compiled_backend_mask));
    return 0;
}
