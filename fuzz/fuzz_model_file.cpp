// Fuzz target: the model file header readers of plan/model_file.hpp.
//
// Input: one selector byte (modulo 4), then
//   0: a GGUF file                      → read_gguf (with bit 2 of the selector set: the
//      first and second halves as two files of a split model)
//   1: a safetensors file               → read_safetensors without config.json
//   2: config.json, a NUL, a safetensors file → read_safetensors with that config.json
//   3: a Hugging Face config.json       → parse_hf_config
// A model the reader accepts is also turned into a model_spec, as the planner uses it.
#include "fuzz_common.hpp"

#include "ai_hwaccel/plan/model_file.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace ah = ai_hwaccel;

namespace {

std::span<const std::byte> bytes_of(std::string_view s) noexcept {
    return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

void use(const ah::model_file_info& r) {
    if (r.model) fuzz::consume(r.model->spec());
    fuzz::consume(r);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto in = fuzz::select(data, size);
    switch (in.selector % 4) {
    case 0:
        if (in.selector & 4) {
            const auto half = in.text.size() / 2;
            const std::span<const std::byte> more[] = {bytes_of(in.text.substr(half))};
            use(ah::read_gguf(bytes_of(in.text.substr(0, half)), more));
        } else {
            use(ah::read_gguf(bytes_of(in.text)));
        }
        break;
#if AI_HWACCEL_JSON
    case 1: use(ah::read_safetensors(bytes_of(in.text))); break;
    case 2: {
        const auto [config, file] = fuzz::split_nul(in.text);
        use(ah::read_safetensors(bytes_of(file), config));
        break;
    }
    case 3: {
        std::vector<ah::model_file_problem> problems;
        const auto m = ah::parse_hf_config(in.text, problems);
        if (m) fuzz::consume(m->spec());
        fuzz::consume(problems);
        break;
    }
#endif
    default: break;
    }
    return 0;
}
