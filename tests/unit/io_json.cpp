#include "ai_hwaccel/io/json.hpp"

#include <doctest/doctest.h>

#if AI_HWACCEL_JSON

#include "ai_hwaccel/core/catalogue.hpp"
#include "ai_hwaccel/registry.hpp"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace ah = ai_hwaccel;
using json = nlohmann::json;
using namespace ah::literals;

namespace {

ah::accelerator_profile gpu(const char* name, std::uint32_t index, const char* address) {
    auto p = ah::profile_from_spec(*ah::find_device(name), index);
    p.pci = ah::parse_pci_address(address);
    p.uuid = "GPU-5f4e2a7c-1b2d-4c3e-9f8a-0123456789ab";
    p.driver_version = "550.54.15";
    p.memory_used_bytes = {1_GiB, ah::origin::tool};
    p.memory_free_bytes = {79_GiB, ah::origin::tool};
    p.pcie_current = {ah::pcie_link{5, 16}, ah::origin::sysfs};
    p.numa_node = {1, ah::origin::sysfs};
    p.temperature_c = {-3.5, ah::origin::tool}; // negative and fractional on purpose
    p.power_draw_watts = {312.25, ah::origin::tool};
    p.utilization_percent = {97, ah::origin::tool};
    p.chips = {1, ah::origin::tool};
    return p;
}

/// A registry with something in every field the format carries.
ah::accelerator_registry full_registry() {
    ah::accelerator_profile cpu;
    cpu.name = "AMD EPYC 9654 96-Core Processor";
    cpu.maker = ah::vendor::amd;
    cpu.memory_bytes = {std::numeric_limits<std::uint64_t>::max(), ah::origin::sysfs}; // exact u64
    cpu.memory_bandwidth_gbps = {460.8, ah::origin::estimated};
    cpu.compute_units = {96, ah::origin::sysfs};
    cpu.peak.fp32 = 5.4;
    cpu.peak_from = ah::origin::estimated;
    cpu.unified_memory = true;

    auto h100 = gpu("H100 SXM", 0, "0000:65:00.0");
    auto mi300 = gpu("MI300X", 1, "0001:c1:00.1");
    mi300.available = false;
    mi300.pci = ah::pci_address{0x10000, 0xc1, 0x1f, 7}; // a domain past 16 bits

    std::vector<ah::warning> warnings{
        {ah::warning_kind::tool_timed_out, ah::backend_id::cuda, "nvidia-smi", "killed after 5 s", 0},
        {ah::warning_kind::permission_denied, std::nullopt, "/dev/accel0", "", -13},
    };

    ah::host_info host;
    host.cpu.model = "AMD EPYC 9654 96-Core Processor";
    host.cpu.maker = ah::vendor::amd;
    host.cpu.arch = ah::cpu_arch::x86_64;
    host.cpu.sockets = 2;
    host.cpu.cores = 192;
    host.cpu.threads = 384;
    host.cpu.usable_threads = 64;
    host.cpu.cpu_quota = 2.5;
    host.cpu.features.set(ah::cpu_feature::avx2);
    host.cpu.features.set(ah::cpu_feature::avx512_bf16);
    host.cpu.features.set(ah::cpu_feature::sme);
    host.memory.total_bytes = {768_GiB, ah::origin::sysfs};
    host.memory.available_bytes = {700_GiB, ah::origin::sysfs};
    host.memory.cgroup_limit_bytes = {64_GiB, ah::origin::sysfs};
    host.memory.cgroup_free_bytes = {40_GiB, ah::origin::sysfs};
    host.numa = {{0, 384_GiB, "0-95,192-287"}, {1, 384_GiB, "96-191,288-383"}};

    ah::system_io io;
    ah::pci_device nic;
    nic.address = {0, 0x65, 0, 0};
    nic.class_code = 0x030200;
    nic.vendor_id = 0x10de;
    nic.device_id = 0x2330;
    nic.subsystem_vendor_id = 0x10de;
    nic.subsystem_device_id = 0x16c1;
    nic.link_current = {ah::pcie_link{5, 16}, ah::origin::sysfs};
    nic.link_max = {ah::pcie_link{5, 16}, ah::origin::sysfs};
    nic.numa_node = 1;
    nic.driver = "nvidia";
    io.pci_devices.push_back(nic);
    ah::pci_device bridge;
    bridge.address = {0, 0, 1, 0};
    io.pci_devices.push_back(bridge); // numa_node -1, no driver, no links
    io.interconnects.push_back({ah::interconnect_kind::nvlink, ah::link_scope::intra_node, "NVLink GPU0-GPU1",
                                "18 links up", {900, ah::origin::catalogue}, {0, 1}});
    io.interconnects.push_back({ah::interconnect_kind::infiniband, ah::link_scope::inter_node, "mlx5_0 port 1",
                                "ACTIVE", {50.0, ah::origin::sysfs}, {}});
    io.storage.push_back({"nvme0n1", "SAMSUNG MZQL23T8HCLS", ah::storage_kind::nvme, 3'840'755'982'336,
                          {6.8, ah::origin::estimated}});
    io.storage.push_back({"vda", "", ah::storage_kind::virtual_disk, 100'000'000'000, {}});
    io.environment.container = ah::container_runtime::containerd;
    io.environment.kubernetes = true;
    io.environment.kubernetes_namespace = "inference";
    io.environment.hypervisor = "KVM";
    io.environment.cloud = ah::cloud_provider::aws;
    io.environment.instance_type = "p5.48xlarge";
    io.environment.region = "us-east-1";
    io.environment.zone = "us-east-1a";

    return ah::accelerator_registry({cpu, h100, mi300}, warnings, host, io);
}

/// Equal, peak throughput included (the registry's operator== compares peak_from only).
void check_same(const ah::accelerator_registry& a, const ah::accelerator_registry& b) {
    CHECK(a == b);
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i)
        for (const auto& row : ah::dtype_table) CHECK(a.all()[i].peak[row.id] == b.all()[i].peak[row.id]);
}

std::string error_of(std::string_view text) {
    const auto r = ah::registry_from_json(text);
    CHECK_FALSE(r.ok());
    CHECK_FALSE(r.registry.has_value());
    return r.error;
}

/// `{"schema_version":1,"devices":[<device>]}` read back; returns the error (empty if ok).
std::string device_error(const json& device) {
    const json doc = {{"schema_version", 1}, {"devices", json::array({device})}};
    return ah::registry_from_json(doc).error;
}
std::string document_error(const json& doc) { return ah::registry_from_json(doc).error; }

json valid_device() { return json(gpu("H100 SXM", 0, "0000:65:00.0")); }

/// A registry that uses every name of every enum the format carries and sets every field:
/// each interconnect kind in both scopes, each warning kind (with and without a backend),
/// each backend, each origin on every kind of sourced value, each storage kind, …
ah::accelerator_registry every_value_registry() {
    std::vector<ah::accelerator_profile> devices;
    std::size_t i = 0;
    constexpr ah::origin origins[] = {ah::origin::estimated, ah::origin::catalogue, ah::origin::measured,
                                      ah::origin::user, ah::origin::sysfs, ah::origin::tool};
    auto o = [&](std::size_t k) { return origins[(i + k) % std::size(origins)]; };
    for (const auto& kind : ah::device_kind_table) {
        ah::accelerator_profile p;
        p.kind = kind.id;
        p.index = static_cast<std::uint32_t>(i);
        p.available = i % 2 == 0;
        p.software = i % 3 == 0;
        p.unified_memory = i % 4 == 0;
        p.maker = ah::vendor_table[i % ah::vendor_table.size()].id;
        p.name.assign("device " + std::to_string(i));
        p.uuid.assign("uuid-" + std::to_string(i));
        p.pci = ah::pci_address{static_cast<std::uint32_t>(i), static_cast<std::uint8_t>(i + 1), 2, 3};
        p.pci_device_id = static_cast<std::uint16_t>(0x2330 + i);
        p.arch.assign("gfx94" + std::to_string(i % 10));
        p.driver_version.assign("1." + std::to_string(i));
        p.memory_bytes = {(i + 1) * 1_GiB, o(0)};
        p.memory_used_bytes = {i * 1_MiB, o(1)};
        p.memory_free_bytes = {(i + 1) * 1_GiB - i * 1_MiB, o(2)};
        p.memory_bandwidth_gbps = {100.25 * static_cast<double>(i + 1), o(3)};
        for (const auto& d : ah::dtype_table) {
            const double v = 0.5 + static_cast<double>(i) + static_cast<double>(static_cast<int>(d.id)) / 8;
            switch (d.id) {
            case ah::dtype::fp64: p.peak.fp64 = v; break;
            case ah::dtype::fp32: p.peak.fp32 = v; break;
            case ah::dtype::tf32: p.peak.tf32 = v; break;
            case ah::dtype::bf16: p.peak.bf16 = v; break;
            case ah::dtype::fp16: p.peak.fp16 = v; break;
            case ah::dtype::fp8: p.peak.fp8 = v; break;
            case ah::dtype::int8: p.peak.int8 = v; break;
            case ah::dtype::fp6: p.peak.fp6 = v; break;
            case ah::dtype::fp4: p.peak.fp4 = v; break;
            case ah::dtype::int4: p.peak.int4 = v; break;
            }
        }
        p.peak_from = i == 0 ? ah::origin::none : o(4); // peak_origin may be "none"
        p.compute_units = {static_cast<std::uint32_t>(132 + i), o(0)};
        p.chips = {static_cast<std::uint32_t>(1 + i % 4), o(1)};
        p.pcie_current = {ah::pcie_link{static_cast<std::uint8_t>(1 + i % 6), 8}, o(2)};
        p.pcie_max = {ah::pcie_link{6, 16}, o(3)};
        p.numa_node = {static_cast<std::int32_t>(i % 3) - 1, o(4)};
        p.temperature_c = {40.5 + static_cast<double>(i), o(0)};
        p.power_draw_watts = {0.125 * static_cast<double>(i + 1), o(1)};
        p.power_limit_watts = {700, o(2)};
        p.utilization_percent = {static_cast<double>(i % 101), o(3)};
        p.spec = i % 2 == 0 ? ah::find_device("H100 SXM") : nullptr;
        if (i % 3 != 0) p.stack = static_cast<std::uint8_t>(i % 3 == 1 ? 0 : 255); // both ends of its range
        devices.push_back(p);
        ++i;
    }
    std::vector<ah::warning> warnings;
    std::size_t b = 0;
    for (const auto& w : ah::warning_kind_table) {
        warnings.push_back({w.id, std::nullopt, "subject", "no backend", -1});
        warnings.push_back({w.id, ah::backend_table[b++ % ah::backend_table.size()].id, "/dev/x", "", 42});
    }
    for (; b < ah::backend_table.size(); ++b)
        warnings.push_back({ah::warning_kind::not_compiled, ah::backend_table[b].id, "", "", 0});

    ah::host_info host;
    host.cpu.model = "CPU";
    host.cpu.maker = ah::vendor::arm;
    host.cpu.arch = ah::cpu_arch::s390x;
    host.cpu.cpu_quota = 0.5;
    for (const auto& f : ah::cpu_feature_table) host.cpu.features.set(f.id);
    host.memory.total_bytes = {64_GiB, ah::origin::user};
    host.memory.available_bytes = {60_GiB, ah::origin::estimated};
    host.memory.cgroup_limit_bytes = {32_GiB, ah::origin::catalogue};
    host.memory.cgroup_free_bytes = {0, ah::origin::sysfs};
    host.numa = {{0, 32_GiB, "0-3"}, {7, 0, ""}};

    ah::system_io io;
    for (const auto& k : ah::interconnect_kind_table)
        for (auto scope : {ah::link_scope::intra_node, ah::link_scope::inter_node})
            io.interconnects.push_back({k.id, scope, std::string(k.name), "up",
                                        {12.5, origins[io.interconnects.size() % std::size(origins)]},
                                        {0, static_cast<std::uint32_t>(io.interconnects.size())}});
    io.interconnects.push_back({ah::interconnect_kind::roce_v2, ah::link_scope::inter_node, "", "", {}, {}});
    using sk = ah::storage_kind;
    for (auto k : {sk::unknown, sk::nvme, sk::sata_ssd, sk::hdd, sk::virtual_disk, sk::network, sk::ram})
        io.storage.push_back({"disk" + std::to_string(static_cast<int>(k)), "model", k, 1'000'000'000'000,
                              {1.5, ah::origin::estimated}});
    ah::pci_device d;
    d.address = {0xffff, 0xff, 0x1f, 7};
    d.class_code = 0x120000;
    d.vendor_id = 0x1ded;
    d.device_id = 0xffff;
    d.subsystem_vendor_id = 1;
    d.subsystem_device_id = 2;
    d.link_current = {ah::pcie_link{4, 4}, ah::origin::tool};
    d.link_max = {ah::pcie_link{5, 8}, ah::origin::user};
    d.numa_node = 3;
    d.driver = "vfio-pci";
    io.pci_devices.push_back(d);
    io.environment.container = ah::container_runtime::lxc;
    io.environment.wsl = true;
    io.environment.cloud = ah::cloud_provider::gcp;
    return ah::accelerator_registry(std::move(devices), std::move(warnings), std::move(host), std::move(io));
}

/// Adds a key no release writes to every object of `j`, values of every JSON type in
/// turn, as a newer writer of the same schema_version might. Not inside peak_tflops,
/// whose keys are dtype names rather than fields.
void add_unknown_keys(json& j, std::size_t& n) {
    if (j.is_array()) {
        for (auto& e : j) add_unknown_keys(e, n);
        return;
    }
    if (!j.is_object()) return;
    for (auto& [key, value] : j.items())
        if (key != "peak_tflops") add_unknown_keys(value, n);
    const json values[] = {nullptr, true, 7, -1.5, "text", json::array({1, "x"}), json{{"nested", {{"k", 1}}}}};
    j["zz_added_by_a_newer_writer_" + std::to_string(n)] = values[n % std::size(values)];
    j["aa_added_by_a_newer_writer"] = values[(n + 3) % std::size(values)];
    ++n;
}

std::string read_text(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::filesystem::path schema_dir() {
    return std::filesystem::path(AI_HWACCEL_MACHINES_DIR).parent_path().parent_path() / "schema";
}

} // namespace

TEST_CASE("to_json_string") {
    const auto r = full_registry();
    const auto text = ah::to_json_string(r);
    CHECK(text.find("\n  \"devices\": [") != std::string::npos); // two-space indent by default
    const auto compact = ah::to_json_string(r, -1);
    CHECK(compact.find('\n') == std::string::npos);
    CHECK(json::parse(text) == json::parse(compact));
    // An indent past nlohmann's buffer (1024) read beyond it (ASan: heap-buffer-overflow);
    // it is held to max_json_indent.
    const auto wide = ah::to_json_string(r, 100000);
    CHECK(wide == ah::to_json_string(r, ah::max_json_indent));
    CHECK(json::parse(wide) == json::parse(compact));

    const auto j = json::parse(compact);
    CHECK(j["schema_version"] == ah::accelerator_registry::schema_version);
    CHECK(j["devices"].size() == 3);
    CHECK(j["warnings"].size() == 2);
    CHECK(j["host"]["numa"].size() == 2);
    CHECK(j["system"]["pci_devices"].size() == 2);
    // Bytes are exact integers, even 2^64-1.
    CHECK(j["devices"][0]["memory_bytes"]["value"].get<std::uint64_t>() ==
          std::numeric_limits<std::uint64_t>::max());
    CHECK(compact.find("18446744073709551615") != std::string::npos);
    CHECK(j["devices"][1]["spec"] == "NVIDIA H100 SXM5 80GB");
    CHECK(j["devices"][2]["pci"] == "10000:c1:1f.7"); // as sysfs spells it
}

TEST_CASE("to_json names only catalogue rows as a profile's spec") {
    // A caller's own row, even one copied from the catalogue under the same name, cannot be
    // linked again on input: it is written as null.
    const ah::device_spec own = *ah::find_device("H100 SXM");
    ah::accelerator_profile p = ah::profile_from_spec(own);
    REQUIRE(p.spec == &own);
    CHECK(nlohmann::json(p)["spec"].is_null());
    p.spec = ah::find_device("MI300X");
    CHECK(nlohmann::json(p)["spec"] == "AMD Instinct MI300X");
}

TEST_CASE("registry_from_json") {
    SUBCASE("round trip: registry -> text -> registry") {
        const auto r = full_registry();
        for (int indent : {-1, 0, 2, 4}) {
            const auto back = ah::registry_from_json(ah::to_json_string(r, indent));
            REQUIRE_MESSAGE(back.ok(), back.error);
            CHECK(back.error.empty());
            check_same(*back.registry, r);
            // The spec pointer is re-linked to the catalogue row itself.
            CHECK(back.registry->all()[1].spec == ah::find_device("H100 SXM"));
            CHECK(back.registry->all()[0].spec == nullptr);
        }
    }
    SUBCASE("a hand-written device that names its catalogue row takes the row's figures") {
        // docs/json.md's example. Before, the device had no name, memory or peaks and every
        // plan on it failed while has_accelerator said yes.
        const auto back =
            ah::registry_from_json(R"({"schema_version": 1, "devices": [{"kind": "cuda_gpu", "spec": "H100 SXM"}]})");
        REQUIRE_MESSAGE(back.ok(), back.error);
        REQUIRE(back.registry->all().size() == 1);
        const auto& d = back.registry->all()[0];
        const auto& row = *ah::find_device("H100 SXM");
        CHECK(d.spec == &row);
        CHECK(d.name.view() == row.name);
        CHECK(d.maker == ah::vendor::nvidia);
        CHECK(d.memory_bytes == ah::sourced<std::uint64_t>{ah::reported_memory_bytes(row), ah::origin::catalogue});
        CHECK(d.memory_bandwidth_gbps.from == ah::origin::catalogue);
        CHECK(d.peak_from == ah::origin::catalogue);
        CHECK(d.peak.bf16 == row.peak.bf16);
        // What the document says stays: a figure of its own, and a null (unknown) one.
        const auto own = ah::registry_from_json(
            R"({"schema_version": 1, "devices": [{"kind": "cuda_gpu", "spec": "H100 SXM", "name": "mine",
                "memory_bytes": {"value": 1024, "origin": "user"}, "memory_bandwidth_gbps": null}]})");
        REQUIRE_MESSAGE(own.ok(), own.error);
        const auto& o = own.registry->all()[0];
        CHECK(o.name.view() == "mine");
        CHECK(o.memory_bytes == ah::sourced<std::uint64_t>{1024, ah::origin::user});
        CHECK_FALSE(o.memory_bandwidth_gbps.has_value());
        CHECK(o.peak_from == ah::origin::catalogue);
    }
    SUBCASE("round trip: empty registry") {
        const ah::accelerator_registry empty;
        const auto back = ah::registry_from_json(ah::to_json_string(empty));
        REQUIRE(back.ok());
        CHECK(*back.registry == empty);
    }
    SUBCASE("the minimal document, and missing keys keep defaults") {
        const auto r = ah::registry_from_json(R"({"schema_version": 1})");
        REQUIRE(r.ok());
        CHECK(*r.registry == ah::accelerator_registry{});
        const auto one = ah::registry_from_json(
            R"({"schema_version":1,"devices":[{"kind":"rocm_gpu","spec":"MI300X","future_key":[1,2]}]})");
        REQUIRE_MESSAGE(one.ok(), one.error);
        const auto& p = one.registry->all()[0];
        CHECK(p.kind == ah::device_kind::rocm_gpu);
        CHECK(p.available);
        CHECK(p.spec == ah::find_device("AMD Instinct MI300X")); // an alias re-links too
        // The keys the document leaves out are the row's (before, only the pointer was set).
        CHECK(p.memory_bytes == ah::sourced<std::uint64_t>{192_GiB, ah::origin::catalogue});
    }
    SUBCASE("the parsed-JSON overload") {
        const json j = full_registry();
        const auto back = ah::registry_from_json(j);
        REQUIRE_MESSAGE(back.ok(), back.error);
        check_same(*back.registry, full_registry());
    }
}

