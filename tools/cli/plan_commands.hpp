// ai-hwaccel CLI: the planning commands (estimate, plan, training, cost).
//
// Included by main.cpp after its helpers (usage_error, error, out, print_json / no_json,
// str, fmt, fmt_bytes, print_warnings, parse_options), which it uses; main.cpp's command
// table runs the cmd_* functions and shows the *_help texts. Every number printed is an
// estimate from include/ai_hwaccel/plan/; docs/cli-plan.md documents the JSON fields.
//
// Options are parsed strictly: an option a command does not take, a missing value, a
// value given twice, a number with trailing text, zero where zero makes no sense, or a
// name that resolves to nothing is an error with exit code 2. A model that fits nowhere is
// exit code 1, with the reason (and the JSON document, fits: false, when --json is given).
#pragma once

#include "ai_hwaccel/core.hpp"
#include "ai_hwaccel/detect/bandwidth.hpp"
#include "ai_hwaccel/detect/detect.hpp"
#include "ai_hwaccel/io/json.hpp"
#include "ai_hwaccel/plan/cost.hpp"
#include "ai_hwaccel/plan/memory.hpp"
#include "ai_hwaccel/plan/models.hpp"
#include "ai_hwaccel/plan/shard.hpp"
#include "ai_hwaccel/plan/throughput.hpp"
#include "ai_hwaccel/plan/training.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <sys/stat.h>
#include <utility>
#include <vector>

namespace {
namespace plan_cli {

// --- help texts (main.cpp's command table shows them) ---------------------------------------

constexpr std::string_view estimate_help =
    "usage: ai-hwaccel estimate --device NAME --quant FORMAT (--model ID | --params N\n"
    "                           [--layers N --hidden N]) [options]\n"
    "\n"
    "Memory and tokens/s of a model on catalogue devices; nothing is detected. Every figure is\n"
    "an estimate; --json prints the fields of docs/cli-plan.md.\n"
    "\n"
    "  --device NAME      a catalogue device as people write it (\"H100 SXM\", \"RTX 4090\")\n"
    "  --count N          N such devices joined by the device's own link in groups of\n"
    "                     its domain (bridged pairs, 8-GPU boards), PCIe between them\n"
    "  --model ID         a catalogue model (\"llama-3.1-70b\", \"meta-llama/Llama-3.1-8B\")\n"
    "  --params N         or a model by hand: parameters (70B, 7e9), [--layers N],\n"
    "                     [--hidden N], [--heads N (default hidden/128)], [--kv-heads N\n"
    "                     (default: the heads)], [--vocab N]; without --layers and\n"
    "                     --hidden the rest of the shape is assumed (the catalogue's\n"
    "                     typical proportions for the size) and said so\n"
    "  --quant FORMAT     GGUF names (Q4_K_M, Q8_0, F16, MXFP4) or plain ones (fp8, int4,\n"
    "                     bf16); or a table of several, comma-separated (Q4_K_M,Q8_0,bf16)\n"
    "                     or all (most bits per weight first)\n"
    "  --context N        tokens in the KV cache per sequence (default 4096; 8k, 128k)\n"
    "  --prompt N         prompt length for the prefill rate (default 512, at most --context)\n"
    "  --prompt-depth N   tokens already in the KV cache when the prompt comes (earlier\n"
    "                     turns; default 0): the prompt attends to them too, and the two\n"
    "                     are at most --context\n"
    "  --batch N          sequences decoded together (default 1)\n"
    "  --memory SIZE      memory per device (192GiB, 64GB): needed where the catalogue has\n"
    "                     none (unified memory, e.g. Apple M-series), else an override\n"
    "  --bandwidth GBPS   memory bandwidth per device in decimal GB/s (68.25): where the\n"
    "                     catalogue has none (Apple M1), else an override\n"
    "  --headroom SHARE   memory left free on each device, 5% or 0.05 (default 10%, vLLM's\n"
    "                     gpu_memory_utilization 0.9)\n"
    "  --json             print the estimate as JSON\n"
    "\n"
    "exit codes: 0 it fits (of several formats, in one at least); 1 it fits nowhere (--json\n"
    "still prints the document); 2 usage error\n";

constexpr std::string_view plan_help =
    "usage: ai-hwaccel plan --model ID [options]\n"
    "\n"
    "Lay a model out on this machine's devices (detected), or on described ones. Every figure\n"
    "is an estimate; --json prints the fields of docs/cli-plan.md.\n"
    "\n"
    "  --model ID         a catalogue model (\"llama-3.1-70b\", \"meta-llama/Llama-3.1-8B\")\n"
    "  --root DIR         on a captured machine tree instead (as detect --root)\n"
    "  --device NAME      on described devices instead, with --count N (default 1)\n"
    "                     and --memory SIZE and --bandwidth GBPS as for estimate\n"
    "  --quant FORMAT     the format, or auto (the default): the best that fits, or the\n"
    "                     best that fits of a comma-separated list (Q4_K_M,Q5_K_M,Q8_0)\n"
    "  --context N        tokens in the KV cache per sequence (default 4096; 8k, 128k)\n"
    "  --prompt N         prompt length for the prefill rate (default: the context, less\n"
    "                     --prompt-depth)\n"
    "  --prompt-depth N   tokens already in the KV cache when the prompt comes (earlier\n"
    "                     turns; default 0): the prompt attends to them too, and the two\n"
    "                     are at most --context\n"
    "  --batch N          sequences decoded together (default 1)\n"
    "  --spread           one copy of the model over every device (default: the fewest\n"
    "                     devices that hold it, copied over the rest)\n"
    "  --allow-cpu        let the plan use the CPU (never used silently)\n"
    "  --free-memory      plan on the memory free now: what each detected device has in\n"
    "                     use or not free is taken off (default: the whole memory)\n"
    "  --measure-bandwidth\n"
    "                     measure how fast this machine reads its memory (about a second,\n"
    "                     a buffer of up to 2 GiB, every usable CPU) and give the CPU that\n"
    "                     figure, so that it has a decode rate; needs --allow-cpu\n"
    "  --headroom SHARE   memory left free on each device, 5% or 0.05 (default 10%)\n"
    "  --json             print the plan as JSON\n"
    "\n"
    "exit codes: 0 it fits; 1 it fits nowhere (--json still prints the document); 2 usage error\n";

constexpr std::string_view training_help =
    "usage: ai-hwaccel training --model ID --method METHOD [options]\n"
    "\n"
    "Memory per device of fine-tuning a model (an estimate; --json: docs/cli-plan.md).\n"
    "\n"
    "  --model ID         a catalogue model\n"
    "  --method METHOD    full, lora, qlora, prefix, dpo, rlhf or distillation\n"
    "  --policy P         how dpo/rlhf/distillation train the policy: full (default), lora, qlora\n"
    "  --seq N            tokens per sequence (default 2048)\n"
    "  --batch N          micro-batch (default 1)\n"
    "  --devices N        data-parallel devices (default 1)\n"
    "  --zero 0-3         ZeRO/FSDP stage (default 0)\n"
    "  --rank R           LoRA rank (default 16; lora and qlora only)\n"
    "  --checkpointing    recompute activations\n"
    "  --optimizer NAME   adamw (default), adamw_8bit, sgd, sgd_momentum\n"
    "  --device NAME      also say whether it fits that catalogue device (--memory SIZE as for\n"
    "                     estimate)\n"
    "  --json             print the estimate as JSON\n"
    "\n"
    "exit codes: 0 done (and fits --device); 1 it does not fit --device; 2 usage error\n";

constexpr std::string_view cost_help =
    "usage: ai-hwaccel cost --model ID --quant FORMAT [options]\n"
    "\n"
    "The cheapest cloud instance in the catalogue that holds the model, with the price's date\n"
    "and source (an estimate; --json: docs/cli-plan.md).\n"
    "\n"
    "  --model ID         a catalogue model\n"
    "  --quant FORMAT     as for estimate\n"
    "  --context N        tokens in the KV cache per sequence (default 4096; 8k, 128k)\n"
    "  --batch N          sequences decoded together (default 1)\n"
    "  --objective hour|tokens   cheapest per hour (default) or per output token\n"
    "  --all              list every instance with its fit and cost\n"
    "  --provider LIST    only these providers (aws, gcp, azure, lambda, coreweave, oci)\n"
    "  --since DATE       only rows whose price is dated DATE (YYYY-MM-DD) or later\n"
    "  --headroom SHARE   memory left free on each accelerator, 5% or 0.05 (default 10%)\n"
    "  --json             print the answer as JSON\n"
    "\n"
    "exit codes: 0 an instance holds it; 1 none does; 2 usage error\n";

// --- numbers -----------------------------------------------------------------------------

/// A whole number in [lo, hi], digits only.
bool parse_whole(std::string_view s, std::uint64_t lo, std::uint64_t hi, std::uint64_t& v) {
    if (s.empty() || s.size() > 20) return false;
    for (char c : s)
        if (c < '0' || c > '9') return false;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    return r.ec == std::errc{} && r.ptr == s.data() + s.size() && v >= lo && v <= hi;
}

/// A finite decimal number, spaces around it allowed, followed by one of `suffixes` or by
/// none (`*suffix` says which: empty for none). The suffix must follow a number.
std::optional<double> parse_decimal(std::string_view s, std::initializer_list<std::string_view> suffixes,
                                    std::string_view* suffix = nullptr) {
    std::string_view t = ah::detail::trim(s), found;
    for (std::string_view u : suffixes)
        if (t.size() > u.size() && t.ends_with(u)) {
            t = ah::detail::trim(t.substr(0, t.size() - u.size()));
            found = u;
            break;
        }
    if (suffix) *suffix = found;
    double x = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), x);
    if (ec != std::errc{} || t.empty() || end != t.data() + t.size() || !std::isfinite(x)) return std::nullopt;
    return x;
}

/// Tokens: "4096", or a whole number of binary thousands "8k" / "128K" (x 1024).
bool parse_tokens(std::string_view s, std::uint64_t lo, std::uint64_t hi, std::uint64_t& v) {
    std::uint64_t mul = 1;
    if (!s.empty() && (s.back() == 'k' || s.back() == 'K')) {
        mul = 1024;
        s.remove_suffix(1);
    }
    std::uint64_t n = 0;
    if (!parse_whole(s, 0, hi, n)) return false;
    if (n > hi / mul) return false;
    v = n * mul;
    return v >= lo;
}

