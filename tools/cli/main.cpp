// ai-hwaccel: the command-line tool.
//
//   detect     this machine's registry, or a captured machine's (--root DIR), as a table,
//              TSV, a summary or JSON
//   parse      one captured tool output or system file, format recognised by itself
//   catalogue  the devices the library knows
//   models     the models the library knows
//   backends   what this build compiled in
//   export     the registry for Prometheus or Node Feature Discovery
//   version, help
//   estimate   a model on a catalogue device (no detection)      } plan_commands.hpp;
//   plan       a model laid out on this machine's devices          } every figure an
//   training   the memory fine-tuning a model takes                } estimate
//   cost       the cheapest cloud instance that holds a model      }
//
// Every command is one row of `commands` (at the end of the file): its name, a line for
// the command list, its help text and the function that runs it, so a new command is one
// row. docs/cli.md describes them all.
//
// Unknown commands and options are errors with a message and exit code 2; nothing is
// silently replaced by a default. Warnings go to stderr in the human form and into the
// document with --json. Colour only where a person reads: on a terminal, never with
// NO_COLOR or TERM=dumb, unless --color=always asks for it.
#include "ai_hwaccel/core.hpp"
#include "ai_hwaccel/detect/bandwidth.hpp"
#include "ai_hwaccel/detect/detect.hpp"
#include "ai_hwaccel/detect/formats.hpp"
#include "ai_hwaccel/io/json.hpp"
#include "ai_hwaccel/io/nfd.hpp"
#include "ai_hwaccel/io/prometheus.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace ah = ai_hwaccel;

namespace {

// --- colour ----------------------------------------------------------------------------

// Whether stdout and stderr get ANSI colour, decided once in main from --color, isatty,
// NO_COLOR and TERM (see colour_for).
struct colour_choice {
    bool out = false;
    bool err = false;
};
colour_choice colour;

enum class colour_when : std::uint8_t { automatic, always, never };

namespace ansi {
constexpr std::string_view bold = "\x1b[1m";
constexpr std::string_view dim = "\x1b[2m";
constexpr std::string_view yellow = "\x1b[33m";
constexpr std::string_view reset = "\x1b[0m";
} // namespace ansi

// `always` wins over NO_COLOR, as no-color.org lets a per-invocation flag do; `auto` wants
// a terminal, NO_COLOR unset or empty, and a TERM that is set and not "dumb".
bool colour_for(colour_when when, int fd) {
    if (when != colour_when::automatic) return when == colour_when::always;
    if (const char* no = std::getenv("NO_COLOR"); no && *no) return false;
    const char* term = std::getenv("TERM");
    if (!term || !*term || std::string_view(term) == "dumb") return false;
    return ::isatty(fd) == 1;
}

std::string paint(bool on, std::string_view code, std::string_view s) {
    std::string r;
    if (on) r += code;
    r += s;
    if (on) r += ansi::reset;
    return r;
}

// --- messages ----------------------------------------------------------------------------

// printf prints a view with "%.*s": its length as an int (this), then its characters.
constexpr int len(std::string_view s) noexcept { return static_cast<int>(s.size()); }

// The command being run, for the hint after a usage error; empty before one is known.
std::string_view current_command;

int usage_error(std::string_view msg) {
    std::fprintf(stderr, "ai-hwaccel: %.*s\n", len(msg), msg.data());
    if (current_command.empty())
        std::fputs("run 'ai-hwaccel --help' for the commands\n", stderr);
    else
        std::fprintf(stderr, "run 'ai-hwaccel help %.*s' for its options\n", len(current_command),
                     current_command.data());
    return 2;
}

int error(std::string_view msg, int code = 1) {
    std::fprintf(stderr, "ai-hwaccel: %.*s\n", len(msg), msg.data());
    return code;
}

void out(std::string_view s) { std::fwrite(s.data(), 1, s.size(), stdout); }

// The errno of a failed write to stdout, where a command saw it (0: none kept).
int stdout_write_errno = 0;

// Whether everything written to stdout reached it; else a message (none when the reader
// went away: a closed pipe, when SIGPIPE is ignored) and exit code 1 in place of 0. A
// full disk or a closed stdout must not look like success.
int check_stdout(int code) {
    errno = 0;
    if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return code;
    const int why = errno != 0 ? errno : stdout_write_errno;
    // The write that failed may be long past (errno lost): a pipe whose reader is gone
    // still says so to poll.
    pollfd p{STDOUT_FILENO, POLLOUT, 0};
    const bool reader_gone = why == EPIPE || (why == 0 && ::poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP)));
    if (!reader_gone)
        std::fprintf(stderr, "ai-hwaccel: cannot write the output%s%s\n", why ? ": " : "", why ? std::strerror(why) : "");
    return code == 0 ? 1 : code;
}

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

// A size in GiB ("80.0 GiB"), formatted into a buffer of its own: most of them go straight
// to printf, which needs no string built on the heap and destroyed after it.
struct gib_text {
    char text[32];
    const char* c_str() const noexcept { return text; }
    std::string str() const { return text; }
};
gib_text fmt_bytes(std::uint64_t b) {
    gib_text t;
    // A size that is not zero never prints as "0.0 GiB": MiB below 0.05 GiB, bytes below
    // 0.05 MiB.
    const double gib = ah::units::to_gib(b);
    if (b == 0 || gib >= 0.05) std::snprintf(t.text, sizeof t.text, "%.1f GiB", gib);
    else if (gib * 1024 >= 0.05) std::snprintf(t.text, sizeof t.text, "%.1f MiB", gib * 1024);
    else std::snprintf(t.text, sizeof t.text, "%llu bytes", static_cast<unsigned long long>(b));
    return t;
}

// `s` cut to `width` characters (code points) and padded to as many columns: printf's
// "%-34.34s" counts bytes, so it would cut a character in two and shift the columns after.
std::string fit(std::string_view s, std::size_t width) {
    std::string out;
    std::size_t i = 0, columns = 0;
    for (; i < s.size() && columns < width; ++columns) {
        std::size_t n = 1;
        while (i + n < s.size() && (static_cast<unsigned char>(s[i + n]) & 0xc0) == 0x80) ++n;
        out.append(s.substr(i, n));
        i += n;
    }
    out.append(width - columns, ' ');
    return out;
}

std::string fmt_value(const ah::sourced<std::uint64_t>& v) {
    if (!v) return "unknown";
    return fmt_bytes(*v).str() + " (" + str(ah::to_string(v.from)) + ")";
}

void print_warnings(std::span<const ah::warning> warnings) {
    for (const auto& w : warnings)
        std::fprintf(stderr, "%s %s\n", paint(colour.err, ansi::yellow, "warning:").c_str(), ah::to_string(w).c_str());
}

// Splits a comma-separated list, trimming each item and dropping empty ones.
std::vector<std::string_view> split_list(std::string_view list) {
    std::vector<std::string_view> items;
    while (!list.empty()) {
        const auto comma = list.find(',');
        const auto item = ah::detail::trim(list.substr(0, comma));
        list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
        if (!item.empty()) items.push_back(item);
    }
    return items;
}

// --- options -----------------------------------------------------------------------------

// An option word: `--name=value` splits at its first '='; any other word is a name alone.
struct option_word {
    std::string_view name, value;
    bool inline_value = false;
};
option_word split_option(std::string_view word) {
    if (const auto eq = word.find('='); word.starts_with("--") && eq != std::string_view::npos)
        return {word.substr(0, eq), word.substr(eq + 1), true};
    return {word, {}, false};
}

// The options of every command but detect (which has its own table of columns and keys),
// read by one set of rules: `--name VALUE` or `--name=VALUE`; each at most once unless
// repeatable; a value that starts with `--` is the next option, so the value is missing.
struct option_spec {
    std::string_view name;
    bool takes_value = true;
    bool repeatable = false;
};

struct options {
    std::vector<std::pair<std::string_view, std::string_view>> given;
    bool has(std::string_view n) const {
        for (const auto& g : given)
            if (g.first == n) return true;
        return false;
    }
    std::optional<std::string_view> get(std::string_view n) const {
        for (const auto& g : given)
            if (g.first == n) return g.second;
        return std::nullopt;
    }
    std::vector<std::string_view> all(std::string_view n) const {
        std::vector<std::string_view> r;
        for (const auto& g : given)
            if (g.first == n) r.push_back(g.second);
        return r;
    }
};