TEST_CASE("to_json / from_json") {
    SUBCASE("exact shape of a small profile") {
        ah::accelerator_profile p;
        p.kind = ah::device_kind::cuda_gpu;
        p.index = 1;
        p.maker = ah::vendor::nvidia;
        p.name = "Test GPU";
        p.pci = ah::pci_address{0, 0x65, 0, 0};
        p.memory_bytes = {24_GiB, ah::origin::tool};
        p.memory_bandwidth_gbps = {1008.5, ah::origin::catalogue};
        p.peak.bf16 = 165.2;
        p.peak.int8 = 660;
        p.peak_from = ah::origin::catalogue;
        p.pcie_current = {ah::pcie_link{4, 16}, ah::origin::sysfs};
        p.numa_node = {-1, ah::origin::sysfs};
        const std::string golden =
            R"({"arch":"","available":true,"chips":null,"compute_units":null,"driver_version":"",)"
            R"("index":1,"kind":"cuda_gpu","memory_bandwidth_gbps":{"origin":"catalogue","value":1008.5},)"
            R"("memory_bytes":{"origin":"tool","value":25769803776},"memory_free_bytes":null,)"
            R"("memory_used_bytes":null,"name":"Test GPU","numa_node":{"origin":"sysfs","value":-1},)"
            R"("pci":"0000:65:00.0","pci_device_id":0,)"
            R"("pcie_current":{"origin":"sysfs","value":{"generation":4,"width":16}},"pcie_max":null,)"
            R"("peak_origin":"catalogue","peak_tflops":{"bf16":165.2,"int8":660.0},)"
            R"("power_draw_watts":null,"power_limit_watts":null,"software":false,"spec":null,"stack":null,)"
            R"("temperature_c":null,"unified_memory":false,"utilization_percent":null,"uuid":"",)"
            R"("vendor":"nvidia"})";
        CHECK(json(p).dump() == golden);
    }
    SUBCASE("exact shape of the registry's parts") {
        ah::accelerator_registry r;
        r.add(ah::warning{ah::warning_kind::tool_failed, ah::backend_id::rocm, "rocm-smi", "exit 2", 2});
        r.host().numa.push_back({0, 16_GiB, "0-7"});
        r.add(ah::interconnect{ah::interconnect_kind::xgmi, ah::link_scope::intra_node, "XGMI hive", "up",
                               {}, {0, 1}});
        CHECK(json(r).dump() ==
              R"({"devices":[],)"
              R"("host":{"cpu":{"arch":"unknown","cores":0,"cpu_quota":0.0,"features":[],"model":"",)"
              R"("sockets":0,"threads":0,"usable_threads":0,"vendor":"unknown"},)"
              R"("memory":{"available_bytes":null,"cgroup_free_bytes":null,"cgroup_limit_bytes":null,)"
              R"("total_bytes":null},)"
              R"("numa":[{"cpus":"0-7","id":0,"memory_bytes":17179869184}]},)"
              R"("schema_version":1,)"
              R"("system":{"environment":{"cloud":"none","container":"none","hypervisor":"",)"
              R"("instance_type":"","kubernetes":false,"kubernetes_namespace":"","region":"","wsl":false,)"
              R"("zone":""},"interconnects":[{"bandwidth_gbps":null,"devices":[0,1],"kind":"xgmi",)"
              R"("name":"XGMI hive","scope":"intra_node","state":"up"}],"pci_devices":[],"storage":[]},)"
              R"("warnings":[{"backend":"rocm","code":2,"kind":"tool_failed","message":"exit 2",)"
              R"("subject":"rocm-smi"}]})");
        ah::pci_device d;
        d.address = {0, 0x3b, 0, 0};
        d.link_max = {ah::pcie_link{3, 8}, ah::origin::sysfs};
        CHECK(json(d).dump() ==
              R"({"address":"0000:3b:00.0","class_code":0,"device_id":0,"driver":"",)"
              R"("link_current":null,"link_max":{"origin":"sysfs","value":{"generation":3,"width":8}},)"
              R"("numa_node":-1,"subsystem_device_id":0,"subsystem_vendor_id":0,"vendor_id":0})");
        CHECK(json(ah::storage_device{"sda", "X", ah::storage_kind::hdd, 1000, {0.2, ah::origin::estimated}})
                  .dump() == R"({"kind":"hdd","model":"X","name":"sda","read_bandwidth_gbps":)"
                             R"({"origin":"estimated","value":0.2},"size_bytes":1000})");
    }
    SUBCASE("enums are their table names, every one, both ways") {
        auto both_ways = [](auto e, std::string_view name) {
            using E = decltype(e);
            const json j = e;
            CHECK(j == std::string(name));
            CHECK(j.template get<E>() == e);
        };
        for (const auto& row : ah::family_table) both_ways(row.id, row.name);
        for (const auto& row : ah::vendor_table) both_ways(row.id, row.name);
        for (const auto& row : ah::device_kind_table) both_ways(row.id, row.name);
        for (const auto& row : ah::dtype_table) both_ways(row.id, row.name);
        for (const auto& row : ah::memory_type_table) both_ways(row.id, row.name);
        for (const auto& row : ah::interconnect_kind_table) both_ways(row.id, row.name);
        for (const auto& row : ah::warning_kind_table) both_ways(row.id, row.name);
        for (const auto& row : ah::backend_table) both_ways(row.id, row.name);
        for (const auto& row : ah::cpu_feature_table) both_ways(row.id, row.name);
        both_ways(ah::link_scope::inter_node, "inter_node");
        both_ways(ah::origin::tool, "tool");
        both_ways(ah::cpu_arch::aarch64, "aarch64");
        both_ways(ah::storage_kind::sata_ssd, "sata_ssd");
        both_ways(ah::container_runtime::podman, "podman");
        both_ways(ah::cloud_provider::oracle, "oracle");
    }
    SUBCASE("small types") {
        CHECK(json(ah::pci_address{0, 0x65, 0, 0}) == "0000:65:00.0");
        CHECK(json(ah::pcie_link{4, 16}) == json{{"generation", 4}, {"width", 16}});
        CHECK(json(ah::sourced<std::uint64_t>{}) == nullptr);
        CHECK(json(ah::sourced<std::uint64_t>{5, ah::origin::user}) == json{{"value", 5}, {"origin", "user"}});
        CHECK(json(ah::inplace_string<8>("abc")) == "abc");
        ah::peak_throughput peak;
        CHECK(json(peak) == json::object()); // only non-zero entries
        peak.fp8 = 1979;
        CHECK(json(peak) == json{{"fp8", 1979.0}});
        ah::cpu_features f;
        f.set(ah::cpu_feature::neon);
        f.set(ah::cpu_feature::i8mm);
        CHECK(json(f) == json{"neon", "i8mm"});
        CHECK(json(f).get<ah::cpu_features>() == f);
        CHECK(json(ah::pcie_link{4, 16}).get<ah::pcie_link>() == ah::pcie_link{4, 16});
        const auto s = json{{"value", 5}, {"origin", "user"}}.get<ah::sourced<std::uint32_t>>();
        CHECK(s == ah::sourced<std::uint32_t>{5, ah::origin::user});
        CHECK(json(nullptr).get<ah::sourced<double>>() == ah::sourced<double>{});
    }
#if AI_HWACCEL_EXCEPTIONS
    SUBCASE("get<>() throws nlohmann's exception on bad input") {
        CHECK_THROWS_AS(json("gpu9").get<ah::device_kind>(), json::exception);
        CHECK_THROWS_AS(json(-1).get<ah::sourced<std::uint64_t>>(), json::exception);
        const json newer = {{"schema_version", 2}};
        CHECK_THROWS_AS(newer.get<ah::accelerator_registry>(), json::exception);
        CHECK_THROWS_AS(json("gpu9").get<ah::device_kind>(), ah::json_error);
        try {
            (void)json{{"kind", "gpu9"}}.get<ah::accelerator_profile>();
            FAIL("no exception");
        } catch (const json::exception& e) {
            CHECK(std::string(e.what()) == "[ai_hwaccel.json_error] /kind: unknown device_kind \"gpu9\"");
            CHECK(e.id == 599);
        }
    }
#endif
}

