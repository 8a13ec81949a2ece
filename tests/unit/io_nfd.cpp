#include "ai_hwaccel/io/nfd.hpp"

#include "ai_hwaccel/core/catalogue.hpp"
#include "ai_hwaccel/detect/detect.hpp"

#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace ah = ai_hwaccel;
using namespace ah::literals;

// Kubernetes' own examples and limits (apimachinery's validation tests).
static_assert(ah::is_valid_label_name("ai-hwaccel.io/cuda_gpu.count"));
static_assert(ah::is_valid_label_name("app.kubernetes.io/name"));
static_assert(ah::is_valid_label_name("simple"));
static_assert(ah::is_valid_label_name("A.B_c-9"));
static_assert(!ah::is_valid_label_name(""));
static_assert(!ah::is_valid_label_name("/name"));
static_assert(!ah::is_valid_label_name("prefix/"));
static_assert(!ah::is_valid_label_name("a/b/c"));
static_assert(!ah::is_valid_label_name("UPPER.io/name")); // the prefix is lower case
static_assert(!ah::is_valid_label_name("ai_hwaccel.io/name")); // no '_' in a DNS name
static_assert(!ah::is_valid_label_name("a..b/name"));
static_assert(!ah::is_valid_label_name("-a.io/name"));
static_assert(!ah::is_valid_label_name("a.io/-name"));
static_assert(!ah::is_valid_label_name("a.io/name."));
static_assert(!ah::is_valid_label_name("a.io/na me"));
static_assert(ah::is_valid_label_value(""));
static_assert(ah::is_valid_label_value("NVIDIA-H100-80GB-HBM3"));
static_assert(ah::is_valid_label_value("535.161.08"));
static_assert(!ah::is_valid_label_value("has space"));
static_assert(!ah::is_valid_label_value("-lead"));
static_assert(!ah::is_valid_label_value("trail_"));
static_assert(!ah::is_valid_label_value("caf\xc3\xa9"));

namespace {

/// "key=value" lines (comments skipped) as a map; a repeated key or a line without '='
/// fails the test.
std::map<std::string, std::string> parse_features(const std::string& text) {
    std::map<std::string, std::string> labels;
    std::size_t pos = 0;
    while (pos < text.size()) {
        const std::size_t nl = text.find('\n', pos);
        REQUIRE(nl != std::string::npos); // every line ends with a newline
        const std::string line = text.substr(pos, nl - pos);
        pos = nl + 1;
        if (line.starts_with("#")) continue;
        INFO(line);
        const auto eq = line.find('=');
        REQUIRE(eq != std::string::npos);
        CHECK(labels.emplace(line.substr(0, eq), line.substr(eq + 1)).second);
    }
    return labels;
}

void check_all_valid(const std::string& text, const ah::nfd_options& opt = {}) {
    const auto names = ah::nfd_label_names(opt);
    const std::set<std::string> known(names.begin(), names.end());
    CHECK(text.size() < 64 * 1024); // NFD ignores larger feature files
    for (const auto& kv : parse_features(text)) {
        const std::string& k = kv.first;
        const std::string& v = kv.second;
        INFO(k << "=" << v);
        CHECK(ah::is_valid_label_name(k));
        CHECK(ah::is_valid_label_value(v));
        CHECK_FALSE(v.empty());
        CHECK(k.starts_with(opt.prefix + "/"));
        CHECK(known.count(k) == 1);
    }
}

ah::accelerator_profile gpu(const char* spec, std::uint32_t index, const char* name) {
    auto p = ah::profile_from_spec(*ah::find_device(spec), index);
    p.name = name;
    p.driver_version = "550.54.15";
    return p;
}

std::vector<std::filesystem::path> fixture_machines() {
    std::vector<std::filesystem::path> r;
    for (const auto& e : std::filesystem::directory_iterator(AI_HWACCEL_MACHINES_DIR))
        if (test::is_fixture_machine(e)) r.push_back(e.path());
    std::sort(r.begin(), r.end());
    return r;
}

} // namespace