/// A parameter count: "8030261248", "7e9", "70B", "1.5b", "405B", "500M", "1.8T" (decimal
/// K, M, B, T). The result must be a positive whole number of parameters.
bool parse_parameters(std::string_view s, std::uint64_t& v) {
    double mul = 1;
    if (!s.empty()) {
        switch (s.back()) {
        case 'k': case 'K': mul = 1e3; break;
        case 'm': case 'M': mul = 1e6; break;
        case 'b': case 'B': mul = 1e9; break;
        case 't': case 'T': mul = 1e12; break;
        default: break;
        }
        if (mul != 1) s.remove_suffix(1);
    }
    // digits [. digits] [e [+] digits], nothing else (no sign, no hex, no inf/nan).
    std::size_t i = 0, digits = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++digits;
    if (i < s.size() && s[i] == '.') {
        ++i;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++digits;
    }
    if (digits == 0) return false;
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        if (mul != 1) return false; // "7e9B" is nobody's number
        ++i;
        if (i < s.size() && s[i] == '+') ++i;
        const std::size_t start = i;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
        if (i == start) return false;
    }
    if (i != s.size() || s.size() > 40) return false;
    const std::string text(s);
    char* end = nullptr;
    const double d = std::strtod(text.c_str(), &end) * mul;
    if (end != text.c_str() + text.size() || !(d >= 1) || d > 1e15) return false;
    const double whole = std::round(d);
    if (std::fabs(d - whole) > 1e-6 * d) return false; // "1.5" parameters
    v = static_cast<std::uint64_t>(whole);
    return true;
}

/// A memory size: bytes ("85899345920"), or a number with a unit: KB, MB, GB, TB
/// (decimal) or KiB, MiB, GiB, TiB (binary), case-insensitive ("192GiB", "64 GB", "1.5TB").
bool parse_size(std::string_view s, std::uint64_t& v) {
    std::size_t i = 0, digits = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++digits;
    if (i < s.size() && s[i] == '.') {
        ++i;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++digits;
    }
    if (digits == 0 || i > 30) return false;
    const std::string number(s.substr(0, i));
    std::string_view unit = s.substr(i);
    while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
    double mul = 0;
    constexpr std::pair<std::string_view, double> units[] = {
        {"", 1},         {"b", 1},         {"kb", 1e3},         {"mb", 1e6},          {"gb", 1e9},
        {"tb", 1e12},    {"kib", 1024.0},  {"mib", 1048576.0},  {"gib", 1073741824.0}, {"tib", 1099511627776.0}};
    for (const auto& [name, m] : units)
        if (ah::detail::iequals(unit, name)) mul = m;
    if (mul == 0) return false;
    if (mul == 1 && number.find('.') != std::string::npos) return false; // "1.5" or "1.5 B": no fraction of a byte
    const double d = std::strtod(number.c_str(), nullptr) * mul;
    if (!(d >= 1) || d > 1e18) return false;
    v = static_cast<std::uint64_t>(d);
    return true;
}

// --- names -------------------------------------------------------------------------------

std::string loose_key(std::string_view s) {
    std::string k;
    for (char c : s)
        if (!ah::detail::loose_ignored(c)) k += ah::detail::ascii_lower(c);
    return k;
}

/// Edits from a to b: insertions, deletions, substitutions, and swaps of two neighbours
/// ("4009" for "4090" is one typo, not two), each counting one.
std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> before(b.size() + 1), prev(b.size() + 1), row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            row[j] = std::min({prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                row[j] = std::min(row[j], before[j - 2] + 1);
        }
        std::swap(before, prev);
        std::swap(prev, row);
    }
    return prev[b.size()];
}

/// Names close to `query` among `names` (each entry: the name shown, then the spellings it
/// answers to): first those sharing words with the query (words with digits count
/// double: "4090" says more than "rtx"), else those a few typos away.
std::vector<std::string_view> close_names(std::string_view query,
                                          const std::vector<std::pair<std::string_view, std::vector<std::string_view>>>& names,
                                          std::size_t limit = 5) {
    std::vector<std::string> words;
    std::string w;
    for (std::size_t i = 0; i <= query.size(); ++i) {
        const char c = i < query.size() ? query[i] : ' ';
        const bool alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
        if (alnum) w += ah::detail::ascii_lower(c);
        else if (!w.empty()) {
            if (w.size() >= 2 || (w[0] >= '0' && w[0] <= '9')) words.push_back(w);
            w.clear();
        }
    }
    struct scored {
        std::string_view name;
        std::size_t score;
        std::size_t distance = 0; // tie-break: fewest edits from the query
    };
    const auto q = loose_key(query);
    auto distance = [&](const std::vector<std::string_view>& spellings) {
        std::size_t best = ~std::size_t{0};
        // A query far longer than any name is no typo of one; measuring it against every
        // spelling (quadratic) would keep a pasted paragraph busy for a minute.
        if (q.size() > 100) return best;
        for (auto sp : spellings) {
            best = std::min(best, edit_distance(q, loose_key(sp)));
            best = std::min(best, edit_distance(q, loose_key(ah::detail::without_vendor_prefix(sp))));
        }
        return best;
    };
    std::vector<scored> hits;
    for (const auto& [shown, spellings] : names) {
        std::size_t score = 0;
        // The whole query inside a name ("gaudi3" in "Intel Gaudi 3 HL-325L") says most.
        if (q.size() >= 3 && std::any_of(spellings.begin(), spellings.end(), [&](std::string_view sp) {
                return loose_key(sp).find(q) != std::string::npos;
            }))
            score += 3;
        for (const auto& word : words) {
            bool found = false;
            for (auto sp : spellings) found = found || ah::detail::icontains(sp, word);
            if (found) score += std::any_of(word.begin(), word.end(), [](char c) { return c >= '0' && c <= '9'; }) ? 2 : 1;
        }
        if (score > 0) hits.push_back({shown, score, distance(spellings)});
    }
    if (hits.empty()) {
        const std::size_t budget = std::max<std::size_t>(2, q.size() / 3);
        for (const auto& [shown, spellings] : names) {
            const std::size_t best = distance(spellings);
            if (best <= budget) hits.push_back({shown, 1, best});
        }
    }
    std::stable_sort(hits.begin(), hits.end(), [](const scored& a, const scored& b) {
        return a.score != b.score ? a.score > b.score : a.distance < b.distance;
    });
    std::vector<std::string_view> out;
    for (const auto& h : hits) {
        if (out.size() == limit) break;
        out.push_back(h.name);
    }
    return out;
}

std::string join_quoted(const std::vector<std::string_view>& v) {
    std::string s;
    for (auto x : v) s += (s.empty() ? "\"" : ", \"") + str(x) + "\"";
    return s;
}

/// The catalogue row NAME names, or an error message listing close names.
const ah::device_spec* resolve_device(std::string_view name, std::string& why) {
    if (const auto* d = ah::find_device(name)) return d;
    std::vector<std::pair<std::string_view, std::vector<std::string_view>>> names;
    for (const auto& row : ah::device_catalogue) {
        std::vector<std::string_view> sp{row.name};
        for (const auto& a : row.aliases)
            if (!a.empty()) sp.push_back(a);
        names.emplace_back(row.name, std::move(sp));
    }
    const auto close = close_names(name, names);
    // A query that several names contain ("H100", "MI300") is not unknown but ambiguous.
    const auto q = loose_key(name);
    std::vector<std::string_view> containing;
    for (const auto& [shown, spellings] : names)
        if (q.size() >= 2 && std::any_of(spellings.begin(), spellings.end(), [&](std::string_view sp) {
                return loose_key(sp).find(q) != std::string::npos;
            }))
            containing.push_back(shown);
    if (containing.size() >= 2) {
        const std::size_t all = containing.size();
        if (all > 5) containing.resize(5);
        why = "device '" + str(name) + "' could be any of " + std::to_string(all) + " catalogue devices: " +
              join_quoted(containing) + (all > containing.size() ? ", ..." : "") +
              "; give one of them (see `ai-hwaccel catalogue`)";
        return nullptr;
    }
    why = "unknown device '" + str(name) + "'";
    why += close.empty() ? "; no catalogue name is close (see `ai-hwaccel catalogue`)"
                         : "; close catalogue names: " + join_quoted(close) + " (see `ai-hwaccel catalogue`)";
    return nullptr;
}

const ah::model_spec* resolve_catalogue_model(std::string_view name, std::string& why) {
    if (const auto* m = ah::find_model(name)) return m;
    std::vector<std::pair<std::string_view, std::vector<std::string_view>>> names;
    for (const auto& row : ah::model_catalogue) names.emplace_back(row.id, std::vector<std::string_view>{row.id, row.name});
    const auto close = close_names(name, names);
    std::string known;
    for (const auto& row : ah::model_catalogue) known += (known.empty() ? "" : ", ") + str(row.id);
    why = "unknown model '" + str(name) + "'";
    why += close.empty() ? "; known models: " + known
                         : "; close model ids: " + join_quoted(close) + " (see `ai-hwaccel models`)";
    return nullptr;
}

bool resolve_quant(std::string_view name, ah::quant_format& q, std::string& why) {
    if (const auto f = ah::parse_quant_format(name)) {
        q = *f;
        return true;
    }
    std::string known;
    for (const auto& row : ah::quant_table) known += (known.empty() ? "" : ", ") + str(row.name);
    why = "unknown quantization format '" + str(name) + "' (known: " + known + ")";
    return false;
}

/// estimate's --quant: one format, several comma-separated (repeats dropped), or `all`:
/// every format of the table, most bits per weight first (table order among equals).
/// plan's list (`plan` set) is the candidates of its automatic choice: `all` is a name
/// there like any other, and `auto` inside a list is refused with plan's words.
bool resolve_quant_list(std::string_view value, std::vector<ah::quant_format>& out, std::string& why,
                        bool plan = false) {
    out.clear();
    if (!plan && ah::detail::iequals(ah::detail::trim(value), "all")) {
        const auto& by_bits = ah::detail::shard::formats_by_bits; // sorted at compile time
        out.assign(by_bits.begin(), by_bits.end());
        return true;
    }
    const auto list = ah::parse_quant_list(value);
    if (ah::detail::iequals(list.unknown, "auto")) {
        why = plan ? "--quant: auto chooses among every format; a list names the formats to choose among, so "
                     "give one or the other"
                   : "estimate takes formats, not auto; for the best one that fits, run `ai-hwaccel plan "
                     "--device NAME [--count N] --model ID` (its --quant is auto by default), or compare them "
                     "all with --quant all";
        return false;
    }
    ah::quant_format q{};
    if (!list.unknown.empty()) return resolve_quant(list.unknown, q, why); // false, with the known names
    if (list.formats.empty()) {
        why = plan ? "--quant: no format given (e.g. Q4_K_M, or Q4_K_M,Q8_0, or auto)"
                   : "--quant: no format given (e.g. Q4_K_M, or Q4_K_M,Q8_0, or all)";
        return false;
    }
    out.assign(list.formats.begin(), list.formats.end());
    return true;
}

