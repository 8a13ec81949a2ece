// Fuzz target: every row of `capture_formats` (detect/formats.hpp) through `parse_capture`,
// and every row's sniffer through `recognise_format`.
//
// Input: one selector byte, then the captured text. A selector below the number of rows
// reads the text as that row; any other value lets `recognise_format` choose, as
// `ai-hwaccel parse` does (the seeds from the real fixtures use 0xff). The result is also
// written as JSON, as `ai-hwaccel parse --json` does, so strings and numbers the parser
// lets through are checked for what the writer accepts.
#include "fuzz_common.hpp"

#include "ai_hwaccel/detect/formats.hpp"
#include "ai_hwaccel/io/json.hpp"

#include <cstddef>
#include <cstdint>
#include <iterator>

namespace ah = ai_hwaccel;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto in = fuzz::select(data, size);
    constexpr std::size_t rows = std::size(ah::capture_formats);
    const ah::capture_format* f = nullptr;
    if (in.selector < rows) {
        f = &ah::capture_formats[in.selector];
        fuzz::consume(f->sniff(in.text));
    } else {
        f = ah::recognise_format(in.text);
    }
    if (f == nullptr) return 0;
    const ah::capture_parse r = ah::parse_capture(in.text, *f);
#if AI_HWACCEL_JSON
    nlohmann::json j;
    j["devices"] = r.devices;
    if (r.host) j["host"] = *r.host;
    if (r.system) j["system"] = *r.system;
    j["warnings"] = r.warnings;
    fuzz::consume(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
#else
    fuzz::consume(r);
#endif
    return 0;
}