TEST_CASE("sanitize_label_value") {
    CHECK(ah::sanitize_label_value("NVIDIA H100 80GB HBM3") == "NVIDIA-H100-80GB-HBM3");
    CHECK(ah::sanitize_label_value("AMD Instinct MI300X") == "AMD-Instinct-MI300X");
    CHECK(ah::sanitize_label_value("  (Intel) Arc\xe2\x84\xa2 A770 \"LE\"\n") == "Intel-Arc-A770-LE");
    CHECK(ah::sanitize_label_value("gfx942:sramecc+:xnack-") == "gfx942-sramecc-xnack");
    CHECK(ah::sanitize_label_value("a - b") == "a-b");
    CHECK(ah::sanitize_label_value("9.0") == "9.0");
    CHECK(ah::sanitize_label_value("\"\\\n\xff") == "");
    CHECK(ah::sanitize_label_value("") == "");
    const std::string long_name(40, 'x');
    const auto cut = ah::sanitize_label_value(long_name + " " + long_name);
    CHECK(cut.size() <= 63);
    CHECK(cut == long_name + "-" + std::string(22, 'x'));
    // A cut that lands on punctuation is trimmed back to an alphanumeric.
    CHECK(ah::sanitize_label_value(std::string(62, 'y') + ".z") == std::string(62, 'y'));
    // Whatever the bytes, the result is valid.
    std::string all;
    for (int c = 1; c < 256; ++c) all += static_cast<char>(c);
    for (std::size_t n = 0; n < all.size(); n += 7) {
        const auto s = ah::sanitize_label_value(all.substr(n, 90));
        CAPTURE(n);
        CHECK(ah::is_valid_label_value(s));
    }
}