/// --model ID, or --params N [--layers N] [--hidden N] [--heads N] [--kv-heads N] [--vocab N].
/// Without both --layers and --hidden the rest of the shape is assumed (the catalogue's
/// typical proportions for the size: ah::assume_dense_shape, ah::shape_is_assumed).
bool resolve_model(const options& o, bool allow_custom, ah::model_spec& m, std::string& why) {
    const bool custom = o.has("--params") || o.has("--layers") || o.has("--hidden") || o.has("--heads") ||
                        o.has("--kv-heads") || o.has("--vocab");
    if (auto id = o.get("--model")) {
        if (custom) {
            why = "--model cannot be combined with --params, --layers, --hidden, --heads, --kv-heads or --vocab";
            return false;
        }
        const auto* row = resolve_catalogue_model(*id, why);
        if (!row) return false;
        m = *row;
        return true;
    }
    if (!allow_custom || !custom) {
        why = allow_custom ? "give --model ID, or --params N [--layers N --hidden N]" : "--model ID is required";
        return false;
    }
    if (!o.has("--params")) {
        why = "a model described by hand needs --params (and, for its own shape, --layers and --hidden)";
        return false;
    }
    const bool shaped = o.has("--layers") && o.has("--hidden");
    if (!shaped && (o.has("--heads") || o.has("--kv-heads"))) {
        why = "--heads and --kv-heads need --layers and --hidden";
        return false;
    }
    std::uint64_t params = 0, layers = 0, hidden = 0, heads = 0, kv = 0, vocab = 0;
    if (!parse_parameters(*o.get("--params"), params)) {
        why = "--params: '" + str(*o.get("--params")) + "' is not a parameter count (e.g. 70B, 7e9, 8030261248)";
        return false;
    }
    const std::uint64_t u32 = 0xffffffffu;
    if (auto l = o.get("--layers"); l && !parse_whole(*l, 1, 100000, layers)) {
        why = "--layers: '" + str(*l) + "' is not a whole number from 1 to 100000";
        return false;
    }
    if (auto h = o.get("--hidden"); h && !parse_whole(*h, 1, 1u << 24, hidden)) {
        why = "--hidden: '" + str(*h) + "' is not a whole number from 1 to 16777216";
        return false;
    }
    if (auto v = o.get("--vocab"); v && !parse_whole(*v, 1, u32, vocab)) {
        why = "--vocab: '" + str(*v) + "' is not a whole number from 1 to 4294967295";
        return false;
    }
    if (!shaped) {
        m = ah::assume_dense_shape(params, static_cast<std::uint32_t>(layers), static_cast<std::uint32_t>(hidden));
        m.id = "custom";
        m.name = "custom model";
        m.family = "custom";
        m.vocab_size = static_cast<std::uint32_t>(vocab);
        return true;
    }
    if (auto h = o.get("--heads")) {
        if (!parse_whole(*h, 1, hidden, heads) || hidden % heads != 0) {
            why = "--heads: '" + str(*h) + "' is not a whole number that divides --hidden";
            return false;
        }
    } else {
        // Head dimension 128 (64, else one head) when not given. With --kv-heads left
        // out too the KV cache does not depend on this choice (2 x hidden values per token
        // and layer); it only sets the widest tensor-parallel split.
        heads = hidden % 128 == 0 ? hidden / 128 : hidden % 64 == 0 ? hidden / 64 : 1;
    }
    kv = heads;
    if (auto k = o.get("--kv-heads")) {
        if (!parse_whole(*k, 1, heads, kv) || heads % kv != 0) {
            why = "--kv-heads: '" + str(*k) + "' is not a whole number that divides the attention heads (" +
                  std::to_string(heads) + ")";
            return false;
        }
    }
    m = ah::model_spec{};
    m.id = "custom";
    m.name = "custom model";
    m.family = "custom";
    m.parameters = params;
    m.active_parameters = params;
    m.layers = static_cast<std::uint32_t>(layers);
    m.hidden_size = static_cast<std::uint32_t>(hidden);
    m.attention_heads = static_cast<std::uint32_t>(heads);
    m.kv_heads = static_cast<std::uint32_t>(kv);
    m.head_dim = static_cast<std::uint32_t>(hidden / heads);
    m.vocab_size = static_cast<std::uint32_t>(vocab);
    return true;
}

// A numeric option with its default. False with a message when given and bad.
bool tokens_option(const options& o, std::string_view name, std::uint64_t def, std::uint64_t& v, std::string& why,
                   std::uint64_t lo = 1) {
    v = def;
    const auto s = o.get(name);
    if (!s) return true;
    if (parse_tokens(*s, lo, 1u << 24, v)) return true;
    why = str(name) + ": '" + str(*s) + "' is not a token count from " + std::to_string(lo) +
          " to 16777216 (e.g. 4096, 8k, 128k)";
    return false;
}
// A context past what the model was trained for is planned all the same (runtimes extend
// it with RoPE scaling), with a note on stderr, so stdout and --json stay as they are.
void note_context(std::uint64_t context, const ah::model_spec& m) {
    if (m.context_length == 0 || context <= m.context_length) return;
    std::fprintf(stderr, "note: a context of %llu tokens is past the %u tokens %.*s was trained for\n",
                 static_cast<unsigned long long>(context), m.context_length, len(m.name), m.name.data());
}
// --prompt-depth, then --prompt: the tokens cached before the prompt (default 0), and the
// prompt length of the prefill rate; both are held in the KV cache, so together at most the
// context. An absent --prompt is `def`, at most what the depth leaves of the context.
bool prompt_options(const options& o, std::uint64_t context, std::uint64_t def, std::uint64_t& prompt,
                    std::uint64_t& depth, std::string& why) {
    if (!tokens_option(o, "--prompt-depth", 0, depth, why, 0)) return false;
    if (depth >= context) {
        why = "--prompt-depth (" + std::to_string(depth) + ") leaves no room in --context (" +
              std::to_string(context) + ") for a prompt";
        return false;
    }
    if (!tokens_option(o, "--prompt", std::min(def, context - depth), prompt, why)) return false;
    if (prompt + depth <= context) return true;
    why = "--prompt (" + std::to_string(prompt) + ")" +
          (depth ? " after --prompt-depth (" + std::to_string(depth) + ")" : std::string()) + " exceeds --context (" +
          std::to_string(context) + "): the prompt is held in the KV cache";
    return false;
}
// " after N cached", or nothing for a prompt from an empty cache.
std::string after_cached(std::uint64_t depth) {
    return depth ? " after " + std::to_string(depth) + " cached" : std::string();
}
bool whole_option(const options& o, std::string_view name, std::uint64_t def, std::uint64_t lo, std::uint64_t hi,
                  std::uint64_t& v, std::string& why) {
    v = def;
    const auto s = o.get(name);
    if (!s) return true;
    if (parse_whole(*s, lo, hi, v)) return true;
    why = str(name) + ": '" + str(*s) + "' is not a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
    return false;
}

// --headroom: the share of each device's memory a plan leaves free, as a percentage ("5%")
// or a fraction ("0.05"); `v` keeps the planner's default when the option is absent.
bool headroom_option(const options& o, double& v, std::string& why) {
    const auto s = o.get("--headroom");
    if (!s) return true;
    std::string_view unit;
    if (auto x = parse_decimal(*s, {"%"}, &unit)) {
        if (unit == "%") *x /= 100;
        if (*x >= 0 && *x < 1) {
            v = *x + 0.0; // "-0" is 0, not a negative zero in the text and JSON
            return true;
        }
    }
    why = "--headroom: '" + str(*s) + "' is not a share of memory from 0 to below 1 (e.g. 5% or 0.05)";
    return false;
}

// --- devices -----------------------------------------------------------------------------

/// `count` profiles of one catalogue device, and the links that join them as the device is
/// built into machines (`catalogue_links`): its own link where it has one faster than PCIe
/// (NVLink, XGMI, …), in groups of its link domain (bridged pairs, 8-GPU boards); PCIe
/// otherwise and between the groups, which is what the planner assumes between devices
/// no link lists, so no entry is needed for it.
struct described {
    std::vector<ah::accelerator_profile> devices;
    std::vector<ah::interconnect> links;
    ah::interconnect_kind link = ah::interconnect_kind::pcie;
    std::size_t group = 0; ///< the most devices one link joins; 0 with no link

    /// "nvlink", "nvlink in groups of 8, PCIe between them", "pcie".
    [[nodiscard]] std::string link_text() const {
        std::string s(ah::to_string(link));
        if (links.size() > 1 || (group != 0 && group < devices.size()))
            s += " in groups of " + std::to_string(group) + ", PCIe between them";
        return s;
    }
};
described describe_devices(const ah::device_spec& spec, std::uint32_t count, std::uint64_t memory = 0,
                           double bandwidth_gbps = 0) {
    described d;
    for (std::uint32_t i = 0; i < count; ++i) {
        auto p = ah::profile_from_spec(spec, i);
        if (memory) p.memory_bytes = {memory, ah::origin::user};
        if (bandwidth_gbps > 0) p.memory_bandwidth_gbps = {bandwidth_gbps, ah::origin::user};
        // A row that states no peak at all (Apple publishes almost none) leaves the peaks
        // unknown (profile_from_spec's apply_spec), so the planner lets runtimes that
        // dequantize (llama.cpp's Metal backend) run on it.
        d.devices.push_back(p);
    }
    d.links = ah::catalogue_links(spec, count);
    if (!d.links.empty()) {
        d.link = spec.link;
        d.group = d.links.front().devices.size();
    }
    return d;
}

/// --memory SIZE: per-device memory for a catalogue row that gives none (unified memory
/// configured per machine) or to override it. 0 when not given. False with a message when
/// bad, or when the device needs it and it is missing (`required`).
bool memory_option(const options& o, const ah::device_spec& spec, bool required, std::uint64_t& v, std::string& why) {
    v = 0;
    if (auto s = o.get("--memory")) {
        if (parse_size(*s, v)) return true;
        why = "--memory: '" + str(*s) + "' is not a memory size (e.g. 192GiB, 64GB, 85899345920)";
        return false;
    }
    if (required && spec.memory_bytes == 0) {
        why = "the catalogue gives no memory size for " + str(spec.name) +
              " (its memory is configured per machine): give --memory SIZE (e.g. 192GiB)";
        return false;
    }
    return true;
}

