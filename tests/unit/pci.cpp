#include "ai_hwaccel/core/pci.hpp"

#include <doctest/doctest.h>

#include <string>

namespace ah = ai_hwaccel;

TEST_CASE("parse_pci_address") {
    // nvidia-smi prints an 8-digit domain; sysfs a 4-digit one; both name one device.
    CHECK(ah::parse_pci_address("00000000:30:00.0") == ah::parse_pci_address("0000:30:00.0"));
    const auto a = ah::parse_pci_address(" 0001:C1:1f.7\n");
    REQUIRE(a.has_value());
    CHECK(a->domain == 1);
    CHECK(a->bus == 0xc1);
    CHECK(a->device == 0x1f);
    CHECK(a->function == 7);
    CHECK_FALSE(ah::parse_pci_address("0000:30:20.0").has_value()); // device > 31
    CHECK_FALSE(ah::parse_pci_address("0000:30:00").has_value());
    CHECK_FALSE(ah::parse_pci_address("000:30:00.0").has_value());
    CHECK_FALSE(ah::parse_pci_address("000000000:30:00.0").has_value()); // nine domain digits
    // Intel VMD's domains start at 0x10000, which sysfs spells in five digits
    // (/sys/bus/pci/devices/10000:e1:00.0); nvidia-smi would pad it to eight.
    CHECK(ah::parse_pci_address("10000:e1:00.0") == ah::pci_address{0x10000, 0xe1, 0, 0});
    CHECK(ah::parse_pci_address("00010000:e1:00.0") == ah::pci_address{0x10000, 0xe1, 0, 0});
    CHECK(ah::parse_pci_address("1000d:01:00.0") == ah::pci_address{0x1000d, 1, 0, 0});
    CHECK_FALSE(ah::parse_pci_address("0000:3g:00.0").has_value());
    CHECK_FALSE(ah::parse_pci_address("0000:30:00.0.0").has_value());
    CHECK_FALSE(ah::parse_pci_address("0000::00.0").has_value());
}

TEST_CASE("pci_address::text") {
    const auto t = ah::pci_address{0, 0x65, 0x1f, 3}.text();
    CHECK(std::string(t.data()) == "0000:65:1f.3");
    CHECK(std::string(ah::pci_address{0x10000, 1, 0, 0}.text().data()) == "10000:01:00.0"); // as sysfs
    CHECK(std::string(ah::pci_address{0x123456, 1, 0, 0}.text().data()) == "123456:01:00.0");
    CHECK(std::string(ah::pci_address{0xffffffff, 0xff, 31, 7}.text().data()) == "ffffffff:ff:1f.7");
    for (const char* s : {"0000:00:00.0", "0000:ff:1f.7", "abcd:12:03.4", "10000:e1:00.0"})
        CHECK(std::string(ah::parse_pci_address(s)->text().data()) == s);
}

TEST_CASE("pcie_link") {
    CHECK(ah::pcie_link{4, 16}.bandwidth_gbps() == doctest::Approx(31.51).epsilon(1e-3));
    CHECK_FALSE(ah::pcie_link{}.known());
    CHECK(ah::pcie_link{}.bandwidth_gbps() == 0);
}
