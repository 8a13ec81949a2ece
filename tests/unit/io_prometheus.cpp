#include "ai_hwaccel/io/prometheus.hpp"

#include "ai_hwaccel/core/catalogue.hpp"
#include "ai_hwaccel/detect/detect.hpp"
#include "fixtures.hpp"

#include <doctest/doctest.h>

#if defined(__unix__) || defined(__APPLE__)
#include <sys/stat.h> // mkfifo
#endif

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace ah = ai_hwaccel;
using namespace ah::literals;

static_assert(ah::is_valid_prometheus_name("ai_hwaccel_device_memory_total_bytes"));
static_assert(ah::is_valid_prometheus_name("job:rate5m"));
static_assert(!ah::is_valid_prometheus_name("1abc"));
static_assert(!ah::is_valid_prometheus_name("a-b"));
static_assert(!ah::is_valid_prometheus_name(""));
static_assert(ah::is_valid_prometheus_label_name("_x1"));
static_assert(!ah::is_valid_prometheus_label_name("a:b"));

namespace {

/// One parsed sample line.
struct sample {
    std::string name;
    std::map<std::string, std::string> labels; // values unescaped
    double value = 0;
};

/// A reader of the text format written from its specification, independent of the
/// writer: checks the grammar, grouping, HELP/TYPE and uniqueness, and returns the
/// samples. Every violation is a failed CHECK with the offending line.
std::vector<sample> parse_exposition(const std::string& text) {
    std::vector<sample> out;
    std::set<std::string> finished, helped, typed, series;
    std::string current;
    std::size_t pos = 0;
    REQUIRE((text.empty() || text.back() == '\n'));
    const auto valid_name = [](std::string_view s, bool colon) {
        if (s.empty()) return false;
        for (std::size_t i = 0; i < s.size(); ++i) {
            const char c = s[i];
            const bool a = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon && c == ':');
            if (!a && !(i > 0 && c >= '0' && c <= '9')) return false;
        }
        return true;
    };
    const auto enter = [&](const std::string& name, const std::string& line) {
        if (name == current) return;
        INFO(line);
        CHECK_MESSAGE(finished.count(name) == 0, "family written in two places: " << name);
        if (!current.empty()) finished.insert(current);
        current = name;
    };
    while (pos < text.size()) {
        const std::size_t nl = text.find('\n', pos);
        const std::string line = text.substr(pos, nl - pos);
        pos = nl + 1;
        INFO(line);
        if (line.starts_with("# HELP ") || line.starts_with("# TYPE ")) {
            const std::string rest = line.substr(7);
            const std::string name = rest.substr(0, rest.find(' '));
            CHECK(valid_name(name, true));
            enter(name, line);
            auto& seen = line[2] == 'H' ? helped : typed;
            CHECK_MESSAGE(seen.insert(name).second, "second HELP/TYPE for " << name);
            if (line[2] == 'T') {
                CHECK(rest.substr(name.size()) == " gauge");
                CHECK_MESSAGE(helped.count(name) == 1, "TYPE before HELP");
            }
            continue;
        }
        REQUIRE_FALSE(line.starts_with("#"));
        sample s;
        std::size_t i = 0;
        while (i < line.size() && line[i] != '{' && line[i] != ' ') ++i;
        s.name = line.substr(0, i);
        CHECK(valid_name(s.name, true));
        enter(s.name, line);
        CHECK_MESSAGE(typed.count(s.name) == 1, "sample without TYPE");
        std::string key = s.name;
        if (i < line.size() && line[i] == '{') {
            ++i;
            while (i < line.size() && line[i] != '}') {
                const std::size_t eq = line.find('=', i);
                REQUIRE(eq != std::string::npos);
                const std::string lname = line.substr(i, eq - i);
                CHECK(valid_name(lname, false));
                REQUIRE(line[eq + 1] == '"');
                std::string value;
                std::size_t j = eq + 2;
                for (; j < line.size() && line[j] != '"'; ++j) {
                    if (line[j] == '\\') {
                        REQUIRE(j + 1 < line.size());
                        const char e = line[++j];
                        CHECK((e == '\\' || e == '"' || e == 'n'));
                        value += e == 'n' ? '\n' : e;
                    } else
                        value += line[j];
                }
                REQUIRE(j < line.size());
                CHECK_MESSAGE(s.labels.emplace(lname, value).second, "label repeated: " << lname);
                i = j + 1;
                if (line[i] == ',') ++i;
            }
            REQUIRE(i < line.size());
            ++i;
        }
        REQUIRE(i < line.size());
        REQUIRE(line[i] == ' ');
        const std::string number = line.substr(i + 1);
        char* end = nullptr;
        s.value = std::strtod(number.c_str(), &end);
        CHECK_MESSAGE((!number.empty() && *end == '\0'), "no timestamps, one number");
        CHECK(std::isfinite(s.value));
        for (const auto& [k, v] : s.labels) key += "\x1f" + k + "=" + v;
        CHECK_MESSAGE(series.insert(key).second, "duplicate series");
        out.push_back(std::move(s));
    }
    return out;
}