/// --bandwidth GBPS: per-device memory bandwidth in decimal GB/s (a "GB/s" suffix is
/// allowed), for a catalogue row that gives none or to override it. 0 when not given.
bool bandwidth_option(const options& o, double& v, std::string& why) {
    v = 0;
    const auto s = o.get("--bandwidth");
    if (!s) return true;
    const auto x = parse_decimal(*s, {"GB/s", "gb/s", "GBps"});
    if (!x || !(*x >= 0.001) || !(*x <= 1e6)) {
        why = "--bandwidth: '" + str(*s) + "' is not a bandwidth in GB/s from 0.001 to 1000000 (e.g. 68.25)";
        return false;
    }
    v = *x;
    return true;
}

// --- output helpers ----------------------------------------------------------------------

/// `v` to the nearest multiple of `unit` (0.01, 0.0001: a power of ten below 1), as the
/// double nearest that decimal, so that JSON prints 4616.73 and not 4616.7300000000005:
/// dividing a whole number of hundredths by 100 rounds once, where multiplying it by the
/// inexact 0.01 could land on a neighbour of the nearest double.
[[maybe_unused]] double rounded(double v, double unit) {
    const double per_one = std::round(1 / unit);
    return std::round(v * per_one) / per_one;
}
// A known rate never shows as 0: below 0.05 tok/s (a 405B model on a CPU) two significant
// digits.
std::string rate(double v) { return v > 0 ? fmt(v < 0.05 ? "%.2g tok/s" : "%.1f tok/s", v) : std::string("unknown"); }
// A rate the plan could not estimate, with the figure its first device lacks: decode
// follows the memory bandwidth, prefill the peak compute rate.
std::string rate_or_why(double v, const ah::shard_plan& p, std::span<const ah::accelerator_profile> devices,
                        bool decode) {
    if (v > 0) return rate(v);
    for (const auto& s : p.devices) {
        const auto& d = devices[s.device];
        if (decode && !d.memory_bandwidth_gbps)
            return "unknown (no memory bandwidth is known for " + str(d.name.view()) + ")" +
                   (d.is_cpu() ? "; --measure-bandwidth measures it" : "");
        if (!decode && d.peak_from == ah::origin::none)
            return "unknown (no peak compute rate is known for " + str(d.name.view()) + ")";
    }
    return "unknown";
}
/// "46.70 B parameters", and for a mixture of experts what one token reads:
/// "46.70 B parameters (12.88 B active: 2 of 8 experts per token)".
std::string params_text(const ah::model_spec& m) {
    std::string out = fmt("%.2f B parameters", static_cast<double>(m.parameters) / 1e9);
    if (m.is_moe() && m.parameters_per_token() != m.parameters)
        out += fmt(" (%.2f B active: ", static_cast<double>(m.active_parameters) / 1e9) +
               std::to_string(m.experts_per_token) + " of " + std::to_string(m.experts) + " experts per token)";
    return out;
}

// The model line of estimate, plan and training: name, id, parameters.
void print_model(const ah::model_spec& m) {
    std::printf("model: %.*s (%.*s), %s\n", len(m.name), m.name.data(), len(m.id), m.id.data(), params_text(m).c_str());
}

void print_memory(const ah::memory_estimate& m) {
    std::printf("memory: weights %s, KV cache %s, overhead %s, total %s\n", fmt_bytes(m.weights_bytes).c_str(),
                fmt_bytes(m.kv_cache_bytes).c_str(), fmt_bytes(m.overhead_bytes).c_str(),
                fmt_bytes(m.total_bytes()).c_str());
}

#if AI_HWACCEL_JSON
nlohmann::json memory_json(const ah::memory_estimate& m) {
    return {{"weights_bytes", m.weights_bytes},
            {"kv_cache_bytes", m.kv_cache_bytes},
            {"overhead_bytes", m.overhead_bytes},
            {"total_bytes", m.total_bytes()}};
}
// Rates: a number rounded to 0.01 (one below 0.01 as it is, never 0), or null when unknown
// (or no plan).
nlohmann::json rate_json(double v) {
    return v > 0 ? nlohmann::json(v < 0.01 ? v : rounded(v, 0.01)) : nlohmann::json(nullptr);
}
// A plan's link: {kind, gbps one direction}, null where the plan has none.
nlohmann::json link_json(const ah::plan_link& l) {
    if (l.kind == ah::interconnect_kind::none) return nullptr;
    return {{"kind", ah::to_string(l.kind)}, {"gbps", l.gbps}};
}
#endif

std::string strategy_text(const ah::shard_plan& p) {
    std::string s(ah::to_string(p.strategy));
    if (!p.fits) return s;
    s += ": " + std::to_string(p.devices.count / (p.replicas ? p.replicas : 1)) + " device(s) per replica";
    s += " (tensor-parallel " + std::to_string(p.tensor_parallel) + ", " + std::to_string(p.stages) + " stage(s))";
    if (p.replicas > 1) s += ", " + std::to_string(p.replicas) + " data-parallel replicas";
    if (p.tensor_parallel > 1 && p.tensor_link.kind != ah::interconnect_kind::none)
        s += "; tensor link " + str(ah::to_string(p.tensor_link.kind)) + fmt(" %.0f GB/s", p.tensor_link.gbps);
    if (p.stages > 1 && p.pipeline_link.kind != ah::interconnect_kind::none)
        s += "; pipeline link " + str(ah::to_string(p.pipeline_link.kind)) + fmt(" %.0f GB/s", p.pipeline_link.gbps);
    return s;
}

// --- estimate ----------------------------------------------------------------------------

/// The fits cell of estimate's format table: "yes", or "no: " and a word for the reason
/// (the lines below the table spell out each reason shown).
std::string_view fits_cell(ah::plan_outcome o) {
    switch (o) {
    case ah::plan_outcome::fits: return "yes";
    case ah::plan_outcome::too_large: return "no: memory";
    case ah::plan_outcome::unsupported_format: return "no: format";
    case ah::plan_outcome::no_devices: return "no: devices";
    case ah::plan_outcome::bad_model: return "no: model";
    }
    return "no";
}

/// "tensor_parallel 8", "pipeline_parallel 2" (stages), "tensor_pipeline 8x2",
/// "single_device"; data-parallel copies, where a plan has them, as " x3".
std::string strategy_cell(const ah::shard_plan& p) {
    if (!p.fits) return "-";
    std::string s(ah::to_string(p.strategy));
    if (p.tensor_parallel > 1 && p.stages > 1)
        s += " " + std::to_string(p.tensor_parallel) + "x" + std::to_string(p.stages);
    else if (p.tensor_parallel > 1)
        s += " " + std::to_string(p.tensor_parallel);
    else if (p.stages > 1)
        s += " " + std::to_string(p.stages);
    if (p.replicas > 1) s += " x" + std::to_string(p.replicas);
    return s;
}