// Reads args as `command`'s options. False (with `why`) on an option the command does not
// take, a missing or empty value, a value given to a flag, an option given twice, or a
// positional argument when `positional` is null (else they are collected there; `-`, for
// stdin, is one).
bool parse_options(std::span<const std::string_view> args, std::string_view command,
                   std::initializer_list<option_spec> specs, options& o, std::string& why,
                   std::vector<std::string_view>* positional = nullptr) {
    for (std::size_t i = 0; i < args.size(); ++i) {
        const auto a = args[i];
        if (a == "-" || !a.starts_with("-")) {
            if (positional) {
                positional->push_back(a);
                continue;
            }
            why = str(command) + " takes no argument '" + str(a) + "'";
            return false;
        }
        auto [name, value, inline_value] = split_option(a);
        const option_spec* spec = nullptr;
        for (const auto& s : specs)
            if (s.name == name) spec = &s;
        if (!spec) {
            why = "unknown option '" + str(name) + "' for " + str(command);
            return false;
        }
        if (!spec->repeatable && o.has(spec->name)) {
            why = "option '" + str(spec->name) + "' given twice";
            return false;
        }
        if (!spec->takes_value) {
            if (inline_value) {
                why = str(spec->name) + " takes no value";
                return false;
            }
            o.given.emplace_back(spec->name, std::string_view{});
            continue;
        }
        if (!inline_value) {
            if (i + 1 >= args.size() || args[i + 1].starts_with("--")) {
                why = str(spec->name) + " needs a value";
                return false;
            }
            value = args[++i];
        }
        if (ah::detail::trim(value).empty()) {
            why = str(spec->name) + " needs a value";
            return false;
        }
        o.given.emplace_back(spec->name, value);
    }
    return true;
}

// --- device columns ----------------------------------------------------------------------

// One table per concept: the names parsed by --columns and --sort, the TSV header, the
// table header and the help text all come from column_table.
enum class column : std::uint8_t {
    row,
    index,
    kind,
    family,
    vendor,
    name,
    memory,
    memory_origin,
    memory_used,
    memory_free,
    bandwidth,
    bandwidth_origin,
    pci,
    stack,
    numa,
    driver,
    arch,
    uuid,
    spec,
    compute_units,
    temperature,
    power,
    utilization,
    available,
    software,
    unified,
};

struct column_info {
    column id;
    std::string_view name;   ///< for --columns, --sort and the TSV header
    std::string_view header; ///< the human table's header
    std::string_view doc;
};

inline constexpr std::array column_table{
    column_info{column::row, "row", "#", "place in detection order (the JSON devices array), kept when sorted"},
    column_info{column::index, "index", "index", "the backend's own index (the vendor tool's GPU index, DRM card number, ...)"},
    column_info{column::kind, "kind", "kind", "what the backend reports: cpu, cuda_gpu, rocm_gpu, tpu, gaudi, ..."},
    column_info{column::family, "family", "family", "cpu, gpu, npu, tpu or ai_asic"},
    column_info{column::vendor, "vendor", "vendor", "the maker: nvidia, amd, intel, google, ..."},
    column_info{column::name, "name", "name", "the device's name; the table marks [hidden] and [software] devices"},
    column_info{column::memory, "memory", "memory", "device memory: GiB (origin) in the table, bytes in TSV"},
    column_info{column::memory_origin, "memory_origin", "memory_origin",
                "where memory came from: tool, sysfs, user, measured, catalogue, estimated"},
    column_info{column::memory_used, "memory_used", "memory_used", "memory in use, as memory"},
    column_info{column::memory_free, "memory_free", "memory_free", "free memory, as memory"},
    column_info{column::bandwidth, "bandwidth", "bandwidth", "memory bandwidth: GB/s (origin) in the table, GB/s in TSV"},
    column_info{column::bandwidth_origin, "bandwidth_origin", "bandwidth_origin", "where the bandwidth came from"},
    column_info{column::pci, "pci", "pci", "PCI address, dddd:bb:dd.f; the table adds the stack of a multi-stack card"},
    column_info{column::stack, "stack", "stack",
                "the stack of a card whose stacks are devices of their own (a Max 1550 under Level Zero's FLAT "
                "hierarchy)"},
    column_info{column::numa, "numa", "numa", "the NUMA node the device hangs off"},
    column_info{column::driver, "driver", "driver", "driver (or runtime) version"},
    column_info{column::arch, "arch", "arch", "architecture: compute capability (9.0), gfx target (gfx942), ..."},
    column_info{column::uuid, "uuid", "uuid", "the device's UUID"},
    column_info{column::spec, "spec", "spec", "the catalogue row the device was matched to"},
    column_info{column::compute_units, "compute_units", "compute_units", "SMs, CUs or cores as the vendor counts them"},
    column_info{column::temperature, "temperature", "temperature", "degrees Celsius"},
    column_info{column::power, "power", "power", "power draw in watts"},
    column_info{column::utilization, "utilization", "utilization", "utilization in percent"},
    column_info{column::available, "available", "available",
                "usable: not hidden by a *_VISIBLE_DEVICES mask nor in a bad state"},
    column_info{column::software, "software", "software", "a software renderer (llvmpipe, SwiftShader), never an accelerator"},
    column_info{column::unified, "unified", "unified", "shares the host's memory (Apple silicon, integrated GPUs, NPUs)"},
};
static_assert([] {
    for (std::size_t i = 0; i < column_table.size(); ++i) {
        if (static_cast<std::size_t>(column_table[i].id) != i) return false;
        for (std::size_t j = i + 1; j < column_table.size(); ++j)
            if (column_table[i].name == column_table[j].name) return false;
    }
    return static_cast<std::size_t>(column::unified) + 1 == column_table.size();
}(), "column_table: one row per column, in enum order, names unique");

constexpr const column_info& info(column c) noexcept { return column_table[static_cast<std::size_t>(c)]; }

constexpr std::array default_table_columns{column::row, column::kind, column::name, column::memory, column::pci};
constexpr std::array default_tsv_columns{column::row,     column::index,         column::kind,      column::family,
                                         column::vendor,  column::name,          column::memory,    column::memory_origin,
                                         column::bandwidth, column::bandwidth_origin, column::pci,   column::numa,
                                         column::driver,  column::available,     column::software};

std::optional<column> parse_column(std::string_view s) {
    for (const auto& c : column_table)
        if (c.name == s) return c.id;
    return std::nullopt;
}

std::string column_names() {
    std::string r;
    for (const auto& c : column_table) r += (r.empty() ? "" : ", ") + str(c.name);
    return r;
}

std::string family_names() {
    std::string r;
    for (const auto& f : ah::family_table) r += (r.empty() ? "" : ", ") + str(f.name);
    return r;
}

// A device as listed: its profile and its position in the registry.
struct listed {
    const ah::accelerator_profile* p;
    std::size_t row;
};