std::vector<const sample*> find(const std::vector<sample>& all, std::string_view name) {
    std::vector<const sample*> r;
    for (const auto& s : all)
        if (s.name == name) r.push_back(&s);
    return r;
}

const sample* find_device(const std::vector<sample>& all, std::string_view name, std::string_view kind,
                          std::string_view index) {
    for (const auto& s : all)
        if (s.name == name && s.labels.count("kind") && s.labels.at("kind") == kind && s.labels.at("index") == index)
            return &s;
    return nullptr;
}

ah::accelerator_profile h100(std::uint32_t index) {
    auto p = ah::profile_from_spec(*ah::find_device("H100 SXM"), index);
    p.name = "NVIDIA H100 80GB HBM3";
    p.pci = ah::pci_address{0, static_cast<std::uint8_t>(0x19 + index), 0, 0};
    p.uuid = "GPU-ee7954ec-da95-fd7a-ddfd-c6b32cc2f8aa";
    p.driver_version = "535.161.08";
    p.memory_used_bytes = {1_GiB, ah::origin::tool};
    p.memory_free_bytes = {79_GiB, ah::origin::tool};
    p.temperature_c = {0, ah::origin::tool}; // a real 0 is written
    p.power_draw_watts = {312.25, ah::origin::tool};
    p.utilization_percent = {97, ah::origin::tool};
    return p;
}

ah::accelerator_registry hostile_registry() {
    auto a = h100(0);
    // A quote, a backslash, a newline, a tab, non-ASCII and a byte that is not UTF-8.
    a.name = "Evil \"GPU\" \\ line\nbreak\ttab \xc3\x84 \xff end";
    auto b = h100(1);
    b.temperature_c.reset(); // unknown: no series
    b.power_draw_watts = {std::numeric_limits<double>::quiet_NaN(), ah::origin::tool};
    b.memory_bandwidth_gbps = {1000, ah::origin::estimated};
    b.available = false;
    ah::accelerator_profile cpu;
    cpu.name = "AMD EPYC 9654";
    cpu.memory_bytes = {512_GiB, ah::origin::sysfs};
    ah::host_info host;
    host.cpu.model = "AMD EPYC 9654 \"96-Core\"";
    host.cpu.maker = ah::vendor::amd;
    host.cpu.arch = ah::cpu_arch::x86_64;
    host.memory.total_bytes = {512_GiB, ah::origin::sysfs};
    std::vector<ah::warning> warnings{
        {ah::warning_kind::tool_not_found, ah::backend_id::rocm, "amd-smi", "", 0},
        {ah::warning_kind::tool_not_found, ah::backend_id::gaudi, "hl-smi", "", 0},
        {ah::warning_kind::parse_error, ah::backend_id::cuda, "nvidia-smi", "bad line", 0},
    };
    return ah::accelerator_registry({cpu, a, b}, warnings, host);
}