int cmd_estimate(std::span<const std::string_view> args) {
    options o;
    std::string why;
    if (!parse_options(args, "estimate",
                       {{"--device"}, {"--count"}, {"--model"}, {"--params"}, {"--layers"}, {"--hidden"}, {"--heads"},
                        {"--kv-heads"}, {"--vocab"}, {"--quant"}, {"--context"}, {"--prompt"}, {"--prompt-depth"},
                        {"--batch"}, {"--memory"}, {"--bandwidth"}, {"--headroom"}, {"--json", false}},
                       o, why))
        return usage_error(why);
    if (!o.has("--device")) return usage_error("estimate needs --device NAME (see `ai-hwaccel catalogue`)");
    if (!o.has("--quant"))
        return usage_error("estimate needs --quant FORMAT (e.g. Q4_K_M, Q8_0, bf16, fp8; several, comma-separated; "
                           "or all)");
    const auto* spec = resolve_device(*o.get("--device"), why);
    if (!spec) return usage_error(why);
    ah::model_spec m;
    if (!resolve_model(o, true, m, why)) return usage_error(why);
    const bool assumed = ah::shape_is_assumed(m);
    std::vector<ah::quant_format> formats;
    if (!resolve_quant_list(*o.get("--quant"), formats, why)) return usage_error(why);
    // One format prints the estimate; several (or all) a table with a row for each.
    const bool table = formats.size() > 1 || ah::detail::iequals(ah::detail::trim(*o.get("--quant")), "all");
    std::uint64_t count = 0, context = 0, prompt = 0, depth = 0, batch = 0;
    if (!whole_option(o, "--count", 1, 1, ah::max_plan_devices, count, why) ||
        !tokens_option(o, "--context", 4096, context, why) || !prompt_options(o, context, 512, prompt, depth, why) ||
        !whole_option(o, "--batch", 1, 1, 65536, batch, why))
        return usage_error(why);
    note_context(context, m);

    std::uint64_t memory = 0;
    if (!memory_option(o, *spec, true, memory, why)) return usage_error(why);
    double bandwidth = 0;
    if (!bandwidth_option(o, bandwidth, why)) return usage_error(why);
    ah::plan_options po;
    if (!headroom_option(o, po.memory_headroom, why)) return usage_error(why);
    const auto d = describe_devices(*spec, static_cast<std::uint32_t>(count), memory, bandwidth);
    po.spread = true; // one replica over all the devices given
    const ah::inference_shape shape{.context = static_cast<std::uint32_t>(context),
                                    .batch = static_cast<std::uint32_t>(batch),
                                    .prompt = static_cast<std::uint32_t>(prompt),
                                    .prompt_depth = static_cast<std::uint32_t>(depth)};
    std::uint64_t usable = 0; // what the planner may use of the devices' memory
    for (const auto& p : d.devices) usable = ah::detail::sat_add(usable, ah::usable_memory(p, po)); // as the planner sums

    struct estimated {
        ah::quant_format quant;
        ah::shard_plan plan;
        ah::memory_estimate memory;
        std::string reason; ///< why it does not fit; empty when it does
    };
    std::vector<estimated> rows;
    rows.reserve(formats.size());
    for (const auto q : formats) {
        auto plan = ah::plan_sharding(d.devices, d.links, m, q, shape, po);
        auto reason = plan.fits ? std::string() : str(ah::describe(plan.outcome));
        rows.push_back({q, std::move(plan), ah::estimate_memory(m, q, shape), std::move(reason)});
    }
    const bool any_fits = std::any_of(rows.begin(), rows.end(), [](const estimated& r) { return r.plan.fits; });

    if (o.has("--json")) {
#if AI_HWACCEL_JSON
        nlohmann::json j;
        j["device"] = spec->name;
        j["count"] = count;
        j["device_memory_bytes"] = d.devices.front().memory_bytes.value_or(0);
        j["link"] = count > 1 ? ah::to_string(d.link) : "none";
        j["link_group"] = d.group;
        j["model"] = m.id;
        j["parameters"] = m.parameters;
        j["active_parameters"] = m.parameters_per_token();
        j["shape"] = {{"layers", m.layers},
                      {"hidden_size", m.hidden_size},
                      {"attention_heads", m.attention_heads},
                      {"kv_heads", m.kv_heads ? m.kv_heads : m.attention_heads},
                      {"latent_kv_values", m.latent_kv_cache ? m.kv_values_per_token_per_layer : 0},
                      {"assumed", assumed}};
        j["context"] = context;
        j["prompt"] = prompt;
        j["prompt_depth"] = depth;
        j["batch"] = batch;
        j["usable_bytes"] = usable;
        j["memory_headroom"] = po.memory_headroom;
        j["estimate"] = true;
        // A format's own fields: at the top for one format, one object each under
        // "formats" for several (schema/estimates.schema.json).
        auto put = [](nlohmann::json& f, const estimated& r) {
            f["quant"] = ah::to_string(r.quant);
            f["decode_tokens_per_second"] = rate_json(r.plan.fits ? r.plan.decode_tokens_per_second : 0);
            f["prefill_tokens_per_second"] = rate_json(r.plan.fits ? r.plan.prefill_tokens_per_second : 0);
            f["memory"] = memory_json(r.memory);
            f["fits"] = r.plan.fits;
            f["strategy"] = ah::to_string(r.plan.strategy);
            f["tensor_parallel"] = r.plan.tensor_parallel;
            f["stages"] = r.plan.stages;
            f["reason"] = r.plan.fits ? nlohmann::json(nullptr) : nlohmann::json(r.reason);
        };
        if (table) {
            auto& list = j["formats"] = nlohmann::json::array();
            for (const auto& r : rows) {
                nlohmann::json f;
                put(f, r);
                f["bits_per_weight"] = ah::bits_per_weight(r.quant);
                list.push_back(std::move(f));
            }
        } else {
            put(j, rows.front());
        }
        print_json(j);
#else
        return no_json();
#endif
    } else {
        std::printf("device: %s%.*s\n", count > 1 ? (std::to_string(count) + " x ").c_str() : "", len(spec->name),
                    spec->name.data());
        if (count > 1) std::printf("link: %s\n", d.link_text().c_str());
        print_model(m);
        // Latent attention (DeepSeek's MLA) caches one compressed vector per token and layer,
        // not its heads' keys and values; heads whose keys and values differ in length, or
        // that differ by layer, say how many values they cache.
        const std::uint32_t kv_heads = m.kv_heads ? m.kv_heads : m.attention_heads;
        const std::string values = std::to_string(m.kv_values_per_token_per_layer) + " values per token and layer)";
        const std::string kv = m.latent_kv_cache ? "latent KV (" + values
                               : std::to_string(kv_heads) + (kv_heads == 1 ? " KV head" : " KV heads") +
                                     (m.kv_values_per_token_per_layer ? " (" + values : std::string());
        std::printf("layers: %u, hidden %u, %u attention heads, %s%s\n", m.layers, m.hidden_size, m.attention_heads,
                    kv.c_str(),
                    assumed ? " (assumed: the catalogue's typical proportions for this size; give --layers and "
                              "--hidden for the model's own)"
                            : "");
        // llama.cpp's MXFP4 files (MOSTLY_MXFP4_MOE) put only expert tensors in MXFP4.
        const bool mxfp4_dense = !m.is_moe() && std::any_of(rows.begin(), rows.end(), [](const estimated& r) {
            return r.quant == ah::quant_format::mxfp4;
        });
        const char* mxfp4_note = "MXFP4: llama.cpp's MXFP4 files keep MXFP4 for expert tensors; a dense model's "
                                 "matrices are Q8_0 in them, and sized so here";
        if (!table) std::printf("quantization: %s\n", str(ah::to_string(rows.front().quant)).c_str());
        if (!table && mxfp4_dense) std::printf("%s\n", mxfp4_note);
        std::printf("shape: context %llu tokens, prompt %llu tokens%s, batch %llu\n",
                    static_cast<unsigned long long>(context), static_cast<unsigned long long>(prompt),
                    after_cached(depth).c_str(), static_cast<unsigned long long>(batch));
        if (!table) print_memory(rows.front().memory);
        std::printf("usable memory: %s (after a %g %% headroom%s)\n", fmt_bytes(usable).c_str(),
                    po.memory_headroom * 100,
                    d.devices.front().kind == ah::device_kind::metal_gpu ? ", within Metal's working set" : "");
        if (!table) {
            const auto& plan = rows.front().plan;
            std::printf("fits: %s\n", plan.fits ? "yes" : ("no: " + rows.front().reason).c_str());
            if (plan.fits) {
                std::printf("strategy: %s\n", strategy_text(plan).c_str());
                std::printf("decode: %s%s\n", rate_or_why(plan.decode_tokens_per_second, plan, d.devices, true).c_str(),
                            plan.decode_tokens_per_second > 0 ? " per sequence" : "");
                std::printf("prefill: %s\n", rate_or_why(plan.prefill_tokens_per_second, plan, d.devices, false).c_str());
            }
        } else {
            // Memory: the whole model once (weights, its KV cache, overhead), as for one format.
            auto cell_rate = [](const estimated& r, double v) { return r.plan.fits ? rate(v) : std::string("-"); };
            std::printf("\n%-9s %6s %10s %10s %-11s %-21s %14s %15s\n", "format", "bits/w", "weights", "total", "fits",
                        "strategy", "decode/seq", "prefill");
            for (const auto& r : rows) {
                const auto format = ah::to_string(r.quant), fits = fits_cell(r.plan.outcome);
                std::printf("%-9.*s %6.2f %10s %10s %-11.*s %-21s %14s %15s\n", len(format), format.data(),
                            ah::bits_per_weight(r.quant), fmt_bytes(r.memory.weights_bytes).c_str(),
                            fmt_bytes(r.memory.total_bytes()).c_str(), len(fits), fits.data(),
                            strategy_cell(r.plan).c_str(), cell_rate(r, r.plan.decode_tokens_per_second).c_str(),
                            cell_rate(r, r.plan.prefill_tokens_per_second).c_str());
            }
            // Each reason the table abbreviates, once, in full.
            std::vector<ah::plan_outcome> said;
            for (const auto& r : rows)
                if (!r.plan.fits && std::find(said.begin(), said.end(), r.plan.outcome) == said.end()) {
                    said.push_back(r.plan.outcome);
                    const auto cell = fits_cell(r.plan.outcome);
                    std::printf("%.*s: %s\n", len(cell), cell.data(), r.reason.c_str());
                }
            std::printf("total: weights, KV cache and overhead, the whole model once\n");
            if (mxfp4_dense) std::printf("%s\n", mxfp4_note);
            for (const auto& r : rows)
                if (r.plan.fits && !(r.plan.decode_tokens_per_second > 0 && r.plan.prefill_tokens_per_second > 0)) {
                    const bool decode = !(r.plan.decode_tokens_per_second > 0);
                    std::printf("%s: %s\n", decode ? "decode" : "prefill",
                                rate_or_why(0, r.plan, d.devices, decode).c_str());
                    break;
                }
        }
        std::printf("(every figure is an estimate)\n");
    }
    if (!any_fits)
        return error("fits nowhere: " + (table ? std::string("in none of the ") + std::to_string(rows.size()) +
                                                     " formats"
                                               : rows.front().reason));
    return 0;
}

// --- plan --------------------------------------------------------------------------------

