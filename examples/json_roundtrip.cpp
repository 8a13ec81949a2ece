// Detects this machine, writes the registry as JSON, reads it back, and checks the two
// registries are equal: what a program does to send a machine's description to another
// host or keep it in a file. Needs nlohmann/json (AI_HWACCEL_JSON).
#include <ai_hwaccel/ai_hwaccel.hpp>

#include <cstdio>
#include <string>

#if !AI_HWACCEL_JSON
#error "json_roundtrip needs nlohmann/json (AI_HWACCEL_JSON=1)"
#endif

int main() {
    namespace ah = ai_hwaccel;
    const ah::accelerator_registry original = ah::detect();
    const std::string text = ah::to_json_string(original);
    std::printf("wrote %zu bytes of JSON (schema_version %d) for %zu device(s) and %zu warning(s)\n", text.size(),
                ah::accelerator_registry::schema_version, original.size(), original.warnings().size());

    const ah::registry_json_result back = ah::registry_from_json(text);
    if (!back) {
        std::printf("read back failed: %s\n", back.error.c_str());
        return 1;
    }
    if (!(*back.registry == original)) {
        std::printf("the registry read back differs from the one written\n");
        return 1;
    }
    // The second writing is byte for byte the first: the format is deterministic.
    if (ah::to_json_string(*back.registry) != text) {
        std::printf("writing the registry read back gives different text\n");
        return 1;
    }
    std::printf("read back: the registries are equal\n");

    // A damaged document is refused with the place and the reason, never half-read.
    const ah::registry_json_result bad = ah::registry_from_json(R"({"schema_version": 1, "devices": [{"kind": 7}]})");
    std::printf("damaged document refused: %s\n", bad ? "no" : bad.error.c_str());
    return bad ? 1 : 0;
}
