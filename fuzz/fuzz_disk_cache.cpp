// Fuzz target: the disk cache reader, `disk_cache::load` (cache/disk.hpp).
//
// Input: the bytes of the cache file. Each run writes them to registry.json in a private
// folder of its own (mode 0700, made once) and loads it with a fixed host identity
// ("fuzz-host", boot "fuzz-boot", process "fuzz-process") and a fixed clock (1700000000
// s). So that the fuzzer can reach past the envelope's checks, "@VERSION@" in the input stands for this library's
// version text and "@BACKENDS@" for its compiled backend mask (the seeds use both).
// Beyond "never crashes": a hit must hold a registry, and anything else must not.
#include "fuzz_common.hpp"

#include "ai_hwaccel/cache/disk.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

namespace ah = ai_hwaccel;

#if AI_HWACCEL_HAS_DISK_CACHE
namespace {

std::string folder;

void replace_all(std::string& s, std::string_view from, const std::string& to) {
    for (auto at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    char tmpl[] = "/tmp/ai-hwaccel-fuzz-cache-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) {
        std::perror("mkdtemp");
        std::abort();
    }
    folder = tmpl;
    // Leave nothing behind in /tmp when the run ends normally.
    std::atexit([] {
        (void)::unlink((folder + "/registry.json").c_str());
        (void)::rmdir(folder.c_str());
    });
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string text(fuzz::as_text(data, size));
    replace_all(text, "@VERSION@", ah::version.text);
    replace_all(text, "@BACKENDS@", std::to_string(ah::compiled_backend_mask));

    const std::string path = folder + "/registry.json";
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) std::abort();
    const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    if (std::fclose(f) != 0 || !written) std::abort();

    ah::disk_cache_options o;
    o.folder = folder;
    o.identity = ah::host_identity{"fuzz-host", "fuzz-boot", "fuzz-process"};
    o.now = [] { return std::chrono::system_clock::time_point(std::chrono::seconds(1700000000)); };
    const ah::disk_cache cache(o);
    const auto r = cache.load();
    if ((r.status == ah::disk_cache_status::hit) != r.registry.has_value()) {
        std::fprintf(stderr, "disk_cache::load: status %s with%s a registry\n", std::string(ah::to_string(r.status)).c_str(),
                     r.registry ? "" : "out");
        std::abort();
    }
    return 0;
}
#else
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t*, std::size_t) { return 0; }
#endif
