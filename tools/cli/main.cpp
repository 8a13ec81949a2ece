// ai-hwaccel: the command-line tool.
//
// Subcommands so far: `detect` (this machine's registry as a table), `catalogue` (the
// devices the library knows, optionally filtered), `backends` (what this build compiled
// in), `version`. Unknown subcommands and flags are errors with a message and exit code 2;
// nothing is silently replaced by a default.
#include "ai_hwaccel/core.hpp"
#include "ai_hwaccel/detect/detect.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace ah = ai_hwaccel;

namespace {

constexpr std::string_view usage_text =
    "usage: ai-hwaccel <command> [options]\n"
    "\n"
    "commands:\n"
    "  detect              print this machine's registry (the default command)\n"
    "  catalogue [FILTER]  list the device catalogue; FILTER matches names case-insensitively\n"
    "  backends            list the backends and whether this build compiled them in\n"
    "  version             print the library version\n"
    "\n"
    "options:\n"
    "  -h, --help          print this help\n"
    "  -V, --version       print the library version\n";

int usage_error(std::string_view msg) {
    std::fprintf(stderr, "ai-hwaccel: %.*s\n\n%.*s", static_cast<int>(msg.size()), msg.data(),
                 static_cast<int>(usage_text.size()), usage_text.data());
    return 2;
}

std::string fmt_bytes(std::uint64_t b) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f GiB", ah::units::to_gib(b));
    return buf;
}

std::string fmt_value(const ah::sourced<std::uint64_t>& v) {
    if (!v) return "unknown";
    return fmt_bytes(*v) + " (" + std::string(ah::to_string(v.from)) + ")";
}

int cmd_detect() {
    const auto reg = ah::detect();
    const auto& host = reg.host();
    std::printf("%-4s %-10s %-44s %s\n", "#", "kind", "name", "memory");
    int i = 0;
    for (const auto& p : reg.all()) {
        std::printf("%-4d %-10.*s %-44s %s\n", i++, static_cast<int>(ah::to_string(p.kind).size()),
                    ah::to_string(p.kind).data(), p.name.c_str(), fmt_value(p.memory_bytes).c_str());
    }
    std::printf("\nhost: %s, %u socket(s), %u core(s), %u thread(s), arch %.*s\n", host.cpu.model.c_str(),
                host.cpu.sockets, host.cpu.cores, host.cpu.threads,
                static_cast<int>(ah::to_string(host.cpu.arch).size()), ah::to_string(host.cpu.arch).data());
    std::string feats;
    for (const auto& f : ah::cpu_feature_table)
        if (host.cpu.features.has(f.id)) feats += std::string(feats.empty() ? "" : " ") + std::string(f.name);
    std::printf("cpu features: %s\n", feats.empty() ? "(none of interest)" : feats.c_str());
    std::printf("memory: total %s, container limit %s\n", fmt_value(host.memory.total_bytes).c_str(),
                fmt_value(host.memory.cgroup_limit_bytes).c_str());
    std::printf("accelerators: %s\n", reg.has_accelerator() ? "yes" : "none found");
    for (const auto& w : reg.warnings()) std::fprintf(stderr, "warning: %s\n", ah::to_string(w).c_str());
    return 0;
}

int cmd_catalogue(std::string_view filter) {
    std::size_t shown = 0;
    for (const auto& d : ah::device_catalogue) {
        if (!filter.empty() && !ah::detail::icontains(d.name, filter)) continue;
        ++shown;
        std::printf("%-44.*s %-20.*s %10s %9.0f GB/s %8.1f TFLOPS bf16/fp16\n", static_cast<int>(d.name.size()),
                    d.name.data(), static_cast<int>(ah::to_string(d.kind).size()), ah::to_string(d.kind).data(),
                    d.memory_bytes ? fmt_bytes(d.memory_bytes).c_str() : "shared", d.memory_bandwidth_gbps,
                    d.peak.bf16 > d.peak.fp16 ? d.peak.bf16 : d.peak.fp16);
    }
    if (shown == 0) {
        std::fprintf(stderr, "ai-hwaccel: no catalogue device matches \"%.*s\"\n", static_cast<int>(filter.size()),
                     filter.data());
        return 1;
    }
    return 0;
}

int cmd_backends() {
    for (const auto& b : ah::backend_table)
        std::printf("%-14.*s %-13s %.*s\n", static_cast<int>(b.name.size()), b.name.data(),
                    b.compiled ? "compiled" : "not compiled", static_cast<int>(b.display.size()), b.display.data());
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    std::vector<std::string_view> args(argv + 1, argv + argc);
    std::string_view command = "detect";
    std::vector<std::string_view> rest;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const auto a = args[i];
        if (a == "-h" || a == "--help") {
            std::fputs(std::string(usage_text).c_str(), stdout);
            return 0;
        }
        if (a == "-V" || a == "--version") {
            std::printf("ai-hwaccel %s\n", ah::version.text);
            return 0;
        }
        if (!a.empty() && a.front() == '-') return usage_error("unknown option '" + std::string(a) + "'");
        if (i == 0) command = a;
        else rest.push_back(a);
    }
    if (command == "detect") {
        if (!rest.empty()) return usage_error("detect takes no arguments");
        return cmd_detect();
    }
    if (command == "catalogue" || command == "catalog") {
        if (rest.size() > 1) return usage_error("catalogue takes at most one filter");
        return cmd_catalogue(rest.empty() ? std::string_view{} : rest[0]);
    }
    if (command == "backends") {
        if (!rest.empty()) return usage_error("backends takes no arguments");
        return cmd_backends();
    }
    if (command == "version") {
        std::printf("ai-hwaccel %s\n", ah::version.text);
        return 0;
    }
    return usage_error("unknown command '" + std::string(command) + "'");
}