TEST_CASE("registry_from_json rejects") {
    SUBCASE("invalid JSON") {
        CHECK(error_of("").rfind("invalid JSON: ", 0) == 0);
        CHECK(error_of("{").rfind("invalid JSON: ", 0) == 0);
        CHECK(error_of("not json").rfind("invalid JSON: ", 0) == 0);
        CHECK(error_of(R"({"schema_version":1} trailing)").rfind("invalid JSON: ", 0) == 0);
        CHECK(error_of(R"({"schema_version":1,})").rfind("invalid JSON: ", 0) == 0);
        CHECK(error_of("{\"schema_version\":1 /* comment */}").rfind("invalid JSON: ", 0) == 0);
        CHECK(error_of("[1, 2").find("parse error") != std::string::npos); // nlohmann says where
    }
    SUBCASE("an object that names a key twice") {
        // nlohmann keeps the last value: a newer schema_version would be read past, a
        // profile's kind silently replaced.
        CHECK(error_of(R"({"schema_version":9,"schema_version":1})") ==
              R"(invalid JSON: an object names "schema_version" twice)");
        CHECK(error_of(R"({"schema_version":1,"devices":[{"kind":"cpu","kind":"cuda_gpu"}]})") ==
              R"(invalid JSON: an object names "kind" twice)");
        // The same key in sibling or nested objects is no duplicate.
        CHECK(ah::registry_from_json(R"({"schema_version":1,"devices":[{"kind":"cpu"},{"kind":"cuda_gpu"}],)"
                                     R"("x":{"schema_version":{"schema_version":1}}})")
                  .ok());
        // Deep nesting under an unknown key still reads.
        std::string deep = R"({"schema_version":1,"x":)";
        for (int i = 0; i < 10'000; ++i) deep += R"({"a":)";
        deep += "1";
        for (int i = 0; i < 10'000; ++i) deep += "}";
        deep += "}";
        CHECK(ah::registry_from_json(deep).ok());
    }
    SUBCASE("a missing, newer or malformed schema_version") {
        CHECK(error_of("{}") == "document: missing schema_version");
        CHECK(error_of(R"({"devices":[]})") == "document: missing schema_version");
        CHECK(error_of(R"({"schema_version":2})") ==
              "/schema_version: written by a newer ai-hwaccel (schema 2); this build reads up to 1");
        CHECK(error_of(R"({"schema_version":0})") == "/schema_version: unsupported schema_version 0");
        CHECK(error_of(R"({"schema_version":-1})") == "/schema_version: unsupported schema_version -1");
        CHECK(error_of(R"({"schema_version":"1"})") ==
              "/schema_version: expected an integer, got a string");
        // JSON Schema counts 1.0 as an integer (Python's json writes sizes so): read as 1.
        CHECK(ah::registry_from_json(R"({"schema_version":1.0})").ok());
        CHECK(error_of(R"({"schema_version":1.5})") ==
              "/schema_version: expected an integer, got a non-integer number");
        CHECK(error_of(R"({"schema_version":1e300})") ==
              "/schema_version: expected an integer, got a non-integer number");
        CHECK(error_of(R"({"schema_version":99999999999999999999})").find("/schema_version: expected an integer") ==
              0);
        CHECK(error_of("[]") == "document: expected an object, got an array");
        CHECK(error_of("null") == "document: expected an object, got null");
    }
    SUBCASE("a PCI class code past 24 bits") {
        json doc = {{"schema_version", 1},
                    {"system", {{"pci_devices", json::array({{{"address", "0000:3b:00.0"}, {"class_code", 0x1000000}}})}}}};
        CHECK(document_error(doc) == "/system/pci_devices/0/class_code: a PCI class code has 24 bits, got 16777216");
        doc["system"]["pci_devices"][0]["class_code"] = 0xFFFFFF;
        CHECK(document_error(doc).empty());
    }
    SUBCASE("wrong types") {
        CHECK(document_error({{"schema_version", 1}, {"devices", json::object()}}) ==
              "/devices: expected an array, got an object");
        CHECK(document_error({{"schema_version", 1}, {"host", json::array()}}) ==
              "/host: expected an object, got an array");
        CHECK(document_error({{"schema_version", 1}, {"warnings", {{{"kind", "tool_failed"}, {"code", "x"}}}}}) ==
              "/warnings/0/code: expected an integer, got a string");
        auto d = valid_device();
        d["index"] = "0";
        CHECK(device_error(d) == "/devices/0/index: expected a non-negative integer, got a string");
        d = valid_device();
        d["available"] = 1;
        CHECK(device_error(d) == "/devices/0/available: expected a boolean, got an integer");
        d = valid_device();
        d["name"] = 5;
        CHECK(device_error(d) == "/devices/0/name: expected a string, got an integer");
        d = valid_device();
        d["memory_bytes"] = 5; // a bare value where a sourced one belongs
        CHECK(device_error(d) ==
              "/devices/0/memory_bytes: expected null or an object {\"value\", \"origin\"}, got an integer");
        d = valid_device();
        d["memory_bytes"] = {{"value", 5}};
        CHECK(device_error(d) == "/devices/0/memory_bytes: missing \"origin\"");
        d["memory_bytes"] = {{"origin", "tool"}};
        CHECK(device_error(d) == "/devices/0/memory_bytes: missing \"value\"");
        d["memory_bytes"] = {{"origin", "none"}, {"value", 5}};
        CHECK(device_error(d) ==
              "/devices/0/memory_bytes/origin: origin \"none\" with a value (write null for no value)");
        d["memory_bytes"] = {{"origin", "tool"}, {"value", 1.5}};
        CHECK(device_error(d) ==
              "/devices/0/memory_bytes/value: expected a non-negative integer, got a non-integer number");
        d = valid_device();
        d["memory_bandwidth_gbps"] = {{"origin", "tool"}, {"value", "fast"}};
        CHECK(device_error(d) == "/devices/0/memory_bandwidth_gbps/value: expected a number, got a string");
        d = valid_device();
        d["pci"] = 101;
        CHECK(device_error(d) == "/devices/0/pci: expected a PCI address string \"dddd:bb:dd.f\", got an integer");
        d["pci"] = "0000:65:00.8";
        CHECK(device_error(d) == "/devices/0/pci: not a PCI address: \"0000:65:00.8\"");
        d = valid_device();
        d["pcie_max"] = {{"origin", "sysfs"}, {"value", {{"generation", "4"}, {"width", 16}}}};
        CHECK(device_error(d) ==
              "/devices/0/pcie_max/value/generation: expected a non-negative integer, got a string");
        d = valid_device();
        d["peak_tflops"] = json::array();
        CHECK(device_error(d) == "/devices/0/peak_tflops: expected an object of dtype: number, got an array");
        d = valid_device();
        d["spec"] = 7;
        CHECK(device_error(d) == "/devices/0/spec: expected a string, got an integer");
        CHECK(document_error({{"schema_version", 1}, {"host", {{"cpu", {{"features", "avx2"}}}}}}) ==
              "/host/cpu/features: expected an array of cpu_feature names, got a string");
        CHECK(document_error({{"schema_version", 1},
                              {"system", {{"interconnects", {{{"kind", "pcie"}, {"devices", {0, -1}}}}}}}}) ==
              "/system/interconnects/0/devices/1: integer out of range: -1 (expected 0..4294967295)");
    }
    SUBCASE("unknown names") {
        auto d = valid_device();
        d["kind"] = "gpu9";
        CHECK(device_error(d) == "/devices/0/kind: unknown device_kind \"gpu9\"");
        d["kind"] = "CUDA_GPU"; // one spelling only: no case folding in this format
        CHECK(device_error(d) == "/devices/0/kind: unknown device_kind \"CUDA_GPU\"");
        d["kind"] = 1; // nor numbers
        CHECK(device_error(d) == "/devices/0/kind: expected a string (device_kind name), got an integer");
        d = valid_device();
        d["vendor"] = "NVIDIA";
        CHECK(device_error(d) == "/devices/0/vendor: unknown vendor \"NVIDIA\"");
        d = valid_device();
        d["memory_bytes"]["origin"] = "benchmarked";
        CHECK(device_error(d) == "/devices/0/memory_bytes/origin: unknown origin \"benchmarked\"");
        d = valid_device();
        d["peak_tflops"]["fp128"] = 1;
        CHECK(device_error(d) == "/devices/0/peak_tflops/fp128: unknown dtype \"fp128\"");
        // A rate is positive, as the schema has it and the writer writes it.
        for (const double bad : {0.0, -5.0}) {
            d = valid_device();
            d["peak_tflops"]["bf16"] = bad;
            CHECK(device_error(d).starts_with("/devices/0/peak_tflops/bf16: a peak rate must be positive, got "));
        }
        // A size written with ".0" is the same size.
        d = valid_device();
        d["memory_bytes"]["value"] = 85520809984.0;
        CHECK(device_error(d).empty());
        d["memory_bytes"]["value"] = -1.0;
        CHECK(device_error(d).starts_with("/devices/0/memory_bytes/value: integer out of range: "));
        // A key from the input is spelled as a JSON pointer segment ("~" and "/" escaped),
        // its control characters shown as '?', and cut to 64 bytes.
        d = valid_device();
        d["peak_tflops"]["a/b~c\x01"] = 1;
        CHECK(device_error(d).starts_with("/devices/0/peak_tflops/a~1b~0c?: unknown dtype "));
        d = valid_device();
        d["peak_tflops"][std::string(100, 'k')] = 1;
        CHECK(device_error(d).starts_with("/devices/0/peak_tflops/" + std::string(64, 'k') + ": unknown dtype "));
        d = valid_device();
        d["peak_origin"] = "";
        CHECK(device_error(d) == "/devices/0/peak_origin: unknown origin \"\"");
        d = valid_device();
        d["spec"] = "NVIDIA H1000";
        CHECK(device_error(d) == "/devices/0/spec: no catalogue device named \"NVIDIA H1000\"");
        CHECK(document_error({{"schema_version", 1},
                              {"warnings", {{{"kind", "tool_failed"}, {"backend", "cudaa"}}}}}) ==
              "/warnings/0/backend: unknown backend \"cudaa\"");
        CHECK(document_error({{"schema_version", 1}, {"warnings", {{{"kind", "oops"}}}}}) ==
              "/warnings/0/kind: unknown warning_kind \"oops\"");
        CHECK(document_error({{"schema_version", 1}, {"host", {{"cpu", {{"features", {"avx2", "avx9"}}}}}}}) ==
              "/host/cpu/features/1: unknown cpu_feature \"avx9\"");
        CHECK(document_error({{"schema_version", 1}, {"host", {{"cpu", {{"arch", "vax"}}}}}}) ==
              "/host/cpu/arch: unknown cpu_arch \"vax\"");
        CHECK(document_error({{"schema_version", 1},
                              {"system", {{"storage", {{{"name", "st0"}, {"kind", "tape"}}}}}}}) ==
              "/system/storage/0/kind: unknown storage_kind \"tape\"");
        CHECK(document_error({{"schema_version", 1}, {"system", {{"environment", {{"cloud", "ibm"}}}}}}) ==
              "/system/environment/cloud: unknown cloud_provider \"ibm\"");
        CHECK(document_error({{"schema_version", 1}, {"system", {{"environment", {{"container", "jail"}}}}}}) ==
              "/system/environment/container: unknown container_runtime \"jail\"");
        CHECK(document_error({{"schema_version", 1},
                              {"system", {{"interconnects", {{{"kind", "pcie"}, {"scope", "galaxy"}}}}}}}) ==
              "/system/interconnects/0/scope: unknown link_scope \"galaxy\"");
        CHECK(document_error({{"schema_version", 1}, {"system", {{"interconnects", {{{"kind", "usb"}}}}}}}) ==
              "/system/interconnects/0/kind: unknown interconnect_kind \"usb\"");
    }
    SUBCASE("out-of-range numbers") {
        auto d = valid_device();
        d["index"] = -1;
        CHECK(device_error(d) == "/devices/0/index: integer out of range: -1 (expected 0..4294967295)");
        d["index"] = 4294967296ULL;
        CHECK(device_error(d) == "/devices/0/index: integer out of range: 4294967296 (expected 0..4294967295)");
        d["index"] = 4294967295ULL;
        CHECK(device_error(d).empty());
        d = valid_device();
        d["pci_device_id"] = 65536;
        CHECK(device_error(d) == "/devices/0/pci_device_id: integer out of range: 65536 (expected 0..65535)");
        d = valid_device();
        d["stack"] = 256;
        CHECK(device_error(d) == "/devices/0/stack: integer out of range: 256 (expected 0..255)");
        d["stack"] = "1";
        CHECK(device_error(d) == "/devices/0/stack: expected a non-negative integer, got a string");
        d = valid_device();
        d["pcie_current"]["value"]["width"] = 256;
        CHECK(device_error(d) == "/devices/0/pcie_current/value/width: integer out of range: 256 (expected 0..255)");
        d = valid_device();
        d["numa_node"] = {{"origin", "sysfs"}, {"value", 2147483648LL}};
        CHECK(device_error(d) ==
              "/devices/0/numa_node/value: integer out of range: 2147483648 (expected -2147483648..2147483647)");
        CHECK(document_error({{"schema_version", 1},
                              {"warnings", {{{"kind", "tool_failed"}, {"code", -2147483649LL}}}}}) ==
              "/warnings/0/code: integer out of range: -2147483649 (expected -2147483648..2147483647)");
        // One past 2^64-1 is no longer an integer to the parser.
        CHECK(error_of(R"({"schema_version":1,"devices":[{"kind":"cpu","memory_bytes":)"
                       R"({"origin":"tool","value":18446744073709551616}}]})") ==
              "/devices/0/memory_bytes/value: expected a non-negative integer, got a non-integer number");
        CHECK(error_of(R"({"schema_version":1,"host":{"numa":[{"id":0,"memory_bytes":-1}]}})") ==
              "/host/numa/0/memory_bytes: integer out of range: -1 (expected 0..18446744073709551615)");
        // Beyond a double: the parser refuses it.
        CHECK(error_of(R"({"schema_version":1,"host":{"cpu":{"cpu_quota":1e400}}})").find("number overflow") !=
              std::string::npos);
        // Numbers that JSON cannot carry, in a document built in memory.
        CHECK(document_error({{"schema_version", 1},
                              {"host", {{"cpu", {{"cpu_quota", std::numeric_limits<double>::infinity()}}}}}}) ==
              "/host/cpu/cpu_quota: number out of range (not finite)");
    }
    SUBCASE("strings too long for their field") {
        auto d = valid_device();
        d["name"] = std::string(63, 'x');
        CHECK(device_error(d).empty());
        d["name"] = std::string(64, 'x');
        CHECK(device_error(d) == "/devices/0/name: string of 64 bytes is longer than the 63 this field holds");
        d = valid_device();
        // R450/R460's MIG UUIDs ("MIG-GPU-<uuid>/<gi>/<ci>") take up to 49 bytes.
        d["uuid"] = "MIG-GPU-5c89852c-d268-c3f3-1b07-005d5ae1dc3f/11/0";
        CHECK(device_error(d).empty());
        d["uuid"] = std::string(64, 'u');
        CHECK(device_error(d) == "/devices/0/uuid: string of 64 bytes is longer than the 63 this field holds");
        d = valid_device();
        d["arch"] = "sm_90a-and-some-more";
        CHECK(device_error(d) == "/devices/0/arch: string of 20 bytes is longer than the 15 this field holds");
    }
    SUBCASE("arrays too long") {
        std::string text = R"({"schema_version":1,"warnings":[)";
        for (std::size_t i = 0; i <= ah::json_max_array_size; ++i) text += i == 0 ? "{}" : ",{}";
        text += "]}";
        CHECK(error_of(text) == "/warnings: array of 65537 elements is longer than the 65536 accepted");
    }
}

TEST_CASE("registry_from_json: round trip of every value") {
    const auto r = every_value_registry();
    const auto text = ah::to_json_string(r);
    const auto back = ah::registry_from_json(text);
    REQUIRE_MESSAGE(back.ok(), back.error);
    check_same(*back.registry, r);
    CHECK(ah::to_json_string(*back.registry) == text);
    // Field by field where the registry's operator== might not look.
    REQUIRE(back.registry->all().size() == ah::device_kind_table.size());
    for (std::size_t i = 0; i < r.size(); ++i) {
        const auto& a = r.all()[i];
        const auto& b = back.registry->all()[i];
        CHECK(b.kind == a.kind);
        CHECK(b.software == a.software);
        CHECK(b.unified_memory == a.unified_memory);
        CHECK(b.pcie_max == a.pcie_max);
        CHECK(b.power_limit_watts == a.power_limit_watts);
        CHECK(b.stack == a.stack);
        CHECK(b.peak_from == a.peak_from);
        CHECK(b.spec == a.spec);
    }
    CHECK(std::ranges::equal(back.registry->warnings(), r.warnings()));
    CHECK(r.warnings().size() >= 2 * ah::warning_kind_table.size());
    CHECK(back.registry->system().interconnects == r.system().interconnects);
    CHECK(back.registry->system().interconnects.size() == 2 * ah::interconnect_kind_table.size() + 1);
    CHECK(back.registry->system().storage == r.system().storage);
    CHECK(back.registry->system().pci_devices == r.system().pci_devices);
    CHECK(back.registry->system().environment == r.system().environment);
    CHECK(back.registry->host() == r.host());
    CHECK(back.registry->host().cpu.features == r.host().cpu.features);
    // Every origin that can carry a value was written and read.
    std::set<std::string> origins;
    const json j = json::parse(text);
    for (const auto& d : j["devices"])
        for (const auto& [key, value] : d.items())
            if (value.is_object() && value.contains("origin")) origins.insert(value["origin"].get<std::string>());
    CHECK(origins == std::set<std::string>{"estimated", "catalogue", "measured", "user", "sysfs", "tool"});
}

TEST_CASE("registry_from_json: missing required keys") {
    // A record's identity is required; its other keys keep their defaults when missing.
    auto d = valid_device();
    d.erase("kind");
    CHECK(device_error(d) == "/devices/0: missing required key \"kind\"");
    d = valid_device();
    d.erase("memory_bytes");
    CHECK(device_error(d).empty());
    d = valid_device();
    d["pcie_current"]["value"].erase("width");
    CHECK(device_error(d) == "/devices/0/pcie_current/value: missing required key \"width\"");
    CHECK(document_error({{"schema_version", 1}, {"warnings", {{{"message", "m"}}}}}) ==
          "/warnings/0: missing required key \"kind\"");
    CHECK(document_error({{"schema_version", 1}, {"host", {{"numa", {{{"cpus", "0-3"}}}}}}}) ==
          "/host/numa/0: missing required key \"id\"");
    CHECK(document_error({{"schema_version", 1}, {"system", {{"pci_devices", {{{"driver", "nvidia"}}}}}}}) ==
          "/system/pci_devices/0: missing required key \"address\"");
    CHECK(document_error({{"schema_version", 1}, {"system", {{"interconnects", {{{"name", "x"}}}}}}}) ==
          "/system/interconnects/0: missing required key \"kind\"");
    CHECK(document_error({{"schema_version", 1}, {"system", {{"storage", {{{"kind", "nvme"}}}}}}}) ==
          "/system/storage/0: missing required key \"name\"");
    CHECK(error_of(R"({"devices":[]})") == "document: missing schema_version");
}

TEST_CASE("registry_from_json: a newer writer") {
    SUBCASE("a newer schema_version is refused, saying so") {
        const json doc = {{"schema_version", ah::accelerator_registry::schema_version + 1},
                          {"devices", json::array({{{"kind", "a_kind_from_the_future"}}})}};
        CHECK(document_error(doc) == "/schema_version: written by a newer ai-hwaccel (schema " +
                                         std::to_string(ah::accelerator_registry::schema_version + 1) +
                                         "); this build reads up to " +
                                         std::to_string(ah::accelerator_registry::schema_version));
    }
    SUBCASE("unknown keys everywhere in real output read back equal") {
        std::size_t machines = 0;
        for (const auto& e : std::filesystem::directory_iterator(AI_HWACCEL_MACHINES_DIR)) {
            const auto expected = e.path() / "expected.json";
            if (!std::filesystem::exists(expected)) continue;
            ++machines;
            INFO(e.path().filename().string());
            const auto text = read_text(expected);
            const auto original = ah::registry_from_json(text);
            REQUIRE_MESSAGE(original.ok(), original.error);
            json newer = json::parse(text);
            std::size_t added = 0;
            add_unknown_keys(newer, added);
            CHECK(added >= 6); // at least the registry, host, cpu, memory, system, environment
            const auto back = ah::registry_from_json(newer.dump());
            REQUIRE_MESSAGE(back.ok(), back.error);
            check_same(*back.registry, *original.registry);
            // Written again, it is the original document: nothing unknown kept, nothing lost.
            CHECK(json(*back.registry) == json::parse(text));
        }
        CHECK(machines > 0);
    }
    SUBCASE("…but not new names, which this build cannot represent") {
        auto d = valid_device();
        d["future_key"] = {{"origin", "tool"}};
        d["peak_tflops"]["fp2"] = 1;
        CHECK(device_error(d) == "/devices/0/peak_tflops/fp2: unknown dtype \"fp2\"");
    }
}

TEST_CASE("schema/registry.schema.json") {
    const auto path = schema_dir() / "registry.schema.json";
    const auto text = read_text(path);
    REQUIRE_MESSAGE(!text.empty(), "cannot read " << path.string());
    const json schema = json::parse(text);
    const json& defs = schema["$defs"];
    CHECK(defs["registry"]["properties"]["schema_version"]["const"] == ah::accelerator_registry::schema_version);

    SUBCASE("its enums are the tables' names, in order") {
        auto names = [](const auto& table) {
            json out = json::array();
            for (const auto& row : table) out.push_back(std::string(row.name));
            return out;
        };
        auto switch_names = [](auto last) {
            json out = json::array();
            for (int k = 0; k <= static_cast<int>(last); ++k)
                out.push_back(std::string(ah::to_string(static_cast<decltype(last)>(k))));
            return out;
        };
        CHECK(defs["device_kind"]["enum"] == names(ah::device_kind_table));
        CHECK(defs["vendor"]["enum"] == names(ah::vendor_table));
        CHECK(defs["dtype"]["enum"] == names(ah::dtype_table));
        CHECK(defs["interconnect_kind"]["enum"] == names(ah::interconnect_kind_table));
        CHECK(defs["warning_kind"]["enum"] == names(ah::warning_kind_table));
        CHECK(defs["backend"]["enum"] == names(ah::backend_table));
        CHECK(defs["cpu_feature"]["enum"] == names(ah::cpu_feature_table));
        CHECK(defs["link_scope"]["enum"] == switch_names(ah::link_scope::inter_node));
        CHECK(defs["origin"]["enum"] == switch_names(ah::origin::tool));
        CHECK(defs["cpu_arch"]["enum"] == switch_names(ah::cpu_arch::s390x));
        CHECK(defs["storage_kind"]["enum"] == switch_names(ah::storage_kind::ram));
        CHECK(defs["container_runtime"]["enum"] == switch_names(ah::container_runtime::other));
        CHECK(defs["cloud_provider"]["enum"] == switch_names(ah::cloud_provider::other));
        json value_origins = switch_names(ah::origin::tool);
        value_origins.erase(0); // "none" never carries a value
        CHECK(defs["value_origin"]["enum"] == value_origins);
    }
    SUBCASE("it lists every key the writer writes, each as required") {
        const json r = every_value_registry();
        auto check_keys = [&](const char* def, const json& written) {
            INFO(def);
            std::set<std::string> listed, required, keys;
            for (const auto& [k, v] : defs[def]["properties"].items()) listed.insert(k);
            for (const auto& k : defs[def]["required"]) required.insert(k.get<std::string>());
            for (const auto& [k, v] : written.items()) keys.insert(k);
            CHECK(required == keys);
            for (const auto& k : keys) CHECK(listed.count(k) == 1);
            CHECK(defs[def]["additionalProperties"] == false);
        };
        check_keys("registry", r);
        check_keys("profile", r["devices"][0]);
        check_keys("pcie_link", r["devices"][0]["pcie_max"]["value"]);
        check_keys("warning", r["warnings"][0]);
        check_keys("host", r["host"]);
        check_keys("cpu", r["host"]["cpu"]);
        check_keys("memory", r["host"]["memory"]);
        check_keys("numa_node", r["host"]["numa"][0]);
        check_keys("system", r["system"]);
        check_keys("pci_device", r["system"]["pci_devices"][0]);
        check_keys("interconnect", r["system"]["interconnects"][0]);
        check_keys("storage", r["system"]["storage"][0]);
        check_keys("environment", r["system"]["environment"]);
    }
}

TEST_CASE("registry_from_json on hostile input") {
    const auto text = ah::to_json_string(full_registry(), -1);
    SUBCASE("every truncation fails cleanly") {
        for (std::size_t n = 0; n < text.size(); ++n) {
            const auto r = ah::registry_from_json(std::string_view(text).substr(0, n));
            CHECK_FALSE(r.ok());
            CHECK(r.error.rfind("invalid JSON: ", 0) == 0);
        }
    }
    SUBCASE("deeply nested arrays") {
        constexpr std::size_t depth = 200'000;
        const std::string nested = std::string(depth, '[') + std::string(depth, ']');
        CHECK(error_of(nested) == "document: expected an object, got an array");
        CHECK(error_of(R"({"schema_version":1,"devices":)" + nested + "}") ==
              "/devices/0: expected an object, got an array");
        CHECK(error_of(std::string(depth, '[')).rfind("invalid JSON: ", 0) == 0);
        CHECK(error_of(std::string(depth, '{')).rfind("invalid JSON: ", 0) == 0);
    }
    SUBCASE("a long message is cut between characters, never inside one") {
        // An unterminated string of two-byte characters: nlohmann quotes it in its message,
        // which is cut; at every length the cut lands somewhere else.
        for (std::size_t n = 100; n < 140; ++n) {
            std::string doc = "{\"schema_version\":1,\"devices\":[{\"name\":\"";
            for (std::size_t i = 0; i < n; ++i) doc += "\xc3\xa9";
            const std::string e = error_of(doc);
            CAPTURE(n);
            CHECK(e.ends_with("..."));
            CHECK(ah::detail::json_io::valid_utf8(e) == e);
        }
    }
    SUBCASE("bytes that are not UTF-8") {
        CHECK(error_of("{\"schema_version\":1,\"devices\":[{\"name\":\"caf\xe9\"}]}").rfind("invalid JSON: ", 0) ==
              0);
        CHECK(error_of("{\"schema_version\":1,\"devices\":[{\"name\":\"\xc0\xaf\"}]}").rfind("invalid JSON: ", 0) ==
              0); // an overlong '/'
        CHECK(error_of("\xff\xfe{}").rfind("invalid JSON: ", 0) == 0);
        // nlohmann alone would stop at a NUL byte and accept what came before it.
        CHECK(error_of(std::string_view("{\"schema_version\":1}\0{", 22)) == "invalid JSON: NUL byte at offset 20");
        CHECK(error_of(std::string_view("{\"schema_version\":1,\"x\":\"a\0\"}", 29)) ==
              "invalid JSON: NUL byte at offset 26");
        // The message stays printable text whatever the input held.
        const auto e = error_of("{\"schema_version\":1,\"x\":\"\xed\xa0\x80\"}");
        for (char c : e) CHECK(static_cast<unsigned char>(c) < 0x80);
    }
    SUBCASE("mutated documents never crash") {
        // Deterministic byte flips, insertions and deletions over a valid document: each
        // result either reads or fails with a message.
        std::uint64_t state = 0x9e3779b97f4a7c15u;
        auto next = [&state] {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            return state;
        };
        constexpr std::string_view alphabet = "{}[]\":,-0123456789.eEtruefalsn \\\x80\xff";
        int read_back = 0;
        for (int i = 0; i < 3000; ++i) {
            std::string m = text;
            for (int k = 0; k < 3; ++k) {
                const auto at = static_cast<std::size_t>(next() % m.size());
                const char c = alphabet[static_cast<std::size_t>(next() % alphabet.size())];
                switch (next() % 3) {
                case 0: m[at] = c; break;
                case 1: m.insert(at, 1, c); break;
                default: m.erase(at, 1); break;
                }
            }
            const auto r = ah::registry_from_json(m);
            CHECK(r.ok() == r.error.empty());
            read_back += r.ok() ? 1 : 0;
        }
        MESSAGE("mutated documents that still read: " << read_back << " of 3000");
    }
}

TEST_CASE("to_json_string with text that is not UTF-8") {
    auto r = full_registry();
    ah::accelerator_profile p;
    p.name = "caf\xe9 GPU \xed\xa0\x80";                // Latin-1 and a UTF-16 surrogate
    p.arch = "\xf0\x9f\x9a\x80ok";                      // valid UTF-8 is kept as it is
    r.add(p);
    r.add(ah::warning{ah::warning_kind::parse_error, std::nullopt, "/proc/\xff", "bad \xc3", 0});
    r.host().cpu.model = std::string("Z80\x80\x80", 5);
    ah::accelerator_profile odd;
    odd.memory_bandwidth_gbps = {std::numeric_limits<double>::quiet_NaN(), ah::origin::tool};
    odd.peak.fp16 = std::numeric_limits<double>::infinity();
    r.add(odd);
    const auto text = ah::to_json_string(r);
    const auto back = ah::registry_from_json(text);
    REQUIRE_MESSAGE(back.ok(), back.error);
    const auto& q = back.registry->all()[3];
    CHECK(q.name == std::string_view("caf? GPU ???")); // byte for byte, so it still fits
    CHECK(q.arch == std::string_view("\xf0\x9f\x9a\x80ok"));
    CHECK(back.registry->warnings()[2].subject == "/proc/?");
    CHECK(back.registry->warnings()[2].message == "bad ?");
    CHECK(back.registry->host().cpu.model == "Z80??");
    // NaN and infinity have no JSON spelling: written as unknown.
    const auto& n = back.registry->all()[4];
    CHECK_FALSE(n.memory_bandwidth_gbps.has_value());
    CHECK(n.peak.fp16 == 0);
}

TEST_CASE("to_json_string writes what its reader refuses as unknown, so the document reads") {
    // A caller's registry may hold values the reader would refuse: a negative peak rate, a
    // class code past 24 bits. Written as they are, the disk cache would never hit again.
    ah::accelerator_registry r;
    ah::accelerator_profile p;
    p.peak.fp16 = -1;
    p.peak.bf16 = 100;
    r.add(p);
    ah::pci_device d;
    d.address = ah::pci_address{0, 1, 0, 0};
    d.class_code = 0x1000000u;
    r.system().pci_devices.push_back(d);
    const auto back = ah::registry_from_json(ah::to_json_string(r));
    REQUIRE_MESSAGE(back.ok(), back.error);
    CHECK(back.registry->all()[0].peak.fp16 == 0);
    CHECK(back.registry->all()[0].peak.bf16 == 100);
    REQUIRE(back.registry->system().pci_devices.size() == 1);
    CHECK(back.registry->system().pci_devices[0].class_code == 0);

    // PCI addresses no bus can have: device 32 was written as "…:20.0", which the reader
    // refuses (the whole document with it), and function 9 was masked to 1, a different
    // address. The profile's is written as unknown; a PCI device, known by its address,
    // is left out, and the others stay.
    for (const auto bad : {ah::pci_address{0, 1, 32, 0}, ah::pci_address{0, 1, 2, 9}}) {
        CAPTURE(static_cast<int>(bad.device));
        ah::accelerator_registry q;
        ah::accelerator_profile a;
        a.pci = bad;
        q.add(a);
        ah::pci_device good;
        good.address = ah::pci_address{0, 2, 0, 0};
        ah::pci_device impossible;
        impossible.address = bad;
        q.system().pci_devices = {good, impossible};
        const auto read = ah::registry_from_json(ah::to_json_string(q));
        REQUIRE_MESSAGE(read.ok(), read.error);
        CHECK_FALSE(read.registry->all()[0].pci.has_value());
        REQUIRE(read.registry->system().pci_devices.size() == 1);
        CHECK(read.registry->system().pci_devices[0].address == good.address);
    }
}

#else

TEST_CASE("io/json.hpp without nlohmann/json") {
    // The header is an empty shell when nlohmann/json is not available.
    CHECK(AI_HWACCEL_JSON == 0);
}

#endif