int cmd_plan(std::span<const std::string_view> args) {
    options o;
    std::string why;
    if (!parse_options(args, "plan",
                       {{"--root"}, {"--device"}, {"--count"}, {"--memory"}, {"--bandwidth"}, {"--spread", false}, {"--model"},
                        {"--quant"}, {"--context"}, {"--prompt"}, {"--prompt-depth"}, {"--batch"},
                        {"--allow-cpu", false}, {"--free-memory", false}, {"--headroom"},
                        {"--measure-bandwidth", false}, {"--json", false}},
                       o, why))
        return usage_error(why);
    if (o.has("--root") && o.has("--device")) return usage_error("--root and --device cannot be combined");
    const bool measure = o.has("--measure-bandwidth");
    if (measure && (o.has("--device") || o.has("--root")))
        return usage_error("--measure-bandwidth measures this machine's memory; it cannot be combined with " +
                           std::string(o.has("--device") ? "--device" : "--root"));
    if (measure && !o.has("--allow-cpu"))
        return usage_error("--measure-bandwidth gives the CPU a decode rate; it needs --allow-cpu");
    if (o.has("--count") && !o.has("--device")) return usage_error("--count needs --device NAME");
    if (o.has("--bandwidth") && !o.has("--device")) return usage_error("--bandwidth needs --device NAME");
    if (o.has("--memory") && !o.has("--device")) return usage_error("--memory needs --device NAME");
    if (o.has("--free-memory") && o.has("--device"))
        return usage_error("--free-memory reads the memory detected devices have in use; described devices have none");
    ah::model_spec m;
    if (!resolve_model(o, false, m, why)) return usage_error(why);
    const std::string_view quant_name = o.get("--quant").value_or("auto");
    // A list is auto over those formats only (plan_options::formats).
    std::vector<ah::quant_format> listed;
    const bool from_list = quant_name.find(',') != std::string_view::npos;
    if (from_list && !resolve_quant_list(quant_name, listed, why, true)) return usage_error(why);
    const bool automatic = from_list || ah::detail::iequals(quant_name, "auto");
    ah::quant_format q{};
    if (!automatic && !resolve_quant(quant_name, q, why)) return usage_error(why);
    std::uint64_t count = 0, context = 0, prompt = 0, depth = 0, batch = 0;
    if (!whole_option(o, "--count", 1, 1, ah::max_plan_devices, count, why) ||
        !tokens_option(o, "--context", 4096, context, why) ||
        !prompt_options(o, context, context, prompt, depth, why) || !whole_option(o, "--batch", 1, 1, 65536, batch, why))
        return usage_error(why);
    note_context(context, m);
    double headroom = ah::plan_options{}.memory_headroom;
    if (!headroom_option(o, headroom, why)) return usage_error(why);

    // The devices: described, or detected (this machine, or a captured tree with --root).
    described desc;
    ah::accelerator_registry reg;
    ah::bandwidth_measurement bandwidth;
    std::span<const ah::accelerator_profile> devices;
    std::span<const ah::interconnect> links;
    std::string source;
    if (auto name = o.get("--device")) {
        const auto* spec = resolve_device(*name, why);
        if (!spec) return usage_error(why);
        std::uint64_t memory = 0;
        if (!memory_option(o, *spec, true, memory, why)) return usage_error(why);
        double given_gbps = 0; // --bandwidth; `bandwidth` is what --measure-bandwidth measures
        if (!bandwidth_option(o, given_gbps, why)) return usage_error(why);
        desc = describe_devices(*spec, static_cast<std::uint32_t>(count), memory, given_gbps);
        devices = desc.devices;
        links = desc.links;
        source = std::to_string(count) + " x " + str(spec->name) + " (described";
        source += count > 1 ? "; link: " + desc.link_text() + ")" : ")";
    } else {
        const std::string root = str(o.get("--root").value_or(""));
        if (!root.empty()) {
            struct stat st {};
            if (::stat(root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
                return usage_error("--root: '" + root + "' is not a directory");
        }
        reg = ah::detector::all().run(ah::host_system(root));
        if (measure) {
            bandwidth = ah::measure_memory_bandwidth(ah::bandwidth_options_for(reg.host()));
            if (bandwidth.ok()) {
                reg = ah::apply_cpu_bandwidth(reg, bandwidth);
            } else {
                std::fprintf(stderr, "ai-hwaccel: note: the memory bandwidth was not measured: %s\n",
                             bandwidth.error.c_str());
            }
        }
        devices = reg.all();
        links = reg.system().interconnects;
        source = root.empty() ? "this machine (detected)" : root + " (detected)";
    }

    ah::plan_options po;
    po.memory_headroom = headroom;
    po.allow_cpu = o.has("--allow-cpu");
    po.count_memory_in_use = o.has("--free-memory");
    po.spread = o.has("--spread");
    for (const auto f : listed) po.formats.items[po.formats.count++] = f; // distinct: at most every format
    const ah::inference_shape shape{.context = static_cast<std::uint32_t>(context),
                                    .batch = static_cast<std::uint32_t>(batch),
                                    .prompt = static_cast<std::uint32_t>(prompt),
                                    .prompt_depth = static_cast<std::uint32_t>(depth)};
    // auto: the best format the planner fits on these devices and links, with its plan.
    std::optional<ah::quantization_choice> choice;
    ah::shard_plan plan;
    if (automatic) {
        const auto best = ah::plan_best_format(devices, links, m, shape, po);
        choice = best.choice;
        q = best.choice.format;
        plan = best.plan;
    } else {
        plan = ah::plan_sharding(devices, links, m, q, shape, po);
    }
    std::string reason;
    if (!plan.fits) {
        const auto outcome = choice && !choice->fits ? choice->outcome : plan.outcome;
        reason = str(ah::describe(outcome));
        // --allow-cpu is suggested only where it would make the model fit.
        if (plan.cpu_excluded || (choice && choice->cpu_excluded)) {
            auto with_cpu = po;
            with_cpu.allow_cpu = true;
            if (automatic ? ah::plan_best_format(devices, links, m, shape, with_cpu).plan.fits
                          : ah::plan_sharding(devices, links, m, q, shape, with_cpu).fits)
                reason += " (with --allow-cpu, which lets the plan use the CPU, it fits)";
        }
        if (choice && !choice->fits && outcome == ah::plan_outcome::too_large)
            reason += "; not even in " + str(ah::to_string(q)) + ", the smallest format tried";
    }

    if (o.has("--json")) {
#if AI_HWACCEL_JSON
        nlohmann::json j;
        j["devices_from"] = o.has("--device") ? "described" : "detected";
        j["model"] = m.id;
        j["parameters"] = m.parameters;
        j["active_parameters"] = m.parameters_per_token();
        j["quant"] = ah::to_string(q);
        j["quant_chosen"] = from_list ? "auto_from_list" : automatic ? "auto" : "given";
        j["spread"] = po.spread;
        j["context"] = context;
        j["prompt"] = prompt;
        j["prompt_depth"] = depth;
        j["batch"] = batch;
        j["fits"] = plan.fits;
        j["outcome"] = ah::to_string(plan.fits ? plan.outcome : (choice && !choice->fits ? choice->outcome : plan.outcome));
        j["reason"] = plan.fits ? nlohmann::json(nullptr) : nlohmann::json(reason);
        j["strategy"] = ah::to_string(plan.strategy);
        j["kind"] = plan.fits ? nlohmann::json(ah::to_string(plan.kind)) : nlohmann::json(nullptr);
        j["replicas"] = plan.replicas;
        j["stages"] = plan.stages;
        j["tensor_parallel"] = plan.tensor_parallel;
        j["decode_tokens_per_second"] = rate_json(plan.decode_tokens_per_second);
        j["aggregate_decode_tokens_per_second"] = rate_json(plan.aggregate_decode_tokens_per_second);
        j["prefill_tokens_per_second"] = rate_json(plan.prefill_tokens_per_second);
        j["decode_compute_seconds"] = plan.decode_compute_seconds;
        j["decode_tensor_seconds"] = plan.decode_tensor_seconds;
        j["decode_pipeline_seconds"] = plan.decode_pipeline_seconds;
        j["tensor_link"] = link_json(plan.tensor_link);
        j["pipeline_link"] = link_json(plan.pipeline_link);
        j["memory"] = memory_json(plan.memory);
        j["usable_bytes"] = plan.usable_bytes;
        j["largest_device_bytes"] = plan.largest_device_bytes;
        j["candidate_devices"] = plan.candidate_devices;
        j["truncated"] = plan.truncated;
        j["cpu_excluded"] = plan.cpu_excluded;
        j["free_memory"] = po.count_memory_in_use;
        j["measured_bandwidth_gbps"] = bandwidth.ok() ? nlohmann::json(rounded(bandwidth.gbps, 0.01))
                                                      : nlohmann::json(nullptr);
        j["memory_headroom"] = po.memory_headroom;
        auto& arr = j["shards"] = nlohmann::json::array();
        for (const auto& s : plan.devices) {
            const auto& dev = devices[s.device];
            arr.push_back({{"device", s.device},
                           {"index", s.index},
                           {"name", std::string(dev.name.view())},
                           {"replica", s.replica},
                           {"stage", s.stage},
                           {"tensor_rank", s.tensor_rank},
                           {"tensor_size", s.tensor_size},
                           {"first_layer", s.first_layer},
                           {"last_layer", s.last_layer},
                           {"embeddings", s.embeddings},
                           {"output_head", s.output_head},
                           {"weights_bytes", s.weights_bytes},
                           {"kv_cache_bytes", s.kv_cache_bytes},
                           {"overhead_bytes", s.overhead_bytes},
                           {"total_bytes", s.total_bytes()},
                           {"usable_bytes", s.usable_bytes},
                           {"fits", s.fits}});
        }
        j["estimate"] = true;
        print_json(j);
#else
        return no_json();
#endif
    } else {
        std::printf("devices: %s\n", source.c_str());
        if (bandwidth.ok())
            std::printf("memory bandwidth: %.1f GB/s, measured (%u thread(s) reading %s, the fastest of %u "
                        "passes; the CPU's decode rate uses it)\n",
                        bandwidth.gbps, bandwidth.threads, fmt_bytes(bandwidth.bytes_per_pass).c_str(), bandwidth.passes);
        if (bandwidth.ok() && !bandwidth.note.empty()) std::printf("note: %s\n", bandwidth.note.c_str());
        print_model(m);
        const auto format = ah::to_string(q);
        std::printf("quantization: %.*s", len(format), format.data());
        if (automatic)
            std::printf(" (%s: %s)", from_list ? "auto among the formats given" : "auto",
                        choice->fits                                    ? "the highest-quality format that fits"
                        : choice->outcome == ah::plan_outcome::too_large ? "the smallest format tried; none fits"
                        : choice->outcome == ah::plan_outcome::unsupported_format
                            ? "the smallest format; no device runs any format tried"
                            : "the smallest format; no device to try it on");
        std::printf("\n");
        std::printf("shape: context %llu tokens, batch %llu\n", static_cast<unsigned long long>(context),
                    static_cast<unsigned long long>(batch));
        print_memory(plan.memory);
        if (plan.fits) {
            std::printf("strategy: %s%s\n", strategy_text(plan).c_str(), po.spread ? " (spread over every device)" : "");
            std::printf("%-3s %-32s %7s %5s %5s %-14s %12s %12s %12s %12s %4s\n", "#", "device", "replica", "stage",
                        "tp", "layers", "weights", "kv cache", "total", "usable", "fits");
            for (const auto& s : plan.devices) {
                const auto& dev = devices[s.device];
                // Inclusive for people ("0-39"); the JSON keeps [first_layer, last_layer).
                std::string layers = s.last_layer > s.first_layer
                                         ? std::to_string(s.first_layer) + "-" + std::to_string(s.last_layer - 1)
                                         : std::string("none");
                if (s.embeddings) layers += "+emb";
                if (s.output_head) layers += "+head";
                const std::string tp = std::to_string(s.tensor_rank) + "/" + std::to_string(s.tensor_size);
                std::printf("%-3u %s %7u %5u %5s %-14s %12s %12s %12s %12s %4s\n", static_cast<unsigned>(s.device),
                            fit(dev.name.view(), 32).c_str(), static_cast<unsigned>(s.replica),
                            static_cast<unsigned>(s.stage), tp.c_str(), layers.c_str(), fmt_bytes(s.weights_bytes).c_str(),
                            fmt_bytes(s.kv_cache_bytes).c_str(), fmt_bytes(s.total_bytes()).c_str(),
                            fmt_bytes(s.usable_bytes).c_str(), s.fits ? "yes" : "no");
            }
            std::printf("decode: %s%s", rate_or_why(plan.decode_tokens_per_second, plan, devices, true).c_str(),
                        plan.decode_tokens_per_second > 0 ? " per sequence" : "");
            if (plan.aggregate_decode_tokens_per_second > 0 && (plan.replicas > 1 || batch > 1)) {
                const std::string of = batch > 1 ? " of " + std::to_string(batch) + " sequences" : "";
                if (plan.replicas > 1)
                    std::printf(", %s over %u replicas%s", rate(plan.aggregate_decode_tokens_per_second).c_str(),
                                plan.replicas, of.c_str());
                else
                    std::printf(", %s over the batch%s", rate(plan.aggregate_decode_tokens_per_second).c_str(), of.c_str());
            }
            if (plan.prefill_tokens_per_second > 0)
                std::printf("\nprefill: %s (a prompt of %llu tokens%s)\n", rate(plan.prefill_tokens_per_second).c_str(),
                            static_cast<unsigned long long>(prompt), after_cached(depth).c_str());
            else
                std::printf("\nprefill: %s\n", rate_or_why(0, plan, devices, false).c_str());
            std::printf("(every figure is an estimate)\n");
        } else {
            std::printf("fits: no: %s\n", reason.c_str());
        }
        if (!o.has("--device")) print_warnings(reg.warnings());
    }
    if (!plan.fits) return error("fits nowhere: " + reason);
    return 0;
}

// --- training ----------------------------------------------------------------------------

std::optional<ah::training_optimizer> parse_optimizer(std::string_view s) {
    using ah::training_optimizer;
    for (auto [name, o] : {std::pair{"adamw", training_optimizer::adamw}, std::pair{"adamw_8bit", training_optimizer::adamw_8bit},
                           std::pair{"sgd", training_optimizer::sgd}, std::pair{"sgd_momentum", training_optimizer::sgd_momentum}})
        if (ah::detail::loose_equals(s, name)) return o;
    return std::nullopt;
}
std::string_view to_string(ah::training_optimizer o) {
    switch (o) {
    case ah::training_optimizer::adamw: return "adamw";
    case ah::training_optimizer::adamw_8bit: return "adamw_8bit";
    case ah::training_optimizer::sgd_momentum: return "sgd_momentum";
    case ah::training_optimizer::sgd: return "sgd";
    }
    return "adamw";
}

int cmd_training(std::span<const std::string_view> args) {
    options o;
    std::string why;
    if (!parse_options(args, "training",
                       {{"--model"}, {"--method"}, {"--policy"}, {"--seq"}, {"--batch"}, {"--devices"}, {"--zero"},
                        {"--rank"}, {"--checkpointing", false}, {"--optimizer"}, {"--device"}, {"--memory"},
                        {"--json", false}},
                       o, why))
        return usage_error(why);
    ah::model_spec m;
    if (!resolve_model(o, false, m, why)) return usage_error(why);
    if (!o.has("--method"))
        return usage_error("training needs --method full|lora|qlora|prefix|dpo|rlhf|distillation");
    const auto method = ah::parse_training_method(*o.get("--method"));
    if (!method)
        return usage_error("unknown training method '" + str(*o.get("--method")) +
                           "' (full, lora, qlora, prefix, dpo, rlhf, distillation)");
    ah::training_setup t;
    t.method = *method;
    const bool multi_model = t.method == ah::training_method::dpo || t.method == ah::training_method::rlhf ||
                             t.method == ah::training_method::distillation;
    if (auto p = o.get("--policy")) {
        if (!multi_model) return usage_error("--policy applies to dpo, rlhf and distillation");
        const auto pm = ah::parse_training_method(*p);
        if (!pm || (*pm != ah::training_method::full && *pm != ah::training_method::lora &&
                    *pm != ah::training_method::qlora))
            return usage_error("--policy: '" + str(*p) + "' is not full, lora or qlora");
        t.policy_method = *pm;
    }
    const bool adapters = t.method == ah::training_method::lora || t.method == ah::training_method::qlora ||
                          (multi_model && t.policy_method != ah::training_method::full);
    std::uint64_t seq = 0, batch = 0, devices = 0, zero = 0, rank = 0;
    if (!tokens_option(o, "--seq", t.seq_len, seq, why) || !whole_option(o, "--batch", 1, 1, 65536, batch, why) ||
        !whole_option(o, "--devices", 1, 1, 1u << 20, devices, why) || !whole_option(o, "--zero", 0, 0, 3, zero, why) ||
        !whole_option(o, "--rank", t.lora_rank, 1, 65536, rank, why))
        return usage_error(why);
    if (o.has("--rank") && !adapters) return usage_error("--rank applies to lora and qlora (or --policy lora|qlora)");
    t.seq_len = static_cast<std::uint32_t>(seq);
    t.micro_batch = static_cast<std::uint32_t>(batch);
    t.devices = static_cast<std::uint32_t>(devices);
    t.zero = static_cast<ah::zero_stage>(zero);
    t.lora_rank = static_cast<std::uint32_t>(rank);
    t.gradient_checkpointing = o.has("--checkpointing");
    if (auto s = o.get("--optimizer")) {
        const auto opt = parse_optimizer(*s);
        if (!opt) return usage_error("unknown optimizer '" + str(*s) + "' (adamw, adamw_8bit, sgd, sgd_momentum)");
        t.opt = *opt;
    }
    const ah::device_spec* spec = nullptr;
    std::uint64_t device_memory = 0;
    if (o.has("--memory") && !o.has("--device")) return usage_error("--memory needs --device NAME");
    if (auto name = o.get("--device")) {
        spec = resolve_device(*name, why);
        if (!spec) return usage_error(why);
        if (!memory_option(o, *spec, true, device_memory, why)) return usage_error(why);
        // What the driver reports, as estimate, plan and cost judge (ECC on GDDR6 boards).
        if (device_memory == 0) device_memory = ah::reported_memory_bytes(*spec);
    }

    const auto e = ah::estimate_training_memory(m, t);
    // fits: only with --device (whose memory the catalogue or --memory gives).
    const bool judged = spec && device_memory > 0;
    const bool fits = judged && e.peak_memory_bytes > 0 && e.peak_memory_bytes <= device_memory;

    if (o.has("--json")) {
#if AI_HWACCEL_JSON
        nlohmann::json j;
        j["model"] = m.id;
        j["parameters"] = m.parameters;
        j["method"] = ah::to_string(t.method);
        j["policy"] = multi_model ? nlohmann::json(ah::to_string(t.policy_method)) : nlohmann::json(nullptr);
        j["seq"] = t.seq_len;
        j["batch"] = t.micro_batch;
        j["devices"] = t.devices;
        j["zero"] = zero;
        j["rank"] = adapters ? nlohmann::json(t.lora_rank) : nlohmann::json(nullptr);
        j["checkpointing"] = t.gradient_checkpointing;
        j["optimizer"] = to_string(t.opt);
        j["trainable_parameters"] = e.trainable_parameters;
        j["peak_memory_bytes"] = e.peak_memory_bytes;
        j["breakdown"] = {{"weights_bytes", e.weights_bytes},
                          {"frozen_models_bytes", e.frozen_models_bytes},
                          {"gradients_bytes", e.gradients_bytes},
                          {"optimizer_bytes", e.optimizer_bytes},
                          {"activations_bytes", e.activations_bytes},
                          {"buffers_bytes", e.buffers_bytes},
                          {"total_bytes", e.total_bytes()}};
        j["host_memory_bytes"] = e.host_memory_bytes;
        j["device"] = spec ? nlohmann::json(spec->name) : nlohmann::json(nullptr);
        j["device_memory_bytes"] = judged ? nlohmann::json(device_memory) : nlohmann::json(nullptr);
        j["fits"] = judged ? nlohmann::json(fits) : nlohmann::json(nullptr);
        j["estimate"] = true;
        print_json(j);
#else
        return no_json();
#endif
    } else {
        print_model(m);
        std::printf("method: %.*s", len(ah::to_string(t.method)), ah::to_string(t.method).data());
        if (multi_model)
            std::printf(" (policy trained as %.*s)", len(ah::to_string(t.policy_method)),
                        ah::to_string(t.policy_method).data());
        if (adapters) std::printf(", rank %u", t.lora_rank);
        std::printf("; optimizer %.*s; sequence %u tokens x micro-batch %u; %u device(s), ZeRO stage %llu%s\n",
                    len(to_string(t.opt)), to_string(t.opt).data(), t.seq_len, t.micro_batch, t.devices,
                    static_cast<unsigned long long>(zero), t.gradient_checkpointing ? "; gradient checkpointing" : "");
        std::printf("trainable parameters: %llu\n", static_cast<unsigned long long>(e.trainable_parameters));
        std::printf("per device: weights %s, frozen models %s, gradients %s, optimizer %s, activations %s, buffers %s\n",
                    fmt_bytes(e.weights_bytes).c_str(), fmt_bytes(e.frozen_models_bytes).c_str(),
                    fmt_bytes(e.gradients_bytes).c_str(), fmt_bytes(e.optimizer_bytes).c_str(),
                    fmt_bytes(e.activations_bytes).c_str(), fmt_bytes(e.buffers_bytes).c_str());
        std::printf("peak memory per device: %s\n", fmt_bytes(e.peak_memory_bytes).c_str());
        if (spec) {
            std::printf("fits %.*s (%s): %s\n", len(spec->name), spec->name.data(), fmt_bytes(device_memory).c_str(),
                        fits ? "yes" : "no");
        }
        std::printf("(every figure is an estimate)\n");
    }
    if (judged && !fits)
        return error("training does not fit " + str(spec->name) + ": needs " + fmt_bytes(e.peak_memory_bytes).str() +
                     " per device, it has " + fmt_bytes(device_memory).str());
    return 0;
}

// --- cost --------------------------------------------------------------------------------

#if AI_HWACCEL_JSON
nlohmann::json instance_json(const ah::instance_cost_estimate& e) {
    const auto& r = *e.instance;
    return {{"name", r.name},
            {"provider", ah::to_string(r.provider)},
            {"region", r.region},
            {"price_per_hour_usd", r.price_per_hour_usd},
            {"price_date", r.price_date.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.price_date)},
            {"price_snapshot", r.price_snapshot.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.price_snapshot)},
            {"price_source", r.price_source},
            {"price_date_source",
             r.price_date_source.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.price_date_source)},
            {"accelerator", r.accelerator},
            {"accelerator_count", r.accelerator_count},
            {"required_bytes", e.required_bytes},
            {"available_bytes", e.available_bytes},
            {"format_supported", e.format_supported},
            {"fits", e.fits},
            {"decode_tokens_per_second", rate_json(e.decode_tokens_per_second)},
            {"replicas", e.replicas},
            {"replica_accelerators", e.replica_accelerators},
            {"tensor_parallel", e.tensor_parallel},
            {"usd_per_million_output_tokens",
             e.usd_per_million_output_tokens > 0 ? nlohmann::json(rounded(e.usd_per_million_output_tokens, 0.0001))
                                                 : nlohmann::json(nullptr)}};
}
#endif