std::vector<std::filesystem::path> fixture_machines() {
    std::vector<std::filesystem::path> r;
    for (const auto& e : std::filesystem::directory_iterator(AI_HWACCEL_MACHINES_DIR))
        if (test::is_fixture_machine(e)) r.push_back(e.path());
    std::sort(r.begin(), r.end());
    return r;
}

} // namespace

TEST_CASE("to_prometheus") {
    const auto reg = hostile_registry();
    const std::string text = ah::to_prometheus(reg);
    const auto samples = parse_exposition(text);

    SUBCASE("label values are escaped and valid UTF-8") {
        CHECK(text.find("name=\"Evil \\\"GPU\\\" \\\\ line\\nbreak tab \xc3\x84 \xef\xbf\xbd end\"") !=
              std::string::npos);
        const auto* info = find_device(samples, "ai_hwaccel_device_info", "cuda_gpu", "0");
        REQUIRE(info);
        CHECK(info->labels.at("name") == "Evil \"GPU\" \\ line\nbreak tab \xc3\x84 \xef\xbf\xbd end");
        CHECK(info->labels.at("pci") == "0000:19:00.0");
        CHECK(info->labels.at("uuid") == "GPU-ee7954ec-da95-fd7a-ddfd-c6b32cc2f8aa");
        CHECK(info->labels.at("driver") == "535.161.08");
        CHECK(info->labels.at("arch") == "9.0");
        CHECK(info->labels.at("vendor") == "nvidia");
        CHECK(info->value == 1);
        CHECK(text.find("model=\"AMD EPYC 9654 \\\"96-Core\\\"\"") != std::string::npos);
    }
    SUBCASE("values in base units; unknown ones left out, zeros kept") {
        const auto* used = find_device(samples, "ai_hwaccel_device_memory_used_bytes", "cuda_gpu", "0");
        REQUIRE(used);
        CHECK(used->value == static_cast<double>(1_GiB));
        const auto* total = find_device(samples, "ai_hwaccel_device_memory_total_bytes", "cuda_gpu", "1");
        REQUIRE(total); // from the catalogue: kept by default
        CHECK(total->value == static_cast<double>(81559ull << 20)); // what nvidia-smi reports of 80 GiB
        const auto* util = find_device(samples, "ai_hwaccel_device_utilization_ratio", "cuda_gpu", "0");
        REQUIRE(util);
        CHECK(util->value == doctest::Approx(0.97));
        const auto* temp0 = find_device(samples, "ai_hwaccel_device_temperature_celsius", "cuda_gpu", "0");
        REQUIRE(temp0);
        CHECK(temp0->value == 0);
        CHECK(find_device(samples, "ai_hwaccel_device_temperature_celsius", "cuda_gpu", "1") == nullptr);
        CHECK(find_device(samples, "ai_hwaccel_device_power_draw_watts", "cuda_gpu", "1") == nullptr); // NaN
        CHECK(find_device(samples, "ai_hwaccel_device_power_draw_watts", "cuda_gpu", "0")->value == 312.25);
        CHECK(text.find("bandwidth") == std::string::npos); // an estimate, never exported
        CHECK(find_device(samples, "ai_hwaccel_device_available", "cuda_gpu", "1")->value == 0);
        CHECK(find_device(samples, "ai_hwaccel_device_available", "cuda_gpu", "0")->value == 1);
    }
    SUBCASE("the CPU is the host's business unless asked for") {
        CHECK(find_device(samples, "ai_hwaccel_device_info", "cpu", "0") == nullptr);
        ah::prometheus_options opt;
        opt.include_cpu = true;
        const auto with_cpu = parse_exposition(ah::to_prometheus(reg, opt));
        CHECK(find_device(with_cpu, "ai_hwaccel_device_info", "cpu", "0") != nullptr);
        const auto host = find(samples, "ai_hwaccel_host_memory_total_bytes");
        REQUIRE(host.size() == 1);
        CHECK(host[0]->value == static_cast<double>(512_GiB));
        CHECK(host[0]->labels.empty());
        CHECK(find(samples, "ai_hwaccel_host_memory_available_bytes").empty()); // unknown
    }
    SUBCASE("a cgroup limit is a series where it is below the physical total") {
        ah::host_info host;
        host.memory.total_bytes = {64_GiB, ah::origin::sysfs};
        host.memory.cgroup_limit_bytes = {16_GiB, ah::origin::sysfs};
        host.memory.cgroup_free_bytes = {4_GiB, ah::origin::sysfs};
        auto limited = parse_exposition(ah::to_prometheus(ah::accelerator_registry({}, {}, host)));
        REQUIRE(find(limited, "ai_hwaccel_host_memory_limit_bytes").size() == 1);
        CHECK(find(limited, "ai_hwaccel_host_memory_limit_bytes")[0]->value == static_cast<double>(16_GiB));
        CHECK(find(limited, "ai_hwaccel_host_memory_limit_free_bytes")[0]->value == static_cast<double>(4_GiB));
        host.memory.cgroup_limit_bytes = {128_GiB, ah::origin::sysfs}; // above the machine: no limit in effect
        limited = parse_exposition(ah::to_prometheus(ah::accelerator_registry({}, {}, host)));
        CHECK(find(limited, "ai_hwaccel_host_memory_limit_bytes").empty());
        // Nor what is "left" under it, which can be more than the host has (a pod's limit
        // above its node's memory). Before, 1014 GiB free on a 100 GiB host.
        host.memory.cgroup_free_bytes = {128_GiB - 10_GiB, ah::origin::sysfs};
        limited = parse_exposition(ah::to_prometheus(ah::accelerator_registry({}, {}, host)));
        CHECK(find(limited, "ai_hwaccel_host_memory_limit_free_bytes").empty());
        host.memory.total_bytes.reset(); // total unknown: the limit is all there is
        limited = parse_exposition(ah::to_prometheus(ah::accelerator_registry({}, {}, host)));
        CHECK(find(limited, "ai_hwaccel_host_memory_limit_bytes").size() == 1);
        CHECK(find(limited, "ai_hwaccel_host_memory_limit_free_bytes").size() == 1);
    }
    SUBCASE("counts: devices by kind, every warning kind") {
        const auto devices = find(samples, "ai_hwaccel_devices");
        REQUIRE(devices.size() == 2); // cpu, cuda_gpu
        for (const auto* s : devices) CHECK(s->value == 1); // the CPU; one of the two GPUs
        const auto warnings = find(samples, "ai_hwaccel_warnings");
        CHECK(warnings.size() == ah::warning_kind_count);
        for (const auto* s : warnings) {
            const auto& k = s->labels.at("kind");
            CHECK(s->value == (k == "tool_not_found" ? 2 : k == "parse_error" ? 1 : 0));
        }
    }
    SUBCASE("min_origin drops what is less trustworthy") {
        ah::prometheus_options opt;
        opt.min_origin = ah::origin::sysfs;
        const auto measured = parse_exposition(ah::to_prometheus(reg, opt));
        CHECK(find_device(measured, "ai_hwaccel_device_memory_total_bytes", "cuda_gpu", "1") == nullptr);
        CHECK(find_device(measured, "ai_hwaccel_device_power_limit_watts", "cuda_gpu", "0") == nullptr);
        CHECK(find_device(measured, "ai_hwaccel_device_memory_used_bytes", "cuda_gpu", "0") != nullptr);
    }
}

