// Cross-compiled for Windows with MinGW-w64 by the test suite (where Debian's toolchain is
// installed): the Windows backend's DXGI and GlobalMemoryStatusEx code must compile and
// link for its real target. Running it needs Windows; the test only builds it.
#include "ai_hwaccel/core.hpp"
#include "ai_hwaccel/detect/windows.hpp"

#include <cstdio>
#include <vector>

#if !AI_HWACCEL_OS_WINDOWS
#error "this file is built for Windows only"
#endif

namespace {
struct no_system { // the probe ignores its view on Windows
    ai_hwaccel::file_read read_file(std::string_view, std::size_t) const { return {}; }
    std::optional<std::vector<std::string>> list_dir(std::string_view) const { return std::nullopt; }
    std::optional<std::string> read_link(std::string_view) const { return std::nullopt; }
    bool exists(std::string_view) const { return false; }
    std::optional<std::string> env(std::string_view) const { return std::nullopt; }
    ai_hwaccel::tool_result run(const ai_hwaccel::tool_request&) const { return {}; }
};
} // namespace

int main() {
    namespace ah = ai_hwaccel;
    std::vector<ah::warning> warnings;
    const auto memory = ah::windows_memory_status(warnings);
    std::printf("memory: %llu bytes\n", static_cast<unsigned long long>(memory.total_bytes.value_or(0)));
    const auto out = ah::windows_probe{}.probe(no_system{});
    for (const auto& d : out.devices)
        std::printf("%u %s %llu\n", d.index, d.name.c_str(), static_cast<unsigned long long>(d.memory_bytes.value_or(0)));
    for (const auto& w : out.warnings) std::printf("warning: %s\n", w.message.c_str());
    return 0;
}
