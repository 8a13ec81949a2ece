#include "ai_hwaccel/detect/groq.hpp"

#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <string>

#if AI_HWACCEL_BACKEND_GROQ

namespace ah = ai_hwaccel;

static_assert(ah::backend_probe<ah::groq_probe, ah::host_system>);

TEST_CASE("detail::groq::device_node_number") {
    using ah::detail::groq::device_node_number;
    CHECK(device_node_number("groqA0.pci") == 0u);
    CHECK(device_node_number("groqA7.pci") == 7u);
    CHECK(device_node_number("groq3.pci") == 3u);
    CHECK_FALSE(device_node_number("groqA.pci"));
    CHECK_FALSE(device_node_number("groqAA1.pci"));
    CHECK_FALSE(device_node_number("groqA99999.pci"));
    CHECK_FALSE(device_node_number("groqA-1.pci"));
    CHECK_FALSE(device_node_number("groq.pci"));
    CHECK_FALSE(device_node_number("accel0"));
    CHECK_FALSE(device_node_number(""));
}

TEST_CASE("groq_probe") {
    SUBCASE("hand-made /dev: eight cards under both spellings, other nodes ignored") {
        test::scratch_dir dir;
        for (int i = 0; i < 8; ++i) dir.write("dev/groqA" + std::to_string(i) + ".pci", "");
        dir.write("dev/groq3.pci", ""); // the older name of card 3: counted once
        dir.write("dev/nvidia0", "");
        dir.write("dev/groq-ctl", "");
        const auto out = ah::groq_probe{}.probe(ah::host_system(dir.path().string()));
        CHECK(out.warnings.empty());
        REQUIRE(out.devices.size() == 8);
        for (std::uint32_t i = 0; i < 8; ++i) {
            const auto& d = out.devices[i];
            CHECK(d.index == i);
            CHECK(d.kind == ah::device_kind::groq_lpu);
            CHECK(d.maker == ah::vendor::groq);
            CHECK(d.name.view() == "Groq LPU");
            REQUIRE(d.spec != nullptr);
            CHECK(d.spec->name == "Groq LPU (GroqChip 1)");
            CHECK(d.memory_bytes.from == ah::origin::catalogue);
            CHECK_FALSE(d.pci.has_value());
        }
    }
    SUBCASE("no /dev, or no Groq node: nothing") {
        test::scratch_dir dir;
        CHECK(ah::groq_probe{}.probe(ah::host_system(dir.path().string())).devices.empty());
        dir.write("dev/null", "");
        const auto out = ah::groq_probe{}.probe(ah::host_system(dir.path().string()));
        CHECK(out.devices.empty());
        CHECK(out.warnings.empty());
    }
}

#endif // AI_HWACCEL_BACKEND_GROQ