std::string price_when(const ah::cloud_instance& r) {
    return r.price_date.empty() ? "price list at commit " + str(r.price_snapshot.substr(0, 12)) : "price of " + str(r.price_date);
}

int cmd_cost(std::span<const std::string_view> args) {
    options o;
    std::string why;
    if (!parse_options(args, "cost",
                       {{"--model"}, {"--quant"}, {"--context"}, {"--batch"}, {"--objective"}, {"--all", false},
                        {"--provider"}, {"--since"}, {"--headroom"}, {"--json", false}},
                       o, why))
        return usage_error(why);
    ah::model_spec m;
    if (!resolve_model(o, false, m, why)) return usage_error(why);
    if (!o.has("--quant")) return usage_error("cost needs --quant FORMAT (e.g. Q4_K_M, Q8_0, bf16, fp8)");
    ah::quant_format q{};
    if (!resolve_quant(*o.get("--quant"), q, why)) return usage_error(why);
    std::uint64_t context = 0, batch = 0;
    if (!tokens_option(o, "--context", 4096, context, why) || !whole_option(o, "--batch", 1, 1, 65536, batch, why))
        return usage_error(why);
    note_context(context, m);
    // --headroom as for plan: the instance keeps that share of its accelerators' memory free.
    double headroom = ah::plan_options{}.memory_headroom;
    if (!headroom_option(o, headroom, why)) return usage_error(why);
    ah::cost_assumptions assumptions;
    assumptions.usable_memory_fraction = 1.0 - headroom;
    auto objective = ah::cost_objective::price_per_hour;
    if (auto s = o.get("--objective")) {
        if (*s == "tokens") objective = ah::cost_objective::price_per_million_tokens;
        else if (*s != "hour") return usage_error("--objective: '" + str(*s) + "' is not hour or tokens");
    }
    // --provider LIST and --since DATE narrow the table the search runs over.
    std::vector<ah::instance_provider> providers;
    if (auto s = o.get("--provider")) {
        for (std::string_view rest = *s;;) {
            const auto comma = rest.find(',');
            const auto name = rest.substr(0, comma);
            const auto p = ah::parse_instance_provider(name);
            if (!p) return usage_error("--provider: '" + str(name) + "' is not aws, gcp, azure, lambda, coreweave or oci");
            providers.push_back(*p);
            if (comma == std::string_view::npos) break;
            rest.remove_prefix(comma + 1); // "aws," ends in an empty name, refused as ",aws" is
        }
    }
    std::string_view since;
    if (auto s = o.get("--since")) {
        // YYYY-MM-DD, and a day the calendar has (not 2024-02-30, which compares as text all
        // the same).
        std::uint64_t y = 0, mo = 0, d = 0;
        const bool iso = s->size() == 10 && (*s)[4] == '-' && (*s)[7] == '-' && parse_whole(s->substr(0, 4), 0, 9999, y) &&
                         parse_whole(s->substr(5, 2), 1, 12, mo) && parse_whole(s->substr(8, 2), 1, 31, d) &&
                         std::chrono::year_month_day{std::chrono::year{static_cast<int>(y)},
                                                     std::chrono::month{static_cast<unsigned>(mo)},
                                                     std::chrono::day{static_cast<unsigned>(d)}}
                             .ok();
        if (!iso) return usage_error("--since: '" + str(*s) + "' is not a date YYYY-MM-DD");
        since = *s;
    }
    std::vector<ah::cloud_instance> rows;
    for (const auto& row : ah::instance_catalogue) {
        if (!providers.empty() && std::find(providers.begin(), providers.end(), row.provider) == providers.end()) continue;
        // ISO dates compare as text; a row known only by its price-list commit has no date.
        if (!since.empty() && (row.price_date.empty() || row.price_date < since)) continue;
        rows.push_back(row);
    }
    ah::table_ref<ah::cloud_instance> table;
    table.first = rows.data();
    table.count = rows.size();
    const ah::inference_shape shape{static_cast<std::uint32_t>(context), static_cast<std::uint32_t>(batch)};
    const auto best = ah::cheapest_instance(m, q, shape, objective, assumptions, table);
    // The model's own estimate; an instance of N accelerators needs N - 1 more sets of
    // runtime and activation buffers (each instance's required_bytes).
    const std::uint64_t model_bytes = ah::estimate_memory(m, q, shape).total_bytes();
    std::vector<ah::instance_cost_estimate> all;
    if (o.has("--all"))
        for (const auto& row : rows) all.push_back(ah::estimate_instance_cost(row, m, q, shape, assumptions));

    if (o.has("--json")) {
#if AI_HWACCEL_JSON
        nlohmann::json j;
        j["model"] = m.id;
        j["parameters"] = m.parameters;
        j["active_parameters"] = m.parameters_per_token();
        j["quant"] = ah::to_string(q);
        j["context"] = context;
        j["batch"] = batch;
        j["objective"] = objective == ah::cost_objective::price_per_hour ? "hour" : "tokens";
        j["required_bytes"] = model_bytes;
        j["memory_headroom"] = headroom;
        j["fits"] = best.found();
        j["instance"] = best.found() ? instance_json(best) : nlohmann::json(nullptr);
        if (o.has("--all")) {
            auto& arr = j["instances"] = nlohmann::json::array();
            for (const auto& e : all) arr.push_back(instance_json(e));
        }
        j["estimate"] = true;
        print_json(j);
#else
        return no_json();
#endif
    } else {
        const auto format = ah::to_string(q);
        std::printf("model: %.*s (%.*s) in %.*s, context %llu, batch %llu: needs %s\n", len(m.name), m.name.data(),
                    len(m.id), m.id.data(), len(format), format.data(), static_cast<unsigned long long>(context),
                    static_cast<unsigned long long>(batch), fmt_bytes(model_bytes).c_str());
        if (o.has("--all")) {
            // The region and decode columns as wide as their widest entry.
            int region_w = 14, decode_w = 12;
            bool unsupported = false;
            for (const auto& e : all) {
                region_w = std::max(region_w, len(e.instance->region));
                if (e.fits) decode_w = std::max(decode_w, static_cast<int>(rate(e.decode_tokens_per_second).size()));
                unsupported = unsupported || (!e.fits && !e.format_supported);
            }
            std::printf("%-26s %-9s %-*s %10s %-34s %5s %*s %12s\n", "instance", "provider", region_w, "region",
                        "USD/hour", "accelerators", "fits", decode_w, "decode", "USD/M tok");
            for (const auto& e : all) {
                const auto& r = *e.instance;
                const std::string acc = std::to_string(r.accelerator_count) + " x " + str(r.accelerator);
                const auto provider = ah::to_string(r.provider);
                std::printf("%-26.*s %-9.*s %-*.*s %10.4f %-34.34s %5s %*s %12s\n", len(r.name), r.name.data(),
                            len(provider), provider.data(), region_w, len(r.region), r.region.data(),
                            r.price_per_hour_usd, acc.c_str(), e.fits ? "yes" : (e.format_supported ? "no" : "no*"),
                            decode_w, e.fits ? rate(e.decode_tokens_per_second).c_str() : "-",
                            e.usd_per_million_output_tokens > 0 ? fmt("%.4f", e.usd_per_million_output_tokens).c_str() : "-");
            }
            if (unsupported) std::printf("(no*: the instance's accelerators do not run %.*s)\n", len(format), format.data());
            std::printf("\n");
        }
        if (best.found()) {
            const auto& r = *best.instance;
            const auto provider = ah::to_string(r.provider);
            std::printf("cheapest by %s: %.*s (%.*s, %.*s)\n",
                        objective == ah::cost_objective::price_per_hour ? "price per hour" : "price per output token",
                        len(r.name), r.name.data(), len(provider), provider.data(), len(r.region), r.region.data());
            std::printf("  accelerators: %u x %.*s, %s usable for the model, which needs %s on them\n",
                        r.accelerator_count, len(r.accelerator), r.accelerator.data(),
                        fmt_bytes(best.available_bytes).c_str(), fmt_bytes(best.required_bytes).c_str());
            std::printf("  price: $%.4f per hour on demand (%s; %.*s)\n", r.price_per_hour_usd, price_when(r).c_str(),
                        len(r.price_source), r.price_source.data());
            std::printf("  decode: %s for the instance (%u replica%s of %u accelerator%s, tensor parallel %u; "
                        "estimate)\n",
                        rate(best.decode_tokens_per_second).c_str(), best.replicas, best.replicas == 1 ? "" : "s",
                        best.replica_accelerators, best.replica_accelerators == 1 ? "" : "s", best.tensor_parallel);
            if (best.usd_per_million_output_tokens > 0)
                std::printf("  cost: $%.4f per million output tokens (estimate)\n", best.usd_per_million_output_tokens);
            else
                std::printf("  cost per million output tokens: unknown\n");
        }
    }
    if (!best.found() && !providers.empty()) {
        // Providers the catalogue has no row of find nothing: say that, rather than that
        // none of their instances holds the model.
        std::string without_rows, listed;
        bool any_with_rows = false;
        for (auto p : providers) {
            const bool has_rows = std::any_of(ah::instance_catalogue.begin(), ah::instance_catalogue.end(),
                                              [&](const ah::cloud_instance& row) { return row.provider == p; });
            any_with_rows = any_with_rows || has_rows;
            if (!has_rows) without_rows += (without_rows.empty() ? "" : ", ") + str(ah::to_string(p));
        }
        for (const auto& row : ah::instance_catalogue)
            if (listed.find(str(ah::to_string(row.provider))) == std::string::npos)
                listed += (listed.empty() ? "" : ", ") + str(ah::to_string(row.provider));
        if (!any_with_rows)
            return error("the catalogue has no instance of " + without_rows + " (its providers: " + listed + ")");
    }
    if (!best.found() && rows.empty() && !since.empty())
        return error(str(providers.empty() ? "no catalogue row" : "no catalogue row of those providers") +
                     " is priced on or after " + str(since));
    if (!best.found())
        return error(str(rows.size() < ah::instance_catalogue.size() ? "no instance left by --provider/--since holds "
                                                                      : "no instance in the catalogue holds ") +
                     str(m.id) + " in " + str(ah::to_string(q)) + " (needs " +
                     fmt_bytes(model_bytes).str() + ")");
    return 0;
}

} // namespace plan_cli

} // namespace