TEST_CASE("to_nfd_features") {
    SUBCASE("eight H100s") {
        std::vector<ah::accelerator_profile> devices;
        for (std::uint32_t i = 0; i < 8; ++i) {
            auto p = gpu("H100 SXM", i, "NVIDIA H100 80GB HBM3");
            p.memory_bytes = {81559_MiB, ah::origin::tool}; // what nvidia-smi says: 79.6 GiB
            devices.push_back(p);
        }
        ah::accelerator_registry reg(devices);
        ah::interconnect nvswitch;
        nvswitch.kind = ah::interconnect_kind::nvswitch;
        reg.add(nvswitch);
        const std::string text = ah::to_nfd_features(reg);
        check_all_valid(text);
        const auto labels = parse_features(text);
        CHECK(labels.at("ai-hwaccel.io/accelerator.count") == "8");
        CHECK(labels.at("ai-hwaccel.io/family.gpu") == "true");
        CHECK(labels.count("ai-hwaccel.io/family.tpu") == 0);
        CHECK(labels.at("ai-hwaccel.io/cuda_gpu.count") == "8");
        CHECK(labels.at("ai-hwaccel.io/cuda_gpu.memory-gib") == "79"); // rounded down: a pod asking for 80 would not fit
        CHECK(labels.at("ai-hwaccel.io/cuda_gpu.model") == "NVIDIA-H100-80GB-HBM3");
        CHECK(labels.at("ai-hwaccel.io/cuda_gpu.vendor") == "nvidia");
        CHECK(labels.at("ai-hwaccel.io/cuda_gpu.arch") == "9.0");
        CHECK(labels.at("ai-hwaccel.io/cuda_gpu.driver") == "550.54.15");
        CHECK(labels.at("ai-hwaccel.io/interconnect.nvswitch") == "true");
        CHECK(labels.count("ai-hwaccel.io/cuda_gpu.unified-memory") == 0);
        CHECK(labels.at("ai-hwaccel.io/version") == ah::version.text);
        // An InfiniBand port that is down (no cable) gives no fabric label; one that is
        // active, or whose state is unknown, does. Before, a DOWN port labelled the node.
        ah::interconnect ib;
        ib.kind = ah::interconnect_kind::infiniband;
        ib.scope = ah::link_scope::inter_node;
        ib.name = "mlx5_0 port 1";
        ib.state = "1: DOWN";
        reg.add(ib);
        CHECK(parse_features(ah::to_nfd_features(reg)).count("ai-hwaccel.io/interconnect.infiniband") == 0);
        ib.name = "mlx5_1 port 1";
        ib.state = "4: ACTIVE";
        reg.add(ib);
        CHECK(parse_features(ah::to_nfd_features(reg)).at("ai-hwaccel.io/interconnect.infiniband") == "true");
    }
    SUBCASE("mixed devices: shared facts only, the smallest memory") {
        auto a = gpu("RTX 4090", 0, "NVIDIA GeForce RTX 4090");
        auto b = gpu("H100 SXM", 1, "NVIDIA H100 80GB HBM3");
        const auto labels = parse_features(ah::to_nfd_features(ah::accelerator_registry({a, b})));
        CHECK(labels.at("ai-hwaccel.io/cuda_gpu.count") == "2");
        // The RTX 4090's catalogue memory is what its driver reports, 24 564 MiB: 23 whole GiB.
        CHECK(labels.at("ai-hwaccel.io/cuda_gpu.memory-gib") == "23");

        CHECK(labels.count("ai-hwaccel.io/cuda_gpu.model") == 0);
        CHECK(labels.count("ai-hwaccel.io/cuda_gpu.arch") == 0);
        CHECK(labels.at("ai-hwaccel.io/cuda_gpu.driver") == "550.54.15");
    }
    SUBCASE("unknown memory, estimates, unavailable and software devices") {
        auto a = gpu("MI300X", 0, "AMD Instinct MI300X");
        auto b = gpu("MI300X", 1, "AMD Instinct MI300X");
        b.memory_bytes.reset(); // one device's memory unknown: no memory label at all
        auto c = gpu("MI300X", 2, "AMD Instinct MI300X");
        c.available = false;
        ah::accelerator_profile llvmpipe;
        llvmpipe.kind = ah::device_kind::vulkan_gpu;
        llvmpipe.software = true;
        llvmpipe.name = "llvmpipe (LLVM 15.0.6, 256 bits)";
        ah::accelerator_profile cpu;
        const auto labels = parse_features(ah::to_nfd_features(ah::accelerator_registry({cpu, a, b, c, llvmpipe})));
        CHECK(labels.at("ai-hwaccel.io/rocm_gpu.count") == "2");
        CHECK(labels.count("ai-hwaccel.io/rocm_gpu.memory-gib") == 0);
        CHECK(labels.count("ai-hwaccel.io/vulkan_gpu.count") == 0);
        CHECK(labels.at("ai-hwaccel.io/accelerator.count") == "2");

        auto d = gpu("MI300X", 0, "AMD Instinct MI300X");
        d.memory_bytes = {100_GiB, ah::origin::estimated};
        ah::accelerator_registry one({d});
        CHECK(parse_features(ah::to_nfd_features(one)).count("ai-hwaccel.io/rocm_gpu.memory-gib") == 0);
        ah::nfd_options loose;
        loose.min_origin = ah::origin::estimated;
        CHECK(parse_features(ah::to_nfd_features(one, loose)).at("ai-hwaccel.io/rocm_gpu.memory-gib") == "100");
    }
    SUBCASE("hostile names never make an invalid label") {
        std::vector<ah::accelerator_profile> devices;
        const char* names[] = {"Evil \"GPU\"\nline two=oops", "\xff\xfe", "\xc3\x84pfel-Beschleuniger",
                               "../../etc/passwd", "-_-.", "x"};
        std::uint32_t i = 0;
        for (const char* n : names) {
            auto p = gpu("H100 SXM", i++, n);
            p.kind = static_cast<ah::device_kind>(i); // one kind each, so every name is written
            p.arch = "a b/c";
            p.driver_version = "=\n";
            devices.push_back(p);
        }
        const std::string text = ah::to_nfd_features(ah::accelerator_registry(devices));
        check_all_valid(text);
        const auto labels = parse_features(text);
        CHECK(labels.at("ai-hwaccel.io/cuda_gpu.model") == "Evil-GPU-line-two-oops");
        CHECK(labels.count("ai-hwaccel.io/rocm_gpu.model") == 0); // nothing usable left
        CHECK(labels.at("ai-hwaccel.io/intel_gpu.model") == "pfel-Beschleuniger");
        CHECK(labels.at("ai-hwaccel.io/metal_gpu.model") == "etc-passwd");
        CHECK(labels.at("ai-hwaccel.io/cuda_gpu.arch") == "a-b-c");
        CHECK(labels.count("ai-hwaccel.io/cuda_gpu.driver") == 0);
    }
    SUBCASE("expiry time and prefix") {
        ah::nfd_options opt;
        opt.prefix = "feature.node.kubernetes.io";
        using namespace std::chrono;
        opt.expiry_time = sys_days{year{2031} / 7 / 9} + hours{8} + minutes{5} + seconds{3};
        const std::string text = ah::to_nfd_features(ah::accelerator_registry({gpu("H100 SXM", 0, "H100")}), opt);
        CHECK(text.find("\n# +expiry-time=2031-07-09T08:05:03Z\n") != std::string::npos);
        CHECK(text.find("\nfeature.node.kubernetes.io/cuda_gpu.count=1\n") != std::string::npos);
        check_all_valid(text, opt);
    }
    SUBCASE("an expiry beyond what RFC 3339 writes is clamped to the years it has") {
        // NFD reads a time it cannot parse as "now": a five-digit or negative year would
        // make the labels after it never lapse.
        ah::nfd_options opt;
        const ah::accelerator_registry reg({gpu("H100 SXM", 0, "H100")});
        opt.expiry_time = std::chrono::sys_seconds{std::chrono::seconds{253402300800}}; // 10000-01-01
        CHECK(ah::to_nfd_features(reg, opt).find("\n# +expiry-time=9999-12-31T23:59:59Z\n") != std::string::npos);
        opt.expiry_time = std::chrono::sys_seconds{std::chrono::seconds{-62167219201}}; // -0001-12-31
        CHECK(ah::to_nfd_features(reg, opt).find("\n# +expiry-time=0000-01-01T00:00:00Z\n") != std::string::npos);
        opt.expiry_time = std::chrono::sys_seconds{std::chrono::seconds{253402300799}}; // the last second kept
        CHECK(ah::to_nfd_features(reg, opt).find("\n# +expiry-time=9999-12-31T23:59:59Z\n") != std::string::npos);
    }
    SUBCASE("names that differ are not one model, though they sanitize alike") {
        const auto labels = parse_features(ah::to_nfd_features(ah::accelerator_registry(
            {gpu("H100 SXM", 0, "NVIDIA H100 (80GB)"), gpu("H100 SXM", 1, "NVIDIA/H100/80GB")})));
        CHECK(labels.at("ai-hwaccel.io/cuda_gpu.count") == "2");
        CHECK(labels.count("ai-hwaccel.io/cuda_gpu.model") == 0);
        const auto same = parse_features(ah::to_nfd_features(ah::accelerator_registry(
            {gpu("H100 SXM", 0, "NVIDIA H100 (80GB)"), gpu("H100 SXM", 1, "NVIDIA H100 (80GB)")})));
        CHECK(same.at("ai-hwaccel.io/cuda_gpu.model") == "NVIDIA-H100-80GB");
    }
    SUBCASE("a prefix that is not a DNS subdomain, or one NFD denies, writes no label") {
        for (const char* bad : {"", "Upper.io", "under_score.io", "a/b", "-a.io", "a..io", "kubernetes.io",
                                "node.kubernetes.io", "x.k8s.kubernetes.io"}) {
            ah::nfd_options opt;
            opt.prefix = bad;
            CAPTURE(bad);
            CHECK(parse_features(ah::to_nfd_features(ah::accelerator_registry({gpu("H100 SXM", 0, "H100")}), opt))
                      .empty());
            CHECK(ah::nfd_label_names(opt).empty());
        }
    }
}