TEST_CASE("to_prometheus: series stay unique and labels valid whatever the input") {
    SUBCASE("a repeated (kind, index) pair") {
        ah::accelerator_registry reg({h100(3), h100(3), h100(3)});
        const auto samples = parse_exposition(ah::to_prometheus(reg));
        CHECK(find_device(samples, "ai_hwaccel_device_info", "cuda_gpu", "3") != nullptr);
        CHECK(find_device(samples, "ai_hwaccel_device_info", "cuda_gpu", "3-1") != nullptr);
        CHECK(find_device(samples, "ai_hwaccel_device_info", "cuda_gpu", "3-2") != nullptr);
    }
    SUBCASE("the stacks of a card: Level Zero's <card>.<stack>") {
        auto a = h100(3), b = h100(3), c = h100(3);
        a.stack = 0;
        b.stack = 1;
        c.stack = 1; // a repeat, which no detection makes
        const auto samples = parse_exposition(ah::to_prometheus(ah::accelerator_registry({a, b, c, h100(3)})));
        CHECK(find(samples, "ai_hwaccel_device_info").size() == 4);
        for (const char* index : {"3.0", "3.1", "3.1-1", "3"})
            CHECK_MESSAGE(find_device(samples, "ai_hwaccel_device_info", "cuda_gpu", index) != nullptr, index);
    }
    SUBCASE("extra labels made valid, clashes renamed, repeats dropped") {
        ah::prometheus_options opt;
        opt.extra_labels = {{"node", "gpu-17"}, {"kind", "mine"}, {"bad-name.x", "v"}, {"__meta", "m"},
                            {"9lives", "c"}, {"node", "again"}, {"", "empty"}};
        const std::string text = ah::to_prometheus(hostile_registry(), opt);
        const auto samples = parse_exposition(text);
        for (const auto& s : samples) {
            CHECK(s.labels.at("node") == "gpu-17");
            CHECK(s.labels.at("exported_kind") == "mine");
            CHECK(s.labels.at("bad_name_x") == "v");
            CHECK(s.labels.at("exported___meta") == "m");
            CHECK(s.labels.at("_9lives") == "c");
            CHECK(s.labels.at("_") == "empty");
        }
        // Names that rename or sanitize to a taken one are renamed again, not dropped
        // (before, "y" and the second "node_name" disappeared).
        opt.extra_labels = {{"kind", "x"}, {"exported_kind", "y"}, {"node.name", "a"}, {"node-name", "b"}};
        for (const auto& s : parse_exposition(ah::to_prometheus(hostile_registry(), opt))) {
            CHECK(s.labels.at("exported_kind") == "x");
            CHECK(s.labels.at("exported_exported_kind") == "y");
            CHECK(s.labels.at("node_name") == "a");
            CHECK(s.labels.at("exported_node_name") == "b");
        }
    }
    SUBCASE("histogram and summary label names are clashes too") {
        ah::prometheus_options opt;
        opt.extra_labels = {{"le", "x"}, {"quantile", "y"}};
        const auto samples = parse_exposition(ah::to_prometheus(hostile_registry(), opt));
        for (const auto& s : samples) {
            CHECK(s.labels.count("le") == 0);
            CHECK(s.labels.count("quantile") == 0);
            CHECK(s.labels.at("exported_le") == "x");
            CHECK(s.labels.at("exported_quantile") == "y");
        }
    }
    SUBCASE("a percent becomes the ratio it is, with no rounding noise") {
        // percent * 0.01 prints 0.5700000000000001 for 57 and 0.7000000000000001 for 70.
        const std::pair<double, const char*> cases[] = {{57, "0.57"}, {70, "0.7"}, {35, "0.35"}, {95, "0.95"},
                                                        {100, "1"}, {0, "0"}};
        for (const auto& [percent, expected] : cases) {
            auto p = h100(0);
            p.utilization_percent = {percent, ah::origin::tool};
            const std::string text = ah::to_prometheus(ah::accelerator_registry({p}));
            const auto at = text.find("\nai_hwaccel_device_utilization_ratio{");
            REQUIRE(at != std::string::npos);
            const auto value = text.substr(text.find("} ", at) + 2, text.find('\n', at + 1) - text.find("} ", at) - 2);
            CHECK_MESSAGE(value == expected, "percent ", p.utilization_percent.value);
        }
    }
    SUBCASE("an empty registry") {
        const auto samples = parse_exposition(ah::to_prometheus(ah::accelerator_registry{}));
        CHECK(find(samples, "ai_hwaccel_build_info").size() == 1);
        CHECK(find(samples, "ai_hwaccel_warnings").size() == ah::warning_kind_count);
        CHECK(find(samples, "ai_hwaccel_device_info").empty());
    }
    SUBCASE("every fixture machine") {
        for (const auto& m : fixture_machines()) {
            CAPTURE(m.string());
            const auto reg = ah::detect(ah::host_system(m.string()));
            const auto samples = parse_exposition(ah::to_prometheus(reg));
            std::size_t devices = 0;
            for (const auto& p : reg.all()) devices += p.is_cpu() ? 0 : 1;
            CHECK(find(samples, "ai_hwaccel_device_info").size() == devices);
            // Each device series joins to exactly one info series.
            for (const auto& s : samples)
                if (s.name.starts_with("ai_hwaccel_device_"))
                    CHECK(find_device(samples, "ai_hwaccel_device_info", s.labels.at("kind"), s.labels.at("index")));
        }
    }
}

