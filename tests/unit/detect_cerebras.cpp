#include "ai_hwaccel/detect/cerebras.hpp"

#include "fixtures.hpp"

#include <doctest/doctest.h>

#if AI_HWACCEL_BACKEND_CEREBRAS

#include "ai_hwaccel/core/catalogue.hpp"

namespace ah = ai_hwaccel;

static_assert(ah::backend_probe<ah::cerebras_probe, ah::host_system>);

TEST_CASE("cerebras_probe") {
    // Hand-made tree with a busy /dev and PCI bus: nothing local describes a CS system.
    test::scratch_dir dir;
    dir.write("dev/accel0", "");
    dir.write("sys/bus/pci/devices/0000:65:00.0/vendor", "0x10de\n");
    const auto out = ah::cerebras_probe{}.probe(ah::host_system(dir.path().string()));
    CHECK(out.devices.empty());
    CHECK(out.links.empty());
    CHECK(out.warnings.empty());
    // The catalogue still describes the systems for planning.
    const auto* wse3 = ah::find_device("CS-3");
    REQUIRE(wse3 != nullptr);
    CHECK(wse3->kind == ah::device_kind::cerebras_wse);
}

#endif // AI_HWACCEL_BACKEND_CEREBRAS
