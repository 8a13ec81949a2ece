// ai-hwaccel: the command-line tool.
//
//   detect     this machine's registry, or a captured machine's (--root DIR)
//   parse      one captured tool output or system file, format recognised by itself
//   catalogue  the devices the library knows
//   backends   what this build compiled in
//   version
//   estimate   a model on a catalogue device (no detection)      } plan_commands.hpp;
//   plan       a model laid out on this machine's devices          } every figure an
//   training   the memory fine-tuning a model takes                } estimate
//   cost       the cheapest cloud instance that holds a model      }
//
// Unknown commands and options are errors with a message and exit code 2; nothing is
// silently replaced by a default. Warnings go to stderr in the human form and into the
// document with --json.
#include "ai_hwaccel/core.hpp"
#include "ai_hwaccel/detect/detect.hpp"
#include "ai_hwaccel/detect/formats.hpp"
#include "ai_hwaccel/io/json.hpp"
#include "ai_hwaccel/io/nfd.hpp"
#include "ai_hwaccel/io/prometheus.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace ah = ai_hwaccel;

namespace {

constexpr std::string_view usage_text =
    "usage: ai-hwaccel <command> [options]\n"
    "\n"
    "commands:\n"
    "  detect [options]       print the registry of this machine (the default command)\n"
    "      --root DIR         detect from a captured machine tree instead: DIR/proc, DIR/sys,\n"
    "                         DIR/dev, DIR/etc, …; no tool runs, captured outputs are replayed\n"
    "                         from DIR/ai-hwaccel-tools (see its index format in the README)\n"
    "      --only LIST        run only these backends (comma-separated names, see `backends`)\n"
    "      --skip LIST        run every compiled backend but these\n"
    "      --no-host          skip the host probes (CPU, memory, NUMA, PCI, storage, environment)\n"
    "      --timings          also print how long each probe took\n"
    "      --json             print the registry as JSON\n"
    "  parse FILE [options]   read one captured output ('-' for stdin) and print what it says\n"
    "      --format NAME      read it as NAME instead of recognising the format\n"
    "      --list-formats     list the formats this build reads\n"
    "      --json             print {format, devices, system, warnings} as JSON\n"
    "  catalogue [FILTER]     list the device catalogue; FILTER matches names case-insensitively\n"
    "  backends               list the backends and whether this build compiled them in\n"
    "  version                print the library version\n"
    "  export FORMAT [options]  the registry for other tools (docs/exporters.md)\n"
    "      prometheus         Prometheus text format (node_exporter textfile collector)\n"
    "      nfd                Kubernetes Node Feature Discovery feature file (features.d)\n"
    "      --root DIR         on a captured machine tree instead (as detect --root)\n"
    "      --output FILE      write FILE atomically (temporary file + rename) instead of stdout\n"
    "      --label NAME=VALUE prometheus: add a label to every series (repeatable)\n"
    "      --prefix P         nfd: the label prefix (default ai-hwaccel.io)\n"
    "      --expiry-seconds N nfd: the labels lapse N seconds from now unless rewritten\n"
    "\n"
    "planning commands (every figure an estimate; --json prints the fields of docs/cli-plan.md):\n"
    "  estimate --device NAME --quant FORMAT (--model ID | --params N --layers N --hidden N) [options]\n"
    "                         memory and tokens/s of a model on catalogue devices, no detection\n"
    "      --device NAME      a catalogue device as people write it (\"H100 SXM\", \"RTX 4090\")\n"
    "      --count N          N such devices joined by the device's own link (PCIe when none)\n"
    "      --model ID         a catalogue model (\"llama-3.1-70b\", \"meta-llama/Llama-3.1-8B\")\n"
    "      --params N         or a model by hand: parameters (70B, 7e9), with --layers N,\n"
    "                         --hidden N, [--heads N (default hidden/128)], [--kv-heads N\n"
    "                         (default: the heads)], [--vocab N]\n"
    "      --quant FORMAT     GGUF names (Q4_K_M, Q8_0, F16, MXFP4) or plain ones (fp8, int4, bf16)\n"
    "      --context N        tokens in the KV cache per sequence (default 4096; 8k, 128k)\n"
    "      --prompt N         prompt length for the prefill rate (default 512, at most --context)\n"
    "      --batch N          sequences decoded together (default 1)\n"
    "      --memory SIZE      memory per device (192GiB, 64GB): needed where the catalogue has\n"
    "                         none (unified memory, e.g. Apple M-series), else an override\n"
    "  plan --model ID [options]\n"
    "                         lay a model out on this machine's devices (detected)\n"
    "      --root DIR         on a captured machine tree instead (as detect --root)\n"
    "      --device NAME      on described devices instead, with --count N (default 1)\n"
    "                         and --memory SIZE as for estimate\n"
    "      --quant FORMAT     the format, or auto (the default): the best that fits\n"
    "      --context N, --batch N   as for estimate\n"
    "      --allow-cpu        let the plan use the CPU (never used silently)\n"
    "  training --model ID --method METHOD [options]\n"
    "                         memory per device of fine-tuning (full, lora, qlora, prefix, dpo,\n"
    "                         rlhf, distillation)\n"
    "      --policy full|lora|qlora   how dpo/rlhf/distillation train the policy (default full)\n"
    "      --seq N            tokens per sequence (default 2048)  --batch N  micro-batch (default 1)\n"
    "      --devices N        data-parallel devices (default 1)   --zero 0-3  ZeRO/FSDP stage (default 0)\n"
    "      --rank R           LoRA rank (default 16)              --checkpointing  recompute activations\n"
    "      --optimizer NAME   adamw (default), adamw_8bit, sgd, sgd_momentum\n"
    "      --device NAME      also say whether it fits that catalogue device (--memory SIZE\n"
    "                         as for estimate)\n"
    "  cost --model ID --quant FORMAT [options]\n"
    "                         the cheapest cloud instance that holds the model\n"
    "      --context N, --batch N   as for estimate\n"
    "      --objective hour|tokens  cheapest per hour (default) or per output token\n"
    "      --all              list every instance with its fit and cost\n"
    "  A model that fits nowhere exits with code 1 (--json still prints the document).\n"
    "\n"
    "options:\n"
    "  -h, --help             print this help\n"
    "  -V, --version          print the library version\n";

int usage_error(std::string_view msg) {
    std::fprintf(stderr, "ai-hwaccel: %.*s\n\n%.*s", static_cast<int>(msg.size()), msg.data(),
                 static_cast<int>(usage_text.size()), usage_text.data());
    return 2;
}

int error(std::string_view msg, int code = 1) {
    std::fprintf(stderr, "ai-hwaccel: %.*s\n", static_cast<int>(msg.size()), msg.data());
    return code;
}

void out(std::string_view s) { std::fwrite(s.data(), 1, s.size(), stdout); }

#if AI_HWACCEL_JSON
// Indented, invalid UTF-8 from a tool replaced rather than fatal.
int print_json(const nlohmann::json& j) {
    out(j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
    out("\n");
    return 0;
}
#else
int no_json() {
    std::fputs("ai-hwaccel: this build has no JSON support (nlohmann/json was not found when it was compiled)\n",
               stderr);
    return 2;
}
#endif

std::string str(std::string_view s) { return std::string(s); }

std::string fmt(const char* f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

std::string fmt_bytes(std::uint64_t b) { return fmt("%.1f GiB", ah::units::to_gib(b)); }

std::string fmt_value(const ah::sourced<std::uint64_t>& v) {
    if (!v) return "unknown";
    return fmt_bytes(*v) + " (" + str(ah::to_string(v.from)) + ")";
}

void print_warnings(std::span<const ah::warning> warnings) {
    for (const auto& w : warnings) std::fprintf(stderr, "warning: %s\n", ah::to_string(w).c_str());
}

// --- human-readable output -------------------------------------------------------------

void print_devices(std::span<const ah::accelerator_profile> devices) {
    std::printf("%-4s %-12s %-44s %-22s %s\n", "#", "kind", "name", "memory", "pci");
    int i = 0;
    for (const auto& p : devices) {
        std::string name = str(p.name.view());
        if (!p.available) name += " [hidden]";
        if (p.software) name += " [software]";
        std::printf("%-4d %-12s %-44s %-22s %s\n", i++, str(ah::to_string(p.kind)).c_str(), name.c_str(),
                    fmt_value(p.memory_bytes).c_str(), p.pci ? p.pci->text().data() : "-");
    }
}

void print_cpu(const ah::cpu_info& cpu) {
    std::printf("cpu: %s (%s, %s): %u socket(s), %u core(s), %u thread(s)", cpu.model.empty() ? "unknown model" : cpu.model.c_str(),
                str(ah::to_string(cpu.maker)).c_str(), str(ah::to_string(cpu.arch)).c_str(), cpu.sockets, cpu.cores,
                cpu.threads);
    if (cpu.usable_threads) std::printf(", %u usable by this process", cpu.usable_threads);
    if (cpu.cpu_quota > 0) std::printf(", quota %.2f CPUs", cpu.cpu_quota);
    std::string feats;
    for (const auto& f : ah::cpu_feature_table)
        if (cpu.features.has(f.id)) feats += (feats.empty() ? "" : " ") + str(f.name);
    std::printf("\ncpu features: %s\n", feats.empty() ? "(none of interest)" : feats.c_str());
}

void print_host(const ah::host_info& host) {
    if (host.cpu.threads || !host.cpu.model.empty()) print_cpu(host.cpu);
    if (host.memory.total_bytes || host.memory.cgroup_limit_bytes)
        std::printf("memory: total %s, available %s, container limit %s\n", fmt_value(host.memory.total_bytes).c_str(),
                    fmt_value(host.memory.available_bytes).c_str(), fmt_value(host.memory.cgroup_limit_bytes).c_str());
    for (const auto& n : host.numa)
        std::printf("numa node %u: %s, cpus %s\n", n.id, n.memory_bytes ? fmt_bytes(n.memory_bytes).c_str() : "no memory listed",
                    n.cpus.empty() ? "(none)" : n.cpus.c_str());
}

void print_system(const ah::system_io& io) {
    for (const auto& d : io.storage)
        std::printf("storage: %-10s %-12s %12s  %s\n", d.name.c_str(), str(ah::to_string(d.kind)).c_str(),
                    fmt("%.1f GB", static_cast<double>(d.size_bytes) / 1e9).c_str(), d.model.c_str());
    std::size_t accelerators = 0;
    for (const auto& d : io.pci_devices)
        if ((d.class_code >> 16) == 0x03 || (d.class_code >> 16) == 0x12) ++accelerators;
    if (!io.pci_devices.empty())
        std::printf("pci: %zu function(s), %zu display or processing-accelerator class\n", io.pci_devices.size(), accelerators);
    const auto& e = io.environment;
    std::string env;
    if (e.container != ah::container_runtime::none) env += "container " + str(ah::to_string(e.container)) + "; ";
    if (e.kubernetes) env += "kubernetes" + (e.kubernetes_namespace.empty() ? "" : " (namespace " + e.kubernetes_namespace + ")") + "; ";
    if (e.wsl) env += "WSL; ";
    if (!e.hypervisor.empty()) env += "hypervisor " + e.hypervisor + "; ";
    if (e.cloud != ah::cloud_provider::none) {
        env += "cloud " + str(ah::to_string(e.cloud));
        if (!e.instance_type.empty()) env += " (" + e.instance_type + ")";
        env += "; ";
    }
    if (!env.empty()) {
        env.resize(env.size() - 2);
        std::printf("environment: %s\n", env.c_str());
    }
}

} // namespace

#include "plan_commands.hpp"

namespace {

// --- detect ----------------------------------------------------------------------------

struct detect_args {
    std::string root;
    bool json = false, timings = false, no_host = false;
    std::string only, skip;
};

bool apply_backend_list(ah::detector& d, std::string_view list, bool add, std::string& bad) {
    while (!list.empty()) {
        const auto comma = list.find(',');
        const auto name = ah::detail::trim(list.substr(0, comma));
        list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
        if (name.empty()) continue;
        const auto b = ah::parse_backend(name);
        if (!b) {
            bad = str(name);
            return false;
        }
        add ? d.with(*b) : d.without(*b);
    }
    return true;
}

int cmd_detect(const detect_args& a) {
    if (!a.only.empty() && !a.skip.empty()) return usage_error("--only and --skip cannot be combined");
    auto d = a.only.empty() ? ah::detector::all() : ah::detector::none().with_host();
    if (a.no_host) d.with_host(false);
    std::string bad;
    if (!apply_backend_list(d, a.only.empty() ? a.skip : a.only, !a.only.empty(), bad))
        return usage_error("unknown backend '" + bad + "' (see `ai-hwaccel backends`)");
    if (!a.root.empty()) {
        struct stat st {};
        if (::stat(a.root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
            return error("--root: '" + a.root + "' is not a directory", 2);
    }
    const auto t = d.run_timed(ah::host_system(a.root));
    const auto& reg = t.registry;
    if (a.json) {
#if AI_HWACCEL_JSON
        nlohmann::json j = reg;
        if (a.timings) {
            auto& arr = j["timings"] = nlohmann::json::array();
            for (const auto& p : t.timings)
                arr.push_back({{"probe", p.name}, {"state", ah::to_string(p.state)},
                               {"elapsed_us", p.elapsed.count()}, {"devices", p.devices}, {"warnings", p.warnings}});
            j["elapsed_us"] = t.elapsed.count();
        }
        return print_json(j);
#else
        return no_json();
#endif
    }
    print_devices(reg.all());
    std::printf("\n");
    print_host(reg.host());
    print_system(reg.system());
    std::printf("accelerators: %s\n", reg.has_accelerator() ? "yes" : "none found");
    if (a.timings) {
        std::printf("\n%-12s %-13s %12s %8s %9s\n", "probe", "state", "elapsed", "devices", "warnings");
        for (const auto& p : t.timings)
            std::printf("%-12s %-13s %9.3f ms %8zu %9zu\n", p.name.c_str(), str(ah::to_string(p.state)).c_str(),
                        static_cast<double>(p.elapsed.count()) / 1000.0, p.devices, p.warnings);
        std::printf("%-12s %-13s %9.3f ms\n", "total", "", static_cast<double>(t.elapsed.count()) / 1000.0);
    }
    print_warnings(reg.warnings());
    return 0;
}

// --- export ----------------------------------------------------------------------------

// `export prometheus|nfd [--root DIR] [--output FILE] [--label NAME=VALUE]...
//  [--prefix P] [--expiry-seconds N]`: the registry for Prometheus or Node Feature
// Discovery (docs/exporters.md), on stdout or written atomically to FILE.
int cmd_export(std::span<const std::string_view> args) {
    if (args.empty() || args[0].starts_with("-"))
        return usage_error("export needs a format: prometheus or nfd");
    const std::string_view format = args[0];
    if (format != "prometheus" && format != "nfd")
        return usage_error("unknown export format '" + str(format) + "' (prometheus or nfd)");
    std::string root, output;
    ah::prometheus_options prom;
    ah::nfd_options nfd;
    for (std::size_t i = 1; i < args.size(); ++i) {
        const auto a = args[i];
        const bool prom_only = a == "--label";
        const bool nfd_only = a == "--prefix" || a == "--expiry-seconds";
        if (a != "--root" && a != "--output" && !prom_only && !nfd_only)
            return usage_error("unknown option '" + str(a) + "'");
        if ((prom_only && format != "prometheus") || (nfd_only && format != "nfd"))
            return usage_error("option '" + str(a) + "' does not apply to export " + str(format));
        if (i + 1 >= args.size()) return usage_error(str(a) + " needs a value");
        const auto v = args[++i];
        if (a == "--root") root = str(v);
        else if (a == "--output") output = str(v);
        else if (a == "--label") {
            const auto eq = v.find('=');
            if (eq == std::string_view::npos || !ah::is_valid_prometheus_label_name(v.substr(0, eq)))
                return usage_error("--label takes NAME=VALUE with NAME matching [a-zA-Z_][a-zA-Z0-9_]*");
            prom.extra_labels.emplace_back(str(v.substr(0, eq)), str(v.substr(eq + 1)));
        } else if (a == "--prefix") {
            if (!ah::is_valid_label_name(str(v) + "/x"))
                return usage_error("--prefix '" + str(v) + "' is not a DNS subdomain (lower-case, e.g. ai-hwaccel.io)");
            nfd.prefix = str(v);
        } else { // --expiry-seconds
            std::int64_t n = 0;
            const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
            if (ec != std::errc{} || p != v.data() + v.size() || n <= 0)
                return usage_error("--expiry-seconds takes a positive whole number");
            nfd.expiry_time = std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now()) +
                              std::chrono::seconds(n);
        }
    }
    if (!root.empty()) {
        struct stat st {};
        if (::stat(root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
            return error("--root: '" + root + "' is not a directory", 2);
    }
    const auto reg = ah::detect(ah::host_system(root));
    const std::string text = format == "prometheus" ? ah::to_prometheus(reg, prom) : ah::to_nfd_features(reg, nfd);
    if (output.empty()) {
        out(text);
        return 0;
    }
    if (const auto r = ah::write_file_atomically(output, text); !r) return error(r.message, 1);
    return 0;
}

// --- parse -----------------------------------------------------------------------------

constexpr std::size_t parse_input_cap = std::size_t{64} << 20;

bool read_input(const std::string& path, std::string& data, bool& cut, std::string& why) {
    std::FILE* f = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
    if (!f) {
        why = "cannot open '" + path + "'";
        return false;
    }
    char buf[65536];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
        if (data.size() + n > parse_input_cap) {
            data.append(buf, parse_input_cap - data.size());
            cut = true;
            break;
        }
        data.append(buf, n);
    }
    const bool failed = std::ferror(f) != 0;
    if (f != stdin) std::fclose(f);
    if (failed) {
        why = "error reading '" + path + "'";
        return false;
    }
    return true;
}

int cmd_list_formats() {
    std::size_t width = 0;
    for (const auto& f : ah::capture_formats) width = std::max(width, f.name.size());
    for (const auto& f : ah::capture_formats)
        std::printf("%-*.*s  %.*s\n", static_cast<int>(width), static_cast<int>(f.name.size()), f.name.data(),
                    static_cast<int>(f.command.size()), f.command.data());
    return 0;
}

int cmd_parse(const std::string& path, std::string_view format, bool json) {
    const ah::capture_format* f = nullptr;
    if (!format.empty()) {
        f = ah::find_capture_format(format);
        if (!f) return usage_error("unknown format '" + str(format) + "' (see `ai-hwaccel parse --list-formats`)");
    }
    std::string data, why;
    bool cut = false;
    if (!read_input(path, data, cut, why)) return error(why);
    if (!f) f = ah::recognise_format(data);
    if (!f)
        return error("'" + path + "' is in no format this build recognises; name one with --format (see --list-formats)");
    auto r = ah::parse_capture(data, *f);
    if (cut)
        r.warnings.insert(r.warnings.begin(),
                          ah::warning{ah::warning_kind::output_truncated, std::nullopt, path,
                                      "input larger than " + std::to_string(parse_input_cap >> 20) + " MiB; read its start", 0});
    if (json) {
#if AI_HWACCEL_JSON
        nlohmann::json j;
        j["format"] = r.format;
        j["devices"] = r.devices;
        nlohmann::json system = nlohmann::json::object();
        if (r.host) {
            const nlohmann::json h = *r.host;
            for (const auto& [k, v] : h.items()) system[k] = v;
        }
        if (r.system) {
            const nlohmann::json s = *r.system;
            for (const auto& [k, v] : s.items()) system[k] = v;
        }
        j["system"] = std::move(system);
        j["warnings"] = r.warnings;
        return print_json(j);
#else
        return no_json();
#endif
    }
    std::printf("format: %.*s (%.*s)\n", static_cast<int>(f->name.size()), f->name.data(),
                static_cast<int>(f->command.size()), f->command.data());
    if (!r.devices.empty()) print_devices(r.devices);
    if (r.host) print_host(*r.host);
    if (r.system) print_system(*r.system);
    print_warnings(r.warnings);
    return 0;
}

// --- the rest --------------------------------------------------------------------------

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
    if (shown == 0) return error("no catalogue device matches \"" + str(filter) + "\"");
    return 0;
}

int cmd_backends() {
    for (const auto& b : ah::backend_table) {
        std::string tools;
        for (auto t : b.tools) tools += (tools.empty() ? "" : ", ") + str(t);
        std::printf("%-14.*s %-13s %-28.*s %s\n", static_cast<int>(b.name.size()), b.name.data(),
                    b.compiled ? "compiled" : "not compiled", static_cast<int>(b.display.size()), b.display.data(),
                    tools.c_str());
    }
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    std::vector<std::string_view> args(argv + 1, argv + argc);
    for (auto a : args) {
        if (a == "-h" || a == "--help") {
            out(usage_text);
            return 0;
        }
        if (a == "-V" || a == "--version") {
            std::printf("ai-hwaccel %s\n", ah::version.text);
            return 0;
        }
    }
    std::string_view command = "detect";
    std::size_t i = 0;
    if (!args.empty() && !args[0].starts_with("-")) {
        command = args[0];
        i = 1;
    }
    if (auto r = run_plan_command(command, std::span<const std::string_view>(args).subspan(i))) return *r;
    if (command == "export") return cmd_export(std::span<const std::string_view>(args).subspan(i));
    std::vector<std::string_view> positional;
    detect_args d;
    std::string format;
    bool json = false, list_formats = false;
    std::vector<std::string_view> seen;
    // Options of every command; each command then checks it got only its own.
    for (; i < args.size(); ++i) {
        const auto a = args[i];
        if (a == "-" || !a.starts_with("-")) {
            positional.push_back(a);
            continue;
        }
        seen.push_back(a);
        if (a == "--json") json = true;
        else if (a == "--timings") d.timings = true;
        else if (a == "--no-host") d.no_host = true;
        else if (a == "--list-formats") list_formats = true;
        else if (a == "--root" || a == "--only" || a == "--skip" || a == "--format") {
            if (i + 1 >= args.size()) return usage_error(str(a) + " needs a value");
            (a == "--root" ? d.root : a == "--only" ? d.only : a == "--skip" ? d.skip : format) = str(args[++i]);
        } else
            return usage_error("unknown option '" + str(a) + "'");
    }
    auto only_options = [&](std::initializer_list<std::string_view> allowed) -> std::string {
        for (auto s : seen) {
            bool ok = false;
            for (auto x : allowed) ok = ok || s == x;
            if (!ok) return "option '" + str(s) + "' does not apply to " + str(command);
        }
        return {};
    };
    if (command == "detect") {
        if (auto e = only_options({"--json", "--timings", "--no-host", "--root", "--only", "--skip"}); !e.empty())
            return usage_error(e);
        if (!positional.empty()) return usage_error("detect takes no arguments");
        d.json = json;
        return cmd_detect(d);
    }
    if (command == "parse") {
        if (auto e = only_options({"--json", "--format", "--list-formats"}); !e.empty()) return usage_error(e);
        if (list_formats) return cmd_list_formats();
        if (positional.size() != 1) return usage_error("parse takes one FILE (or '-' for stdin)");
        return cmd_parse(str(positional[0]), format, json);
    }
    if (!seen.empty()) return usage_error("option '" + str(seen[0]) + "' does not apply to " + str(command));
    if (command == "catalogue" || command == "catalog") {
        if (positional.size() > 1) return usage_error("catalogue takes at most one filter");
        return cmd_catalogue(positional.empty() ? std::string_view{} : positional[0]);
    }
    if (command == "backends") {
        if (!positional.empty()) return usage_error("backends takes no arguments");
        return cmd_backends();
    }
    if (command == "version") {
        std::printf("ai-hwaccel %s\n", ah::version.text);
        return 0;
    }
    return usage_error("unknown command '" + str(command) + "'");
}