TEST_CASE("write_file_atomically") {
    test::scratch_dir dir;
    namespace fs = std::filesystem;
    const fs::path target = dir.path() / "ai-hwaccel.prom";
    const auto listing = [&] {
        std::vector<std::string> names;
        for (const auto& e : fs::directory_iterator(dir.path())) names.push_back(e.path().filename().string());
        std::sort(names.begin(), names.end());
        return names;
    };

    SUBCASE("creates, then replaces, leaving no temporary file") {
        REQUIRE(ah::write_file_atomically(target, "first\n"));
        CHECK(test::read_file(target) == "first\n");
        const auto r = ah::write_file_atomically(target, "second\n");
        CHECK(r.ok);
        CHECK(r.message.empty());
        CHECK(test::read_file(target) == "second\n");
        CHECK(listing() == std::vector<std::string>{"ai-hwaccel.prom"});
    }
    SUBCASE("a symlink at the path is replaced, its target left alone") {
        dir.write("elsewhere", "precious\n");
        fs::create_symlink(dir.path() / "elsewhere", target);
        REQUIRE(ah::write_file_atomically(target, "metrics\n"));
        CHECK(fs::is_regular_file(fs::symlink_status(target)));
        CHECK(test::read_file(target) == "metrics\n");
        CHECK(test::read_file(dir.path() / "elsewhere") == "precious\n");
    }
    SUBCASE("a missing folder or a folder at the path is an error, nothing left behind") {
        const auto r = ah::write_file_atomically(dir.path() / "no" / "such" / "file", "x");
        CHECK_FALSE(r);
        CHECK(r.message.find("cannot create") != std::string::npos);
        fs::create_directory(target);
        const auto r2 = ah::write_file_atomically(target, "x");
        CHECK_FALSE(r2);
        CHECK(fs::is_directory(target));
        CHECK(listing() == std::vector<std::string>{"ai-hwaccel.prom"});
        CHECK_FALSE(ah::write_file_atomically(dir.path() / "..", "x"));
    }
    SUBCASE("a name as long as the folder allows still gets a temporary name that fits") {
        const fs::path longest = dir.path() / (std::string(245, 'm') + ".prom"); // 250 bytes
        REQUIRE(ah::write_file_atomically(longest, "metrics\n"));
        CHECK(test::read_file(longest) == "metrics\n");
        CHECK(listing().size() == 1);
    }
#if defined(__unix__) || defined(__APPLE__)
    SUBCASE("a FIFO at the path is refused and left as it is (a device the same way)") {
        REQUIRE(::mkfifo(target.string().c_str(), 0600) == 0);
        const auto r = ah::write_file_atomically(target, "x");
        CHECK_FALSE(r);
        CHECK(r.message.find("not a regular file") != std::string::npos);
        CHECK(fs::is_fifo(fs::symlink_status(target)));
        CHECK(listing() == std::vector<std::string>{"ai-hwaccel.prom"});
    }
#endif
}