TEST_CASE("nfd_label_names") {
    const auto names = ah::nfd_label_names();
    CHECK(names.size() > 100);
    const std::set<std::string> unique(names.begin(), names.end());
    CHECK(unique.size() == names.size());
    for (const auto& n : names) {
        CAPTURE(n);
        CHECK(ah::is_valid_label_name(n));
    }
    // The longest prefix Kubernetes allows still gives valid names.
    ah::nfd_options opt;
    opt.prefix = std::string(61, 'a') + "." + std::string(61, 'b') + "." + std::string(61, 'c') + "." +
                 std::string(61, 'd') + ".ioeee";
    REQUIRE(opt.prefix.size() == 253);
    for (const auto& n : ah::nfd_label_names(opt)) CHECK(ah::is_valid_label_name(n));
}

TEST_CASE("to_nfd_features: every fixture machine") {
    for (const auto& m : fixture_machines()) {
        CAPTURE(m.string());
        const auto reg = ah::detect(ah::host_system(m.string()));
        const std::string text = ah::to_nfd_features(reg);
        check_all_valid(text);
        const auto labels = parse_features(text);
        std::size_t accelerators = 0;
        for (const auto& p : reg.all()) accelerators += p.is_accelerator() ? 1 : 0;
        CHECK(labels.at("ai-hwaccel.io/accelerator.count") == std::to_string(accelerators));
    }
}
