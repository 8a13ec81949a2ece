// Fuzz target: the JSON registry reader, `registry_from_json` (io/json.hpp).
//
// Input: JSON text, as `ai-hwaccel detect --json` writes it (the seeds are the fixture
// machines' expected.json files). Besides "never crashes", it checks one property: a
// registry the reader accepts is written back by `to_json_string`, that text is read
// again, and writing the second registry gives the same text (the reader and the writer
// agree on everything the reader lets in).
#include "fuzz_common.hpp"

#include "ai_hwaccel/io/json.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace ah = ai_hwaccel;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto first = ah::registry_from_json(fuzz::as_text(data, size));
    if (!first) return 0;
    const std::string written = ah::to_json_string(*first.registry);
    const auto second = ah::registry_from_json(written);
    if (!second) {
        std::fprintf(stderr, "registry_from_json refused what to_json_string wrote: %s\n%s\n", second.error.c_str(),
                     written.c_str());
        std::abort();
    }
    const std::string rewritten = ah::to_json_string(*second.registry);
    if (rewritten != written) {
        std::fprintf(stderr, "JSON round trip not stable:\n--- first\n%s\n--- second\n%s\n", written.c_str(),
                     rewritten.c_str());
        std::abort();
    }
    return 0;
}