// Shortest text that reads back as the same double ("3350", "0.5").
std::string number_text(double v) {
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

template <class T>
std::string optional_number(const ah::sourced<T>& v) {
    if (!v) return {};
    if constexpr (std::is_floating_point_v<T>) return number_text(*v);
    else return std::to_string(*v);
}

std::string_view origin_text(ah::origin o) { return o == ah::origin::none ? std::string_view{} : ah::to_string(o); }

// What a TSV cell holds: raw values (bytes, GB/s, °C, W, %), true/false, empty when
// unknown; tabs and line breaks in names become spaces so a row stays one line.
std::string tsv_cell(column c, const listed& d) {
    const auto& p = *d.p;
    std::string s;
    switch (c) {
    case column::row: s = std::to_string(d.row); break;
    case column::index: s = std::to_string(p.index); break;
    case column::kind: s = ah::to_string(p.kind); break;
    case column::family: s = ah::to_string(p.device_family()); break;
    case column::vendor: s = ah::to_string(p.maker); break;
    case column::name: s = p.name.view(); break;
    case column::memory: s = optional_number(p.memory_bytes); break;
    case column::memory_origin: s = origin_text(p.memory_bytes.from); break;
    case column::memory_used: s = optional_number(p.memory_used_bytes); break;
    case column::memory_free: s = optional_number(p.memory_free_bytes); break;
    case column::bandwidth: s = optional_number(p.memory_bandwidth_gbps); break;
    case column::bandwidth_origin: s = origin_text(p.memory_bandwidth_gbps.from); break;
    case column::pci: s = p.pci ? str(p.pci->text().data()) : std::string(); break;
    case column::stack: s = p.stack ? std::to_string(*p.stack) : std::string(); break;
    case column::numa: s = optional_number(p.numa_node); break;
    case column::driver: s = p.driver_version.view(); break;
    case column::arch: s = p.arch.view(); break;
    case column::uuid: s = p.uuid.view(); break;
    case column::spec: s = p.spec ? str(p.spec->name) : std::string(); break;
    case column::compute_units: s = optional_number(p.compute_units); break;
    case column::temperature: s = optional_number(p.temperature_c); break;
    case column::power: s = optional_number(p.power_draw_watts); break;
    case column::utilization: s = optional_number(p.utilization_percent); break;
    case column::available: s = p.available ? "true" : "false"; break;
    case column::software: s = p.software ? "true" : "false"; break;
    case column::unified: s = p.unified_memory ? "true" : "false"; break;
    }
    for (auto& ch : s)
        if (ch == '\t' || ch == '\n' || ch == '\r') ch = ' ';
    return s;
}

// A table cell: its text, dimmed when it says "unknown" or "-", and a note after it
// ([hidden], [software]) in its own colour.
struct cell {
    std::string text;
    bool dim = false;
    std::string note;
    std::string_view note_colour{};
};

cell plain(std::string s) {
    cell c;
    c.text = std::move(s);
    return c;
}
cell missing(std::string_view s) {
    cell c = plain(str(s));
    c.dim = true;
    return c;
}

template <class T>
cell measured(const ah::sourced<T>& v, const char* f, bool with_origin = false) {
    if (!v) return missing("unknown");
    std::string s = fmt(f, static_cast<double>(*v));
    if (with_origin) s += " (" + str(ah::to_string(v.from)) + ")";
    return plain(s);
}

cell text_or_dash(std::string_view s) { return s.empty() ? missing("-") : plain(str(s)); }

cell table_cell(column c, const listed& d) {
    const auto& p = *d.p;
    switch (c) {
    case column::row: return plain(std::to_string(d.row));
    case column::index: return plain(std::to_string(p.index));
    case column::kind: return plain(str(ah::to_string(p.kind)));
    case column::family: return plain(str(ah::to_string(p.device_family())));
    case column::vendor: return plain(str(ah::to_string(p.maker)));
    case column::name: {
        cell r = plain(str(p.name.view()));
        if (!p.available) {
            r.note = " [hidden]";
            r.note_colour = ansi::yellow;
        } else if (p.software) {
            r.note = " [software]";
            r.note_colour = ansi::dim;
        }
        return r;
    }
    case column::memory: return p.memory_bytes ? plain(fmt_value(p.memory_bytes)) : missing("unknown");
    case column::memory_used: return p.memory_used_bytes ? plain(fmt_value(p.memory_used_bytes)) : missing("unknown");
    case column::memory_free: return p.memory_free_bytes ? plain(fmt_value(p.memory_free_bytes)) : missing("unknown");
    case column::memory_origin: return text_or_dash(origin_text(p.memory_bytes.from));
    case column::bandwidth: return measured(p.memory_bandwidth_gbps, "%.0f GB/s", true);
    case column::bandwidth_origin: return text_or_dash(origin_text(p.memory_bandwidth_gbps.from));
    case column::pci: {
        if (!p.pci) return missing("-");
        cell r = plain(str(p.pci->text().data()));
        if (p.stack) r.note = " stack " + std::to_string(*p.stack);
        return r;
    }
    case column::stack: return p.stack ? plain(std::to_string(*p.stack)) : missing("-");
    case column::numa: return p.numa_node ? plain(std::to_string(*p.numa_node)) : missing("-");
    case column::driver: return text_or_dash(p.driver_version.view());
    case column::arch: return text_or_dash(p.arch.view());
    case column::uuid: return text_or_dash(p.uuid.view());
    case column::spec: return text_or_dash(p.spec ? p.spec->name : std::string_view{});
    case column::compute_units: return measured(p.compute_units, "%.0f");
    case column::temperature: return measured(p.temperature_c, "%.0f C");
    case column::power: return measured(p.power_draw_watts, "%.0f W");
    case column::utilization: return measured(p.utilization_percent, "%.0f %%");
    case column::available: return plain(p.available ? "yes" : "no");
    case column::software: return plain(p.software ? "yes" : "no");
    case column::unified: return plain(p.unified_memory ? "yes" : "no");
    }
    return missing("-");
}

// Terminal width of UTF-8 text: code points, one column each.
std::size_t display_width(std::string_view s) {
    std::size_t n = 0;
    for (char ch : s)
        if ((static_cast<unsigned char>(ch) & 0xc0) != 0x80) ++n;
    return n;
}

// The human table: a bold header, columns as wide as their widest cell, two spaces
// between them, no padding after the last.
void print_table(std::span<const listed> rows, std::span<const column> cols) {
    std::vector<std::vector<cell>> cells;
    cells.reserve(rows.size());
    std::vector<std::size_t> width(cols.size());
    for (std::size_t i = 0; i < cols.size(); ++i) width[i] = display_width(info(cols[i]).header);
    for (const auto& d : rows) {
        auto& line = cells.emplace_back();
        for (std::size_t i = 0; i < cols.size(); ++i) {
            line.push_back(table_cell(cols[i], d));
            width[i] = std::max(width[i], display_width(line.back().text) + display_width(line.back().note));
        }
    }
    std::string text;
    auto pad = [&](std::size_t i, std::size_t used) {
        if (i + 1 < cols.size()) text.append(width[i] - used + 2, ' ');
    };
    for (std::size_t i = 0; i < cols.size(); ++i) {
        text += paint(colour.out, ansi::bold, info(cols[i]).header);
        pad(i, display_width(info(cols[i]).header));
    }
    text += '\n';
    for (const auto& line : cells) {
        for (std::size_t i = 0; i < cols.size(); ++i) {
            const auto& c = line[i];
            text += paint(colour.out && c.dim, ansi::dim, c.text);
            if (!c.note.empty()) text += paint(colour.out, c.note_colour, c.note);
            pad(i, display_width(c.text) + display_width(c.note));
        }
        text += '\n';
    }
    out(text);
}

void print_tsv(std::span<const listed> rows, std::span<const column> cols) {
    std::string text;
    for (std::size_t i = 0; i < cols.size(); ++i) text += (i ? "\t" : "") + str(info(cols[i]).name);
    text += '\n';
    for (const auto& d : rows) {
        for (std::size_t i = 0; i < cols.size(); ++i) text += (i ? "\t" : "") + tsv_cell(cols[i], d);
        text += '\n';
    }
    out(text);
}

// --- sorting -----------------------------------------------------------------------------

struct sort_spec {
    column by;
    bool descending = false;
};

// What a column sorts by: a number, or text compared ignoring ASCII case; unknown values
// sort after known ones whichever the direction.
struct sort_key {
    bool known = false;
    bool is_text = false;
    double number = 0;
    std::string text;
};

sort_key number_key(double v) { return {true, false, v, {}}; }
template <class T>
sort_key number_key(const ah::sourced<T>& v) {
    return v ? number_key(static_cast<double>(*v)) : sort_key{};
}
sort_key text_key(std::string_view s) {
    if (s.empty()) return {};
    std::string t;
    for (char ch : s) t += ah::detail::ascii_lower(ch);
    return {true, true, 0, std::move(t)};
}
// Origins sort by trust (estimated < catalogue < user < sysfs < tool), none unknown.
sort_key origin_key(ah::origin o) {
    return o == ah::origin::none ? sort_key{} : number_key(static_cast<double>(o));
}

sort_key key_of(column c, const listed& d) {
    const auto& p = *d.p;
    switch (c) {
    case column::row: return number_key(static_cast<double>(d.row));
    case column::index: return number_key(p.index);
    case column::kind: return text_key(ah::to_string(p.kind));
    case column::family: return text_key(ah::to_string(p.device_family()));
    case column::vendor: return text_key(ah::to_string(p.maker));
    case column::name: return text_key(p.name.view());
    case column::memory: return number_key(p.memory_bytes);
    case column::memory_origin: return origin_key(p.memory_bytes.from);
    case column::memory_used: return number_key(p.memory_used_bytes);
    case column::memory_free: return number_key(p.memory_free_bytes);
    case column::bandwidth: return number_key(p.memory_bandwidth_gbps);
    case column::bandwidth_origin: return origin_key(p.memory_bandwidth_gbps.from);
    case column::pci: // domain, bus, device, function as one number (48 bits: exact in a double)
        return p.pci ? number_key(static_cast<double>(p.pci->domain) * 65536.0 + p.pci->bus * 256.0 +
                                  p.pci->device * 8.0 + p.pci->function)
                     : sort_key{};
    case column::stack: return p.stack ? number_key(*p.stack) : sort_key{};
    case column::numa: return number_key(p.numa_node);
    case column::driver: return text_key(p.driver_version.view());
    case column::arch: return text_key(p.arch.view());
    case column::uuid: return text_key(p.uuid.view());
    case column::spec: return p.spec ? text_key(p.spec->name) : sort_key{};
    case column::compute_units: return number_key(p.compute_units);
    case column::temperature: return number_key(p.temperature_c);
    case column::power: return number_key(p.power_draw_watts);
    case column::utilization: return number_key(p.utilization_percent);
    case column::available: return number_key(p.available ? 1.0 : 0.0);
    case column::software: return number_key(p.software ? 1.0 : 0.0);
    case column::unified: return number_key(p.unified_memory ? 1.0 : 0.0);
    }
    return {};
}

// Stable: devices equal on every key keep detection order.
void sort_devices(std::vector<listed>& rows, std::span<const sort_spec> keys) {
    std::stable_sort(rows.begin(), rows.end(), [&](const listed& a, const listed& b) {
        for (const auto& k : keys) {
            const auto ka = key_of(k.by, a), kb = key_of(k.by, b);
            if (ka.known != kb.known) return ka.known;
            if (!ka.known) continue;
            const int cmp = ka.is_text ? ka.text.compare(kb.text) : (ka.number < kb.number ? -1 : ka.number > kb.number);
            if (cmp != 0) return k.descending ? cmp > 0 : cmp < 0;
        }
        return false;
    });
}

// --- human-readable host and system ------------------------------------------------------

void print_cpu(const ah::cpu_info& cpu) {
    const auto maker = ah::to_string(cpu.maker), arch = ah::to_string(cpu.arch);
    std::printf("cpu: %s (%.*s, %.*s)", cpu.model.empty() ? "unknown model" : cpu.model.c_str(), len(maker),
                maker.data(), len(arch), arch.data());
    // The counts that are known (0: not), after a colon.
    const char* sep = ": ";
    auto count = [&sep](std::uint32_t n, const char* what) {
        if (n == 0) return;
        std::printf("%s%u %s", sep, n, what);
        sep = ", ";
    };
    count(cpu.sockets, "socket(s)");
    count(cpu.cores, "core(s)");
    count(cpu.threads, "thread(s)");
    count(cpu.usable_threads, "usable by this process");
    if (cpu.cpu_quota > 0) std::printf("%squota %.2f CPUs", sep, cpu.cpu_quota);
    std::string feats;
    for (const auto& f : ah::cpu_feature_table)
        if (cpu.features.has(f.id)) feats += (feats.empty() ? "" : " ") + str(f.name);
    std::printf("\ncpu features: %s\n", feats.empty() ? "(none of interest)" : feats.c_str());
}

void print_host(const ah::host_info& host) {
    if (host.cpu.threads || !host.cpu.model.empty()) print_cpu(host.cpu);
    if (host.memory.total_bytes || host.memory.cgroup_limit_bytes) {
        std::printf("memory: total %s, available %s, %s%s", fmt_value(host.memory.total_bytes).c_str(),
                    fmt_value(host.memory.available_bytes).c_str(),
                    host.memory.cgroup_limit_bytes ? "cgroup limit " : "no cgroup limit found",
                    host.memory.cgroup_limit_bytes ? fmt_value(host.memory.cgroup_limit_bytes).c_str() : "");
        if (const auto& room = host.memory.cgroup_free_bytes) std::printf(", %s of it free", fmt_bytes(*room).c_str());
        std::printf("\n");
    }
    for (const auto& n : host.numa)
        std::printf("numa node %u: %s, cpus %s\n", n.id, n.memory_bytes ? fmt_bytes(n.memory_bytes).c_str() : "no memory listed",
                    n.cpus.empty() ? "(none)" : n.cpus.c_str());
}

void print_system(const ah::system_io& io) {
    for (const auto& d : io.storage) {
        const auto kind = ah::to_string(d.kind);
        std::printf("storage: %-10s %-12.*s %12s%*s%s\n", d.name.c_str(), len(kind), kind.data(),
                    d.size_bytes ? fmt("%.1f GB", static_cast<double>(d.size_bytes) / 1e9).c_str() : "size unknown",
                    d.model.empty() ? 0 : 2, "", d.model.c_str());
    }
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

#include "gather.hpp"
#include "plan_commands.hpp"
#include "watch.hpp"

namespace {

// --- detect ----------------------------------------------------------------------------

struct detect_args {
    std::string root, only, skip, family, sort, columns;
    bool json = false, tsv = false, summary = false, timings = false, no_host = false, measure = false;
};

// Reads detect's options: `--name VALUE` or `--name=VALUE`; each at most once; no
// positional arguments. False with `why` otherwise.
bool parse_detect_args(std::span<const std::string_view> args, detect_args& a, std::string& why) {
    const std::pair<std::string_view, bool*> flags[] = {{"--json", &a.json},       {"--tsv", &a.tsv},
                                                        {"--summary", &a.summary}, {"--timings", &a.timings},
                                                        {"--no-host", &a.no_host},
                                                        {"--measure-bandwidth", &a.measure}};
    const std::pair<std::string_view, std::string*> values[] = {{"--root", &a.root},     {"--only", &a.only},
                                                                {"--skip", &a.skip},     {"--family", &a.family},
                                                                {"--sort", &a.sort},     {"--columns", &a.columns}};
    std::vector<std::string_view> seen;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const auto arg = args[i];
        if (arg == "-" || !arg.starts_with("-")) {
            why = "detect takes no arguments ('" + str(arg) + "')";
            return false;
        }
        auto [name, value, inline_value] = split_option(arg);
        if (name == "--timing") name = "--timings"; // the spelling of the issue, kept as an alias
        bool* flag = nullptr;
        std::string* target = nullptr;
        for (const auto& [n, t] : flags)
            if (n == name) flag = t;
        for (const auto& [n, t] : values)
            if (n == name) target = t;
        if (!flag && !target) {
            why = "unknown option '" + str(name) + "' for detect"; // the name, as the other commands say it
            return false;
        }
        if (std::find(seen.begin(), seen.end(), name) != seen.end()) {
            why = "option '" + str(name) + "' given twice";
            return false;
        }
        seen.push_back(name);
        if (flag) {
            if (inline_value) {
                why = str(name) + " takes no value";
                return false;
            }
            *flag = true;
            continue;
        }
        if (!inline_value) {
            // `--sort --json` lacks its value; `--sort -memory` has one.
            if (i + 1 >= args.size() || args[i + 1].starts_with("--")) {
                why = str(name) + " needs a value";
                return false;
            }
            value = args[++i];
        }
        if (ah::detail::trim(value).empty()) {
            why = str(name) + " needs a value";
            return false;
        }
        *target = str(value);
    }
    return true;
}

bool parse_columns(std::string_view list, std::vector<column>& cols, std::string& why) {
    for (const auto item : split_list(list)) {
        const auto c = parse_column(item);
        if (!c) {
            why = "unknown column '" + str(item) + "' (columns: " + column_names() + ")";
            return false;
        }
        if (std::find(cols.begin(), cols.end(), *c) != cols.end()) {
            why = "column '" + str(item) + "' given twice";
            return false;
        }
        cols.push_back(*c);
    }
    if (cols.empty()) why = "--columns needs at least one column (columns: " + column_names() + ")";
    return !cols.empty();
}

bool parse_sort(std::string_view list, std::vector<sort_spec>& keys, std::string& why) {
    for (auto item : split_list(list)) {
        const bool descending = item.starts_with("-");
        if (descending) item.remove_prefix(1);
        const auto c = parse_column(item);
        if (!c) {
            why = "unknown sort key '" + str(item) + "' (keys: " + column_names() + "; -KEY sorts descending)";
            return false;
        }
        if (std::any_of(keys.begin(), keys.end(), [&](const sort_spec& k) { return k.by == *c; })) {
            why = "sort key '" + str(item) + "' given twice";
            return false;
        }
        keys.push_back({*c, descending});
    }
    if (keys.empty()) why = "--sort needs at least one key (keys: " + column_names() + ")";
    return !keys.empty();
}

bool parse_families(std::string_view list, std::vector<ah::family>& fams, std::string& why) {
    for (const auto item : split_list(list)) {
        const auto f = ah::parse_family(item);
        if (!f) {
            why = "unknown family '" + str(item) + "' (families: " + family_names() + ")";
            return false;
        }
        if (std::find(fams.begin(), fams.end(), *f) == fams.end()) fams.push_back(*f);
    }
    if (fams.empty()) why = "--family needs at least one family (families: " + family_names() + ")";
    return !fams.empty();
}

// `list` as --only (add) or --skip names it; false with the reason when a name is unknown
// or the list names none (`--only ,` would otherwise run no backend without a word).
bool apply_backend_list(ah::detector& d, std::string_view list, bool add, std::string& why) {
    std::size_t named = 0;
    for (const auto name : split_list(list)) {
        const auto b = ah::parse_backend(name);
        if (!b) {
            why = "unknown backend '" + str(name) + "' (see `ai-hwaccel backends`)";
            return false;
        }
        add ? d.with(*b) : d.without(*b);
        ++named;
    }
    if (named == 0)
        why = std::string(add ? "--only" : "--skip") + " needs at least one backend (see `ai-hwaccel backends`)";
    return named > 0;
}

// `detect --summary`: devices by family, the accelerators and their memory (shared pools
// counted once), and the most capable device by capability_score.
void print_summary(const ah::accelerator_registry& shown, std::span<const listed> rows) {
    if (rows.empty()) {
        std::printf("devices: none\n");
        return;
    }
    std::string families;
    for (const auto& f : ah::family_table) {
        std::size_t n = 0, hidden = 0, software = 0;
        for (const auto& d : rows) {
            if (d.p->device_family() != f.id) continue;
            ++n;
            hidden += d.p->available ? 0 : 1;
            software += d.p->software ? 1 : 0;
        }
        if (n == 0) continue;
        families += (families.empty() ? "" : ", ") + str(f.name) + " " + std::to_string(n);
        if (hidden || software) {
            families += " of which ";
            if (hidden) families += std::to_string(hidden) + " hidden";
            if (hidden && software) families += " and ";
            if (software) families += std::to_string(software) + " software";
        }
    }
    std::printf("devices: %zu (%s)\n", rows.size(), families.c_str());
    std::size_t accelerators = 0, unknown_memory = 0;
    for (const auto& d : rows) {
        accelerators += d.p->is_accelerator() ? 1 : 0;
        unknown_memory += d.p->is_accelerator() && !d.p->memory_bytes ? 1 : 0;
    }
    if (accelerators == 0)
        std::printf("accelerators: %s\n", paint(colour.out, ansi::yellow, "none found").c_str());
    else if (unknown_memory == accelerators)
        std::printf("accelerators: %zu, memory unknown\n", accelerators);
    else if (unknown_memory > 0)
        std::printf("accelerators: %zu, %s of memory in all (%zu of unknown memory)\n", accelerators,
                    fmt_bytes(shown.total_accelerator_memory()).c_str(), unknown_memory);
    else
        std::printf("accelerators: %zu, %s of memory in all\n", accelerators,
                    fmt_bytes(shown.total_accelerator_memory()).c_str());
    const auto best = shown.best_available();
    if (!best) return;
    // best_available returns a copy; the row is the first listed device that is the same one.
    const listed* row = nullptr;
    for (const auto& d : rows)
        if (!row && d.p->kind == best->kind && d.p->index == best->index && d.p->name == best->name &&
            d.p->pci == best->pci && d.p->stack == best->stack && d.p->uuid == best->uuid)
            row = &d;
    std::string what = str(ah::to_string(best->kind));
    what += ", " + (best->memory_bytes ? fmt_bytes(*best->memory_bytes).str() : std::string("memory unknown"));
    if (best->memory_bandwidth_gbps) what += fmt(", %.0f GB/s", *best->memory_bandwidth_gbps);
    std::printf("best: %s (#%zu, %s)\n", best->name.c_str(), row ? row->row : std::size_t{0}, what.c_str());
}

int cmd_detect(std::span<const std::string_view> args) {
    detect_args a;
    std::string why;
    if (!parse_detect_args(args, a, why)) return usage_error(why);
    const int formats = int{a.json} + int{a.tsv} + int{a.summary};
    if (formats > 1) return usage_error("--json, --tsv and --summary are different outputs: choose one");
    if (!a.columns.empty() && (a.json || a.summary))
        return usage_error(std::string("--columns applies to the table and --tsv, not ") +
                           (a.json ? "--json" : "--summary"));
    if (a.timings && a.tsv) return usage_error("--timings cannot be combined with --tsv (one row per device); use --json");
    if (!a.only.empty() && !a.skip.empty()) return usage_error("--only and --skip cannot be combined");
    if (a.measure && !a.root.empty())
        return usage_error("--measure-bandwidth measures this machine's memory; it cannot be combined with --root");
    if (a.measure && a.no_host)
        return usage_error("--measure-bandwidth gives the CPU its figure; --no-host leaves no CPU to give it to");
    std::vector<column> cols;
    if (!a.columns.empty() && !parse_columns(a.columns, cols, why)) return usage_error(why);
    if (cols.empty()) {
        if (a.tsv) cols.assign(default_tsv_columns.begin(), default_tsv_columns.end());
        else cols.assign(default_table_columns.begin(), default_table_columns.end());
    }
    std::vector<sort_spec> keys;
    if (!a.sort.empty() && !parse_sort(a.sort, keys, why)) return usage_error(why);
    std::vector<ah::family> families;
    if (!a.family.empty() && !parse_families(a.family, families, why)) return usage_error(why);

    auto d = a.only.empty() ? ah::detector::all() : ah::detector::none().with_host();
    if (a.no_host) d.with_host(false);
    const bool only = !a.only.empty();
    if ((only || !a.skip.empty()) && !apply_backend_list(d, only ? a.only : a.skip, only, why)) return usage_error(why);
    if (!a.root.empty()) {
        struct stat st {};
        if (::stat(a.root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
            return usage_error("--root: '" + a.root + "' is not a directory");
    }
    auto t = d.run_timed(ah::host_system(a.root));
    if (a.measure) {
        const auto m = ah::measure_memory_bandwidth(ah::bandwidth_options_for(t.registry.host()));
        if (m.ok()) {
            t.registry = ah::apply_cpu_bandwidth(t.registry, m);
            // On stderr: the table, --tsv and --json stay what they always are.
            std::fprintf(stderr, "memory bandwidth: %.1f GB/s, measured (%u thread(s) reading %s, the fastest of %u passes)\n",
                         m.gbps, m.threads, fmt_bytes(m.bytes_per_pass).c_str(), m.passes);
            if (!m.note.empty()) std::fprintf(stderr, "ai-hwaccel: note: %s\n", m.note.c_str());
        } else {
            std::fprintf(stderr, "ai-hwaccel: note: the memory bandwidth was not measured: %s\n", m.error.c_str());
        }
    }
    const auto& reg = t.registry;

    // The devices shown: filtered by family, then sorted; `row` stays each one's place in
    // the registry. The JSON document and the summary see the same devices.
    std::vector<listed> rows;
    for (std::size_t i = 0; i < reg.all().size(); ++i) {
        const auto& p = reg.all()[i];
        if (families.empty() || std::find(families.begin(), families.end(), p.device_family()) != families.end())
            rows.push_back({&p, i});
    }
    sort_devices(rows, keys);
    std::vector<ah::accelerator_profile> kept;
    kept.reserve(rows.size());
    for (const auto& r : rows) kept.push_back(*r.p);
    const auto shown = reg.what_if_replace(kept);
    // A --family filter that matches nothing is "nothing found": exit 1, the message after
    // the output.
    auto finish = [&] {
        if (families.empty() || !rows.empty()) return 0;
        std::fflush(stdout);
        return error("no device of family " + a.family + " found");
    };

    if (a.json) {
#if AI_HWACCEL_JSON
        nlohmann::json j = shown;
        if (a.timings) {
            auto& arr = j["timings"] = nlohmann::json::array();
            for (const auto& p : t.timings)
                arr.push_back({{"probe", p.name}, {"state", ah::to_string(p.state)},
                               {"elapsed_us", p.elapsed.count()}, {"devices", p.devices}, {"warnings", p.warnings}});
            j["elapsed_us"] = t.elapsed.count();
        }
        print_json(j);
        return finish();
#else
        return no_json();
#endif
    }
    if (a.tsv) {
        print_tsv(rows, cols);
        print_warnings(reg.warnings());
        return finish();
    }
    if (a.summary) {
        print_summary(shown, rows);
    } else {
        print_table(rows, cols);
        std::printf("\n");
        print_host(reg.host());
        print_system(reg.system());
        std::printf("accelerators: %s\n",
                    reg.has_accelerator() ? "yes" : paint(colour.out, ansi::yellow, "none found").c_str());
    }
    if (a.timings) {
        char header[80];
        std::snprintf(header, sizeof header, "%-12s %-13s %12s %8s %9s", "probe", "state", "elapsed", "devices", "warnings");
        std::printf("\n%s\n", paint(colour.out, ansi::bold, header).c_str());
        for (const auto& p : t.timings) {
            const auto state = ah::to_string(p.state);
            std::printf("%-12s %-13.*s %9.3f ms %8zu %9zu\n", p.name.c_str(), len(state), state.data(),
                        static_cast<double>(p.elapsed.count()) / 1000.0, p.devices, p.warnings);
        }
        std::printf("%-12s %-13s %9.3f ms\n", "total", "", static_cast<double>(t.elapsed.count()) / 1000.0);
    }
    print_warnings(reg.warnings());
    return finish();
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
    options o;
    std::string why;
    if (!parse_options(args.subspan(1), "export",
                       {{"--root"}, {"--output"}, {"--label", true, true}, {"--prefix"}, {"--expiry-seconds"}}, o, why))
        return usage_error(why);
    if (o.has("--label") && format != "prometheus") return usage_error("option '--label' does not apply to export nfd");
    for (const std::string_view n : {"--prefix", "--expiry-seconds"})
        if (o.has(n) && format != "nfd")
            return usage_error("option '" + str(n) + "' does not apply to export prometheus");
    const std::string root = str(o.get("--root").value_or("")), output = str(o.get("--output").value_or(""));
    ah::prometheus_options prom;
    ah::nfd_options nfd;
    for (const auto v : o.all("--label")) {
        const auto eq = v.find('=');
        if (eq == std::string_view::npos || !ah::is_valid_prometheus_label_name(v.substr(0, eq)))
            return usage_error("--label takes NAME=VALUE with NAME matching [a-zA-Z_][a-zA-Z0-9_]*");
        // A second value for a name would be dropped by the exporter: say so instead.
        for (const auto& [k, earlier] : prom.extra_labels)
            if (k == v.substr(0, eq)) return usage_error("--label: '" + k + "' given twice");
        prom.extra_labels.emplace_back(str(v.substr(0, eq)), str(v.substr(eq + 1)));
    }
    if (const auto v = o.get("--prefix")) {
        if (!ah::is_valid_label_name(str(*v) + "/x"))
            return usage_error("--prefix '" + str(*v) + "' is not a DNS subdomain (lower-case, e.g. ai-hwaccel.io)");
        if (!ah::nfd_allows_prefix(*v))
            return usage_error("--prefix '" + str(*v) + "': NFD denies kubernetes.io and its sub-namespaces");
        nfd.prefix = str(*v);
    }
    if (const auto v = o.get("--expiry-seconds")) {
        // The expiry is written as an RFC 3339 time, whose year has four digits: it must
        // fall before the year 10000 (253402300800 s after the epoch).
        const auto now = std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());
        const std::int64_t latest = std::int64_t{253402300799} - now.time_since_epoch().count();
        std::int64_t n = 0;
        const auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
        if (ec != std::errc{} || p != v->data() + v->size() || n <= 0 || n > latest)
            return usage_error("--expiry-seconds: '" + str(*v) +
                               "' is not a positive whole number of seconds ending before the year 10000");
        nfd.expiry_time = now + std::chrono::seconds(n);
    }
    if (!root.empty()) {
        struct stat st {};
        if (::stat(root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
            return usage_error("--root: '" + root + "' is not a directory");
    }
    const auto reg = ah::detect(ah::host_system(root));
    const std::string text = format == "prometheus" ? ah::to_prometheus(reg, prom) : ah::to_nfd_features(reg, nfd);
    if (output.empty()) {
        out(text);
        return 0;
    }
    // The library's message names its temporary file; say which output it was for.
    if (const auto r = ah::write_file_atomically(output, text); !r)
        return error("cannot write '" + output + "': " + r.message, 1);
    return 0;
}

// --- parse -----------------------------------------------------------------------------

constexpr std::size_t parse_input_cap = std::size_t{64} << 20;

bool read_input(const std::string& path, std::string& data, bool& cut, std::string& why) {
    std::FILE* f = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
    if (!f) {
        why = "cannot open '" + path + "': " + std::strerror(errno);
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
    const int read_errno = errno;
    if (f != stdin) std::fclose(f);
    if (failed) {
        why = "cannot read '" + path + "': " + std::strerror(read_errno);
        return false;
    }
    return true;
}

int cmd_list_formats() {
    std::size_t width = 0;
    for (const auto& f : ah::capture_formats) width = std::max(width, f.name.size());
    for (const auto& f : ah::capture_formats)
        std::printf("%-*.*s  %.*s\n", static_cast<int>(width), len(f.name), f.name.data(), len(f.command),
                    f.command.data());
    return 0;
}

// `parse FILE [--format NAME] [--json]` or `parse --list-formats`.
int cmd_parse(std::span<const std::string_view> args) {
    std::vector<std::string_view> positional;
    options o;
    std::string parse_why;
    if (!parse_options(args, "parse", {{"--format"}, {"--json", false}, {"--list-formats", false}}, o, parse_why,
                       &positional))
        return usage_error(parse_why);
    const auto format = o.get("--format");
    const bool json = o.has("--json"), list_formats = o.has("--list-formats");
    if (list_formats) {
        if (json || format || !positional.empty()) return usage_error("--list-formats takes nothing else");
        return cmd_list_formats();
    }
    if (positional.size() != 1) return usage_error("parse takes one FILE (or '-' for stdin)");
    const std::string path = str(positional[0]);
    const ah::capture_format* f = nullptr;
    if (format) {
        f = ah::find_capture_format(*format);
        if (!f) return usage_error("unknown format '" + str(*format) + "' (see `ai-hwaccel parse --list-formats`)");
    }
    std::string data, why;
    bool cut = false;
    if (!read_input(path, data, cut, why)) return error(why);
    if (data.empty() && !f) return error("'" + path + "' is empty");
    if (!f) f = ah::recognise_format(data);
    if (!f)
        return error("'" + path + "' is in no format this build recognises; name one with --format (see --list-formats)");
    auto r = ah::parse_capture(data, *f);
    // A format named by --format that reads nothing from the file is as good as none: exit
    // 1 after the output, so that a script can tell (a recognised format always read some).
    const bool read_nothing = format && r.devices.empty() && !r.host && !r.system &&
                              std::any_of(r.warnings.begin(), r.warnings.end(), [](const ah::warning& w) {
                                  return w.kind == ah::warning_kind::parse_error;
                              });
    const auto finish = [&](int code) {
        if (code != 0 || !read_nothing) return code;
        std::fflush(stdout);
        return error("nothing in '" + path + "' read as " + str(f->name));
    };
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
        if (!r.driver_version.empty()) j["driver_version"] = r.driver_version;
        j["warnings"] = r.warnings;
        return finish(print_json(j));
#else
        return no_json();
#endif
    }
    std::printf("format: %.*s (%.*s)\n", len(f->name), f->name.data(), len(f->command), f->command.data());
    if (!r.driver_version.empty()) std::printf("driver version: %s\n", r.driver_version.c_str());
    if (!r.devices.empty()) {
        std::vector<listed> rows;
        for (std::size_t i = 0; i < r.devices.size(); ++i) rows.push_back({&r.devices[i], i});
        print_table(rows, default_table_columns);
    }
    if (r.host) print_host(*r.host);
    if (r.system) print_system(*r.system);
    print_warnings(r.warnings);
    return finish(0);
}

// --- the rest --------------------------------------------------------------------------

// Options are not taken by these: any argument starting with '-' is an unknown option.
bool reject_options(std::span<const std::string_view> args, std::string_view command, int& code) {
    for (const auto a : args)
        if (a.starts_with("-")) {
            code = usage_error("unknown option '" + str(a) + "' for " + str(command));
            return true;
        }
    return false;
}

int cmd_catalogue(std::span<const std::string_view> args) {
    if (int code = 0; reject_options(args, "catalogue", code)) return code;
    if (args.size() > 1) return usage_error("catalogue takes at most one filter");
    const std::string_view filter = args.empty() ? std::string_view{} : args[0];
    // The device-to-device link: its kind, its bandwidth (both directions) and the most
    // devices it joins as built ("nvlink 900 GB/s x8").
    const auto link_text = [](const ah::device_spec& d) {
        std::string s(ah::to_string(d.link));
        if (d.link_bandwidth_gbps > 0) s += fmt(" %g GB/s", d.link_bandwidth_gbps);
        if (d.link_domain != 0) s += " x" + std::to_string(d.link_domain);
        return s;
    };
    // The name and link columns as wide as the catalogue's widest (as for models).
    std::size_t name_width = 0, link_width = 0;
    for (const auto& d : ah::device_catalogue) {
        name_width = std::max(name_width, d.name.size());
        link_width = std::max(link_width, link_text(d).size());
    }
    std::size_t shown = 0;
    for (const auto& d : ah::device_catalogue) {
        if (!filter.empty() && !ah::detail::icontains(d.name, filter)) continue;
        if (shown++ == 0)
            std::printf("%-*s %-20s %10s %14s  %-*s %25s\n", static_cast<int>(name_width), "name", "kind", "memory",
                        "bandwidth", static_cast<int>(link_width), "link", "peak");
        // 0 in the catalogue is "not known", not a measured zero.
        const double peak = d.peak.bf16 > d.peak.fp16 ? d.peak.bf16 : d.peak.fp16;
        const std::string bandwidth = d.memory_bandwidth_gbps > 0 ? fmt("%.0f GB/s", d.memory_bandwidth_gbps) : "unknown";
        // Without a half-precision figure, the one the maker gives: the fp32 rate of a GPU
        // without matrix units (Apple's), the int8 rate of an NPU.
        // The 16-bit figure says which type it is for: an Intel NPU multiplies fp16 only.
        // Where the two differ (MI100: bf16 at half the fp16 rate), the larger one's type.
        const char* const half = d.peak.bf16 == d.peak.fp16 ? " bf16/fp16" : d.peak.bf16 > d.peak.fp16 ? " bf16" : " fp16";
        const std::string throughput = peak > 0          ? fmt("%8.1f TFLOPS", peak) + half
                                       : d.peak.fp32 > 0 ? fmt("%8.1f TFLOPS fp32", d.peak.fp32)
                                       : d.peak.int8 > 0 ? fmt("%8.1f TOPS int8", d.peak.int8)
                                                         : "unknown";
        const auto kind = ah::to_string(d.kind);
        std::printf("%-*.*s %-20.*s %10s %14s  %-*s %25s\n", static_cast<int>(name_width), len(d.name), d.name.data(),
                    len(kind), kind.data(), d.memory_bytes ? fmt_bytes(d.memory_bytes).c_str() : "shared",
                    bandwidth.c_str(), static_cast<int>(link_width), link_text(d).c_str(), throughput.c_str());
    }
    if (shown == 0) return error("no catalogue device matches \"" + str(filter) + "\"");
    return 0;
}

int cmd_models(std::span<const std::string_view> args) {
    if (int code = 0; reject_options(args, "models", code)) return code;
    if (args.size() > 1) return usage_error("models takes at most one filter");
    const std::string_view filter = args.empty() ? std::string_view{} : args[0];
    // Columns as wide as the catalogue's widest entry (every row, so that a filtered list
    // lines up as the whole one does).
    std::size_t id_width = 0, name_width = 0, context_width = 0;
    for (const auto& m : ah::model_catalogue) {
        id_width = std::max(id_width, m.id.size());
        name_width = std::max(name_width, m.name.size());
        context_width = std::max(context_width, std::to_string(m.context_length).size());
    }
    std::size_t shown = 0;
    for (const auto& m : ah::model_catalogue) {
        if (!filter.empty() && !ah::detail::icontains(m.id, filter) && !ah::detail::icontains(m.name, filter)) continue;
        ++shown;
        std::string params = fmt("%.2f B", static_cast<double>(m.parameters) / 1e9);
        if (m.is_moe()) params += fmt(" (%.2f B active)", static_cast<double>(m.active_parameters) / 1e9);
        // Latent attention (DeepSeek's MLA) caches one compressed vector, not its heads' keys.
        const std::string kv =
            m.latent_kv_cache ? std::string("latent KV")
                                            : std::to_string(m.kv_heads) + (m.kv_heads == 1 ? " KV head" : " KV heads");
        std::printf("%-*.*s %-*.*s %-26s %4u layers %12s %*u tokens\n", static_cast<int>(id_width), len(m.id),
                    m.id.data(), static_cast<int>(name_width), len(m.name), m.name.data(), params.c_str(), m.layers,
                    kv.c_str(),
                    static_cast<int>(context_width), m.context_length);
    }
    if (shown == 0) return error("no catalogue model matches \"" + str(filter) + "\"");
    return 0;
}

int cmd_backends(std::span<const std::string_view> args) {
    if (int code = 0; reject_options(args, "backends", code)) return code;
    if (!args.empty()) return usage_error("backends takes no arguments");
    // Columns as wide as their widest entry, so that every row lines up.
    std::size_t name_width = 0, display_width_max = 0;
    for (const auto& b : ah::backend_table) {
        name_width = std::max(name_width, b.name.size());
        display_width_max = std::max(display_width_max, display_width(b.display));
    }
    for (const auto& b : ah::backend_table) {
        std::string tools;
        for (auto t : b.tools) tools += (tools.empty() ? "" : ", ") + str(t);
        std::printf("%-*.*s  %-12s  %.*s%*s  %s\n", static_cast<int>(name_width), len(b.name), b.name.data(),
                    b.compiled ? "compiled" : "not compiled", len(b.display), b.display.data(),
                    static_cast<int>(display_width_max - display_width(b.display)), "", tools.c_str());
    }
    return 0;
}

int print_version() {
    std::printf("ai-hwaccel %s\n", ah::version.text);
    return 0;
}

int cmd_version(std::span<const std::string_view> args) {
    if (int code = 0; reject_options(args, "version", code)) return code;
    if (!args.empty()) return usage_error("version takes no arguments");
    return print_version();
}

// --- help texts --------------------------------------------------------------------------

constexpr std::string_view detect_help =
    "usage: ai-hwaccel detect [options]\n"
    "\n"
    "Print the registry of this machine: its devices as a table, then the host (CPU, memory,\n"
    "NUMA), storage, PCI and environment. The default command: `ai-hwaccel` alone runs it.\n"
    "\n"
    "where to look:\n"
    "  --root DIR         detect from a captured machine tree instead: DIR/proc, DIR/sys,\n"
    "                     DIR/dev, DIR/etc, ...; no tool runs, captured outputs are replayed\n"
    "                     from DIR/ai-hwaccel-tools (see its index format in the README)\n"
    "  --only LIST        run only these backends (comma-separated names, see `backends`)\n"
    "  --skip LIST        run every compiled backend but these\n"
    "  --no-host          skip the host probes (CPU, memory, NUMA, PCI, storage, environment)\n"
    "  --measure-bandwidth\n"
    "                     also measure how fast this machine reads its memory (about a second,\n"
    "                     a buffer of up to 2 GiB, every usable CPU): the CPU's bandwidth, origin\n"
    "                     \"measured\" (not with --root or --no-host)\n"
    "\n"
    "which devices, in which order (the table, --tsv, --summary and --json alike):\n"
    "  --family LIST      only devices of these families (comma-separated): cpu, gpu, npu,\n"
    "                     tpu, ai_asic; when none is found, exit code 1\n"
    "  --sort KEYS        order by these columns (comma-separated, the first decides first);\n"
    "                     -KEY sorts descending: --sort -memory,name. Unknown values sort\n"
    "                     last either way; equal devices keep detection order\n"
    "\n"
    "output (one of; the table by default):\n"
    "  --tsv              tab-separated values: a header row of column names, then one device\n"
    "                     per line; raw values (bytes, GB/s, true/false), empty when unknown;\n"
    "                     never coloured\n"
    "  --summary          three lines: devices by family, accelerators and their memory, the\n"
    "                     most capable device\n"
    "  --json             the registry as JSON (docs/json.md)\n"
    "  --columns LIST     the table's or the TSV's columns, in this order (comma-separated)\n"
    "  --timings          also print how long each probe took (alias --timing; not with --tsv)\n"
    "\n"
    "Options take their value as `--sort memory` or `--sort=memory`.\n"
    "\n"
    "columns (table default: row,kind,name,memory,pci; TSV default: row,index,kind,family,\n"
    "vendor,name,memory,memory_origin,bandwidth,bandwidth_origin,pci,numa,driver,available,\n"
    "software):\n";

// The column list of detect's help, from column_table.
void detect_more_help() {
    std::size_t width = 0;
    for (const auto& c : column_table) width = std::max(width, c.name.size());
    for (const auto& c : column_table)
        std::printf("  %-*.*s  %.*s\n", static_cast<int>(width), len(c.name), c.name.data(), len(c.doc), c.doc.data());
    out("\nexamples:\n"
        "  ai-hwaccel detect --summary\n"
        "  ai-hwaccel detect --family gpu --sort -memory --columns row,name,memory,bandwidth,pci\n"
        "  ai-hwaccel detect --tsv --columns pci,name,memory | sort -t$'\\t' -k3 -n\n");
}

constexpr std::string_view parse_help =
    "usage: ai-hwaccel parse FILE [--format NAME] [--json]\n"
    "       ai-hwaccel parse --list-formats\n"
    "\n"
    "Read one captured tool output or system file ('-' for stdin) and print what it says:\n"
    "devices, host or system facts, and warnings. The format is recognised from the content.\n"
    "\n"
    "  --format NAME      read it as NAME instead of recognising the format\n"
    "  --list-formats     list the formats this build reads, with the command that makes each\n"
    "  --json             print {format, devices, system, warnings} as JSON\n"
    "\n"
    "exit codes: 0 read; 1 the file cannot be read, is in no known format, or the --format\n"
    "given reads nothing from it; 2 usage error\n";

constexpr std::string_view catalogue_help =
    "usage: ai-hwaccel catalogue [FILTER]\n"
    "\n"
    "List the device catalogue: name, kind, memory, memory bandwidth, the device-to-device\n"
    "link (its bandwidth, both directions, and xN: the most devices it joins as built, such\n"
    "as x2 for a bridged pair or x8 for an 8-GPU board) and peak 16-bit throughput. FILTER\n"
    "keeps names containing it, ignoring case. Also spelt `catalog`.\n"
    "\n"
    "exit codes: 0 listed; 1 no device matches FILTER; 2 usage error\n";

constexpr std::string_view models_help =
    "usage: ai-hwaccel models [FILTER]\n"
    "\n"
    "List the model catalogue that estimate, plan, training and cost take by --model: id,\n"
    "name, parameters (and, for mixture-of-experts models, those a token reads), layers, KV\n"
    "heads (\"latent KV\" for latent attention) and the context the model was trained for.\n"
    "FILTER keeps ids and names containing it, ignoring case. --model also takes Hugging\n"
    "Face names (\"meta-llama/Llama-3.1-8B\").\n"
    "\n"
    "exit codes: 0 listed; 1 no model matches FILTER; 2 usage error\n";

constexpr std::string_view backends_help =
    "usage: ai-hwaccel backends\n"
    "\n"
    "List the backends, whether this build compiled each in, and the tools each runs.\n";

constexpr std::string_view version_help =
    "usage: ai-hwaccel version   (or ai-hwaccel --version, -V)\n"
    "\n"
    "Print the library version.\n";

constexpr std::string_view export_help =
    "usage: ai-hwaccel export prometheus|nfd [options]\n"
    "\n"
    "Print the registry for other tools (docs/exporters.md):\n"
    "  prometheus         Prometheus text format (node_exporter textfile collector)\n"
    "  nfd                Kubernetes Node Feature Discovery feature file (features.d)\n"
    "\n"
    "  --root DIR         on a captured machine tree instead (as detect --root)\n"
    "  --output FILE      write FILE atomically (temporary file + rename) instead of stdout\n"
    "  --label NAME=VALUE prometheus: add a label to every series (repeatable)\n"
    "  --prefix P         nfd: the label prefix (default ai-hwaccel.io)\n"
    "  --expiry-seconds N nfd: the labels lapse N seconds from now unless rewritten\n";

constexpr std::string_view help_help =
    "usage: ai-hwaccel help [COMMAND]\n"
    "\n"
    "Print the list of commands, or COMMAND's help (the same as `ai-hwaccel COMMAND --help`).\n";

int cmd_help(std::span<const std::string_view> args);

// --- commands ----------------------------------------------------------------------------

struct command_info {
    std::string_view name;
    std::string_view summary; ///< one line in the command list
    std::string_view help;    ///< `ai-hwaccel help NAME`
    int (*run)(std::span<const std::string_view> args);
    void (*more_help)() = nullptr; ///< printed after `help`, for text derived from a table
    std::string_view alias{};
};

// Every command: a new one is one row here (and its help text).
constexpr command_info commands[] = {
    {"detect", "print this machine's devices, host and system (the default command)", detect_help, cmd_detect,
     detect_more_help},
    {"parse", "read one captured tool output or system file and print what it says", parse_help, cmd_parse},
    {"catalogue", "list the devices the library knows", catalogue_help, cmd_catalogue, nullptr, "catalog"},
    {"models", "list the models the library knows", models_help, cmd_models},
    {"backends", "list the backends and whether this build compiled them in", backends_help, cmd_backends},
    {"export", "the registry for Prometheus or Node Feature Discovery", export_help, cmd_export},
    {"estimate", "memory and tokens/s of a model on catalogue devices (no detection)", plan_cli::estimate_help,
     plan_cli::cmd_estimate},
    {"plan", "lay a model out on this machine's devices", plan_cli::plan_help, plan_cli::cmd_plan},
    {"training", "the memory per device fine-tuning a model takes", plan_cli::training_help, plan_cli::cmd_training},
    {"cost", "the cheapest cloud instance that holds a model", plan_cli::cost_help, plan_cli::cmd_cost},
    {"gather", "copy what detection reads into a folder or tarball, for a bug report", gather_cli::gather_help,
     gather_cli::cmd_gather},
    {"watch", "detect again and again: live values, their changes, alert thresholds", watch_cli::watch_help,
     watch_cli::cmd_watch},
    {"version", "print the library version", version_help, cmd_version},
    {"help", "print this list, or a command's help", help_help, cmd_help},
};

const command_info* find_command(std::string_view name) {
    for (const auto& c : commands)
        if (c.name == name || (!c.alias.empty() && c.alias == name)) return &c;
    return nullptr;
}

// "unknown command 'X'", with the command a typo or a different case most likely meant.
std::string unknown_command(std::string_view name) {
    std::string msg = "unknown command '" + str(name) + "'";
    std::string lower;
    for (char ch : name) lower += ah::detail::ascii_lower(ch);
    const command_info* best = nullptr;
    std::size_t best_distance = 3; // at most two edits away
    for (const auto& c : commands)
        for (auto n : {c.name, c.alias})
            if (!n.empty())
                if (const auto d = plan_cli::edit_distance(lower, n); d < best_distance) {
                    best = &c;
                    best_distance = d;
                }
    if (best && name.size() >= 3) msg += " (did you mean '" + str(best->name) + "'?)";
    return msg;
}

void print_usage() {
    out("usage: ai-hwaccel <command> [options]\n"
        "       ai-hwaccel help <command>    (or: ai-hwaccel <command> --help)\n"
        "\n"
        "Detects AI accelerators, describes them, and estimates what a model needs on them.\n"
        "Without a command, runs detect.\n"
        "\n"
        "commands:\n");
    std::size_t width = 0;
    for (const auto& c : commands) width = std::max(width, c.name.size());
    for (const auto& c : commands)
        std::printf("  %-*.*s  %.*s\n", static_cast<int>(width), len(c.name), c.name.data(), len(c.summary),
                    c.summary.data());
    out("\n"
        "options (anywhere on the line):\n"
        "  -h, --help         print this help; after a command, that command's help\n"
        "  -V, --version      print the library version\n"
        "  --color WHEN       colour: auto (the default: on a terminal only, never when NO_COLOR\n"
        "                     is set and not empty or TERM is dumb or unset), always (even with\n"
        "                     NO_COLOR), or never; also --color=WHEN\n"
        "\n"
        "exit codes: 0 done; 1 nothing found (detect --family, catalogue FILTER, models\n"
        "FILTER), a model that fits nowhere (estimate, plan, training, cost), or a file (or\n"
        "the output) that cannot be read or written; 2 a usage error (unknown command or\n"
        "option, a missing or bad value); 3 watch: an --alert fired.\n"
        "\n"
        "More in docs/cli.md and docs/cli-plan.md.\n");
}

int print_help(const command_info& c) {
    out(c.help);
    if (c.more_help) c.more_help();
    return 0;
}

int cmd_help(std::span<const std::string_view> args) {
    if (args.empty()) {
        print_usage();
        return 0;
    }
    if (args.size() > 1) return usage_error("help takes one command");
    const auto* c = find_command(args[0]);
    if (!c) {
        current_command = {};
        return usage_error(unknown_command(args[0]));
    }
    return print_help(*c);
}

bool is_help(std::string_view a) { return a == "-h" || a == "--help"; }
bool is_version(std::string_view a) { return a == "-V" || a == "--version"; }

} // namespace

int main(int argc, char** argv) {
    std::vector<std::string_view> args;
    // --color applies to every command: taken out here, wherever it is on the line.
    colour_when when = colour_when::automatic;
    bool colour_given = false;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a != "--color" && !a.starts_with("--color=")) {
            args.push_back(a);
            continue;
        }
        // Once, as every option but --label and --alert (docs/cli.md).
        if (colour_given) return usage_error("option '--color' given twice");
        colour_given = true;
        std::string_view v;
        if (a == "--color") {
            if (i + 1 >= argc) return usage_error("--color needs a value: auto, always or never");
            v = argv[++i];
        } else {
            v = a.substr(8);
        }
        if (v == "auto") when = colour_when::automatic;
        else if (v == "always") when = colour_when::always;
        else if (v == "never") when = colour_when::never;
        else return usage_error("--color: '" + str(v) + "' is not auto, always or never");
    }
    colour.out = colour_for(when, STDOUT_FILENO);
    colour.err = colour_for(when, STDERR_FILENO);

    // A help or version option first belongs to the program (`--help detect` is detect's
    // help); after a command, to that command.
    // `--help detect --json` is detect's help; `--help --json`, the list of commands.
    if (!args.empty() && is_help(args[0])) {
        std::vector<std::string_view> named;
        for (const auto a : std::span<const std::string_view>(args).subspan(1))
            if (!a.starts_with("-")) named.push_back(a);
        return check_stdout(cmd_help(named));
    }
    if (!args.empty() && is_version(args[0])) return check_stdout(print_version());
    std::string_view name = "detect";
    std::size_t first = 0;
    if (!args.empty() && !args[0].starts_with("-")) {
        name = args[0];
        first = 1;
    }
    const auto* command = find_command(name);
    if (!command) return usage_error(unknown_command(name));
    current_command = command->name;
    const auto rest = std::span<const std::string_view>(args).subspan(first);
    for (const auto a : rest) {
        if (is_help(a)) return check_stdout(print_help(*command));
        if (is_version(a)) return check_stdout(print_version());
    }
    return check_stdout(command->run(rest));
}
