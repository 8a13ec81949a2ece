// ai-hwaccel detect: recording what a detection reads, and writing it back as a machine tree.
//
// `recording_system<S>` wraps another system_view, forwards every call and remembers what
// it saw: the bytes of each file read, each folder listed, each link read, each existence
// asked, each tool run and each environment variable looked up. `write_machine_tree`
// then lays exactly that out under a folder, in the layout `host_system(DIR)` reads
// (captured tool outputs in `capture_dir_path` with their index, the variables read in
// `proc/self/environ`), so detecting on the written tree finds what the recorded
// detection found. This is what `ai-hwaccel gather` attaches to a bug report and what a
// developer turns into a fixture machine; docs/cli-gather.md describes the rules.
//
// What was observed decides what is written, since nothing else is known about the
// machine:
//   - a file read: its bytes. A read cut at its cap is written with one '\n' more, so the
//     same read is cut again at the same place (what lay beyond was never read);
//   - a read that failed as "not a regular file" (a device node, a FIFO, a folder):
//     a FIFO, unless the path has to be a folder for another observation (both read that
//     way, without blocking); a read refused or not found: nothing;
//   - a folder listed: the folder, and each entry; an entry never looked at otherwise is
//     written as an empty regular file (a listing does not say what type it was);
//   - a link read: a link. Its target text is kept when it is relative and stays inside
//     the tree; an absolute target, or one that climbs above the root, is rewritten as the
//     relative path to the same place inside the tree, so reading the tree never leaves it.
//     Paths read through known links are written where the links lead;
//   - exists() true: an empty regular file where nothing else was written; false: nothing,
//     unless a listing showed the entry: then a link that leads nowhere;
//   - a tool run: its stdout and an index line with its outcome (exit status, "timeout",
//     "signal:N", "not-executable"); a tool not found leaves no line. Its stderr is not
//     kept (a replay has none). Outcomes the index cannot express (spawn failure,
//     cancellation) are left out and listed in the result's notes;
//   - the environment variables that had a value, NUL-separated in proc/self/environ
//     (unless a probe read that file itself: then its bytes are written).
//
// Writing never follows a link: every folder on the way is opened with O_NOFOLLOW
// relative to the target, which is created 0700 (a gathered tree can hold serial numbers
// and host names); folders are written 0755 and files 0644 inside it (less the umask).
// A target that exists must be an empty folder, unless `force`: then what gather writes
// replaces files and links at its own paths, and nothing else there is removed.
#pragma once

#include "ai_hwaccel/config.hpp"
#include "ai_hwaccel/core/text.hpp"
#include "ai_hwaccel/detect/detect.hpp"
#include "ai_hwaccel/detect/process.hpp"
#include "ai_hwaccel/detect/system.hpp"
#include "ai_hwaccel/registry.hpp"

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#if AI_HWACCEL_OS_LINUX || AI_HWACCEL_OS_MACOS
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

AI_HWACCEL_NAMESPACE_BEGIN

/// Everything one detection asked of its system_view, and the answers.
struct machine_recording {
    struct read_entry {
        read_status status = read_status::error;
        std::string data; ///< what was read (for `truncated`: the first `cap` bytes)
        bool ok() const noexcept { return status == read_status::ok || status == read_status::truncated; }
    };
    struct tool_entry {
        std::string command_line; ///< as the capture index keys it (command_line_of)
        std::vector<std::string> argv;
        tool_status status = tool_status::not_found;
        int exit_code = 0;
        int signal = 0;
        std::string out;
        bool out_truncated = false;
    };
    std::map<std::string, read_entry, std::less<>> reads;
    std::map<std::string, std::optional<std::vector<std::string>>, std::less<>> listings;
    std::map<std::string, std::optional<std::string>, std::less<>> links;
    /// The folders above each path asked about that are links, and their targets: asked
    /// of the inner view by the recorder itself, so that the tree keeps the machine's
    /// layout (a link read through but never read itself would otherwise become a folder,
    /// and relative links inside it would lead elsewhere).
    std::map<std::string, std::string, std::less<>> folder_links;
    std::map<std::string, bool, std::less<>> existence;
    std::vector<tool_entry> tools; ///< the first run of each command line, in order
    std::map<std::string, std::optional<std::string>, std::less<>> environment;
    /// Observations of one thing that disagreed (a file that changed between two reads,
    /// a tool run twice with different outcomes): the first answer is kept.
    std::vector<std::string> conflicts;

    void note_read(std::string_view path, const file_read& r) {
        auto [it, fresh] = reads.try_emplace(std::string(path));
        auto& e = it->second;
        if (fresh) {
            e.status = r.status;
            e.data = r.data;
            return;
        }
        if (e.status == r.status && e.data == r.data) return;
        // Reads of one file under different caps agree when the shorter is the start of
        // the longer; the longest (or the complete one) is kept.
        const bool both_read = e.ok() && r.ok();
        const bool e_prefix = both_read && std::string_view(r.data).starts_with(e.data);
        const bool r_prefix = both_read && std::string_view(e.data).starts_with(r.data);
        if (e_prefix && e.status == read_status::truncated) {
            e.status = r.status;
            e.data = r.data;
        } else if (!(r_prefix && r.status == read_status::truncated)) {
            conflicts.push_back("file " + std::string(path) + " read differently twice");
        }
    }
    void note_tool(const tool_request& request, const tool_result& r) {
        std::string line = command_line_of(request.argv);
        for (const auto& t : tools) {
            if (t.command_line != line) continue;
            if (t.status != r.status || t.exit_code != r.exit_code || t.signal != r.signal || t.out != r.out)
                conflicts.push_back("tool '" + line + "' ran twice with different results");
            return;
        }
        if (r.status == tool_status::not_found) return; // nothing to write: no line says "absent"
        tools.push_back(tool_entry{std::move(line), request.argv, r.status, r.exit_code, r.signal, r.out,
                                   r.out_truncated});
    }
    template <class Map, class V>
    void note(Map& map, std::string_view key, const V& value, std::string_view what) {
        const auto [it, fresh] = map.try_emplace(std::string(key), value);
        if (!fresh && !(it->second == value))
            conflicts.push_back(std::string(what) + " " + std::string(key) + " answered differently twice");
    }
};

namespace detail::record {
// The recording and its lock, shared by recording_system<S> and the host_system observer.
// `link_of(folder)` asks the machine, unrecorded, whether a folder is a link.
template <class LinkOf>
class recorder {
public:
    explicit recorder(LinkOf link_of) : link_of_(std::move(link_of)) {}

    void read(std::string_view path, const file_read& r) {
        const std::lock_guard<std::mutex> lock(mutex_);
        rec_.note_read(path, r);
        note_folders(path);
    }
    template <class Map, class V>
    void seen(Map machine_recording::*map, std::string_view key, const V& value, std::string_view what,
              bool is_path = true) {
        const std::lock_guard<std::mutex> lock(mutex_);
        rec_.note(rec_.*map, key, value, what);
        if (is_path) note_folders(key);
    }
    void ran(const tool_request& request, const tool_result& r) {
        const std::lock_guard<std::mutex> lock(mutex_);
        rec_.note_tool(request, r);
    }
    machine_recording recording() const {
        const std::lock_guard<std::mutex> lock(mutex_);
        return rec_;
    }

private:
    // Asks once about each folder above `path` whether it is a link (under the lock).
    void note_folders(std::string_view path) {
        for (auto slash = path.find('/', 1); slash != std::string_view::npos; slash = path.find('/', slash + 1)) {
            const std::string_view folder = path.substr(0, slash);
            if (!checked_.insert(std::string(folder)).second) continue;
            if (auto target = link_of_(folder)) rec_.folder_links.emplace(std::string(folder), std::move(*target));
        }
    }

    LinkOf link_of_;
    mutable std::mutex mutex_;
    machine_recording rec_;
    std::set<std::string, std::less<>> checked_;
};

template <class S>
struct inner_link {
    const S* sys;
    std::optional<std::string> operator()(std::string_view path) const { return sys->read_link(path); }
};
} // namespace detail::record

/// A system_view that forwards every call to `inner` and records it. Safe to use from the
/// detector's parallel probes. `inner` must outlive it. (A `host_system` is recorded
/// without a wrapper by `record_detection`, through its observer: detecting through a
/// second view type would compile every probe a second time.)
template <system_view S>
class recording_system {
public:
    explicit recording_system(const S& inner) : inner_(&inner), rec_(detail::record::inner_link<S>{&inner}) {}
    recording_system(const recording_system&) = delete;
    recording_system& operator=(const recording_system&) = delete;

    file_read read_file(std::string_view path, std::size_t cap = default_read_cap) const {
        file_read r = inner_->read_file(path, cap);
        rec_.read(path, r);
        return r;
    }
    std::optional<std::vector<std::string>> list_dir(std::string_view path) const {
        auto r = inner_->list_dir(path);
        rec_.seen(&machine_recording::listings, path, r, "folder");
        return r;
    }
    std::optional<std::string> read_link(std::string_view path) const {
        auto r = inner_->read_link(path);
        rec_.seen(&machine_recording::links, path, r, "link");
        return r;
    }
    bool exists(std::string_view path) const {
        const bool r = inner_->exists(path);
        rec_.seen(&machine_recording::existence, path, r, "existence of");
        return r;
    }
    std::optional<std::string> env(std::string_view name) const {
        auto r = inner_->env(name);
        rec_.seen(&machine_recording::environment, name, r, "variable", false);
        return r;
    }
    tool_result run(const tool_request& request) const {
        tool_result r = inner_->run(request);
        rec_.ran(request, r);
        return r;
    }
    /// As the inner view says, where it says (probes ask it before loading libraries or
    /// running tools that belong to another operating system).
    bool replays_tools() const
        requires requires(const S& s) {
            { s.replays_tools() } -> std::convertible_to<bool>;
        }
    {
        return inner_->replays_tools();
    }

    /// A copy of what was recorded so far.
    machine_recording recording() const { return rec_.recording(); }
    const S& inner() const noexcept { return *inner_; }

private:
    const S* inner_;
    mutable detail::record::recorder<detail::record::inner_link<S>> rec_;
};

/// A registry and what its detection read.
struct recorded_detection {
    accelerator_registry registry;
    machine_recording recording;
};

namespace detail::record {
inline builtin_probes probes_for_recording() {
    builtin_probes probes{};
#if AI_HWACCEL_BACKEND_CUDA
    // NVML's answers cannot be written into a tree: nvidia-smi runs instead, exactly as a
    // detection of the written tree will replay it.
    std::get<cuda_probe>(probes).use_nvml = false;
#endif
    return probes;
}
} // namespace detail::record

/// Detects through `sys` with `d`, recording every call. NVML is not loaded (its answers
/// cannot be written into a tree): the CUDA probe runs nvidia-smi instead, exactly as a
/// detection of the written tree will replay it.
template <system_view S>
recorded_detection record_detection(const S& sys, const detector& d = detector::all()) {
    const recording_system<S> rec(sys);
    auto t = std::apply([&](const auto&... p) { return d.run_timed_with(rec, p...); },
                        detail::record::probes_for_recording());
    return recorded_detection{std::move(t.registry), rec.recording()};
}

#if AI_HWACCEL_OS_LINUX || AI_HWACCEL_OS_MACOS
namespace detail::record {
struct host_link {
    const host_system* sys;
    std::optional<std::string> operator()(std::string_view path) const { return sys->read_link_quietly(path); }
};
// Records a host_system's answers through its observer hook.
class host_recorder final : public system_observer {
public:
    explicit host_recorder(const host_system& sys) : rec_(host_link{&sys}) {}
    void on_read(std::string_view path, const file_read& r) override { rec_.read(path, r); }
    void on_list(std::string_view path, const std::optional<std::vector<std::string>>& r) override {
        rec_.seen(&machine_recording::listings, path, r, "folder");
    }
    void on_link(std::string_view path, const std::optional<std::string>& r) override {
        rec_.seen(&machine_recording::links, path, r, "link");
    }
    void on_exists(std::string_view path, bool r) override {
        rec_.seen(&machine_recording::existence, path, r, "existence of");
    }
    void on_env(std::string_view name, const std::optional<std::string>& r) override {
        rec_.seen(&machine_recording::environment, name, r, "variable", false);
    }
    void on_run(const tool_request& request, const tool_result& r) override { rec_.ran(request, r); }
    machine_recording recording() const { return rec_.recording(); }

private:
    recorder<host_link> rec_;
};
} // namespace detail::record

/// The same for the host (live or a machine tree), through its observer: the probes run
/// on `host_system` itself, so a program that also detects normally compiles them once.
inline recorded_detection record_detection(const host_system& sys, const detector& d = detector::all()) {
    detail::record::host_recorder observer(sys);
    const host_system observed = sys.observed_by(observer);
    auto t = std::apply([&](const auto&... p) { return d.run_timed_with(observed, p...); },
                        detail::record::probes_for_recording());
    return recorded_detection{std::move(t.registry), observer.recording()};
}
#endif

struct machine_tree_options {
    /// Write into an existing folder that is not empty (see the header's notes).
    bool force = false;
};

/// What writing a tree did.
struct machine_tree_result {
    bool ok = false;
    std::string message; ///< why not, when !ok
    std::size_t files = 0;        ///< regular files, placeholders and tool outputs included
    std::size_t placeholders = 0; ///< empty files standing for entries only listed or tested
    std::size_t directories = 0;
    std::size_t links = 0;
    std::size_t fifos = 0;
    std::size_t tool_outputs = 0; ///< index lines
    /// Entries that could not be written (each has a note); any makes the result not ok,
    /// since the tree would replay as a different machine. What was written stays.
    std::size_t not_written = 0;
    std::uint64_t bytes = 0;      ///< in regular files
    /// Every regular file written, relative to the target ("proc/cpuinfo").
    std::vector<std::string> written_files;
    /// What could not be reproduced faithfully (and the recording's conflicts).
    std::vector<std::string> notes;
};

namespace detail::record {

inline std::vector<std::string> split(std::string_view p) {
    std::vector<std::string> parts;
    while (!p.empty()) {
        const auto slash = p.find('/');
        const auto part = p.substr(0, slash);
        if (!part.empty()) parts.emplace_back(part);
        if (slash == std::string_view::npos) break;
        p.remove_prefix(slash + 1);
    }
    return parts;
}

inline std::string join(const std::vector<std::string>& parts, std::size_t n) {
    std::string s;
    for (std::size_t i = 0; i < n && i < parts.size(); ++i) {
        if (i) s += '/';
        s += parts[i];
    }
    return s;
}
inline std::string join(const std::vector<std::string>& parts) { return join(parts, parts.size()); }

// Paths as the tree has them: components below the root, links (keyed by such paths)
// followed as the kernel would inside a chroot at the tree's root.
class resolver {
public:
    std::map<std::string, std::string, std::less<>> links; // canonical path -> target text

    // nullopt for a loop (more than 40 links on the way). `above_root`, when given, is set
    // where a ".." is met at the root: inside a chroot it stays there, outside one it
    // would leave the tree.
    std::optional<std::vector<std::string>> resolve(std::string_view path, bool follow_last,
                                                    bool* above_root = nullptr) const {
        std::vector<std::string> done;
        std::vector<std::string> todo = split(path);
        std::reverse(todo.begin(), todo.end()); // a stack: the next component at the back
        int hops = 0;
        while (!todo.empty()) {
            std::string c = std::move(todo.back());
            todo.pop_back();
            if (c == "."sv) continue;
            if (c == ".."sv) {
                if (!done.empty()) done.pop_back();
                else if (above_root) *above_root = true;
                continue;
            }
            done.push_back(std::move(c));
            if (todo.empty() && !follow_last) break;
            const auto it = links.find(join(done));
            if (it == links.end()) continue;
            if (++hops > 40) return std::nullopt;
            done.pop_back();
            if (!it->second.empty() && it->second.front() == '/') done.clear();
            auto more = split(it->second);
            for (auto m = more.rbegin(); m != more.rend(); ++m) todo.push_back(*m);
        }
        return done;
    }
};

// Where a link's target text leads lexically inside the tree (".." at the root stays
// there), and whether the text gets there without leaving the tree.
inline std::vector<std::string> lexical_target(const std::vector<std::string>& link, std::string_view target,
                                               bool& inside) {
    std::vector<std::string> at;
    inside = !target.empty() && target.front() != '/';
    if (inside) at.assign(link.begin(), link.end() - 1);
    for (auto& c : split(target)) {
        if (c == "."sv) continue;
        if (c == ".."sv) {
            if (at.empty()) inside = false;
            else at.pop_back();
            continue;
        }
        at.push_back(std::move(c));
    }
    return at;
}

inline std::string relative_text(const std::vector<std::string>& link, const std::vector<std::string>& to) {
    const std::size_t dir = link.size() - 1;
    std::size_t common = 0;
    while (common < dir && common < to.size() && link[common] == to[common]) ++common;
    std::string s;
    for (std::size_t i = common; i < dir; ++i) s += "../";
    for (std::size_t i = common; i < to.size(); ++i) s += to[i] + (i + 1 < to.size() ? "/" : "");
    if (s.empty()) s = ".";
    if (s.back() == '/') s.pop_back();
    return s;
}

enum class node_kind : std::uint8_t { directory, file, placeholder, link, fifo };

struct node {
    node_kind kind = node_kind::file;
    std::string content; // file bytes, or link target
};

// A file name for a tool's output: its own name, letters, digits, '.', '-', '_' only.
inline std::string output_name(std::size_t n, std::string_view tool) {
    if (const auto slash = tool.rfind('/'); slash != std::string_view::npos) tool.remove_prefix(slash + 1);
    std::string s = std::to_string(n);
    while (s.size() < 3) s.insert(s.begin(), '0');
    s += '-';
    for (char c : tool.substr(0, 40))
        s += (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
                     c == '_'
                 ? c
                 : '_';
    return s + ".out";
}

class tree_plan {
public:
    std::map<std::string, node, std::less<>> nodes; // relative path -> what goes there
    std::vector<std::string> notes;

    // Adds a node unless the path or a folder above it is already something else.
    bool add(const std::vector<std::string>& at, node n, std::string_view why) {
        if (at.empty()) {
            if (n.kind != node_kind::directory) notes.push_back(std::string(why) + ": the root itself");
            return n.kind == node_kind::directory;
        }
        for (std::size_t i = 1; i < at.size(); ++i) {
            const auto it = nodes.find(join(at, i));
            if (it != nodes.end() && it->second.kind != node_kind::directory) {
                if (it->second.kind == node_kind::placeholder || it->second.kind == node_kind::fifo) {
                    it->second = node{node_kind::directory, {}}; // only known to exist: a folder will do
                    continue;
                }
                notes.push_back(std::string(why) + " /" + join(at) + ": /" + join(at, i) + " is not a folder");
                return false;
            }
        }
        const std::string key = join(at);
        const auto [it, fresh] = nodes.try_emplace(key, n);
        if (fresh) return true;
        auto& old = it->second;
        if (old.kind == n.kind && old.content == n.content) return true;
        // Weaker observations give way to stronger ones.
        const auto strength = [](node_kind k) {
            return k == node_kind::placeholder ? 0 : k == node_kind::fifo ? 1 : 2;
        };
        if (strength(n.kind) > strength(old.kind)) {
            old = std::move(n);
            return true;
        }
        if (strength(n.kind) < strength(old.kind)) return true;
        notes.push_back(std::string(why) + " /" + key + ": already written otherwise");
        return false;
    }
    // A folder must stand where something was only listed under it or tested.
    bool has_below(const std::string& key) const {
        const auto it = nodes.lower_bound(key + "/");
        return it != nodes.end() && std::string_view(it->first).starts_with(key + "/");
    }
};

inline void pad_truncated(std::string& data) { data += '\n'; }

// Where a listed entry that did not exist is written to point: a name never written in any
// folder of the tree (a dot folder, which sysfs and procfs do not have).
inline constexpr std::string_view dangling_target = ".ai-hwaccel-gone/entry";

// Turns a recording into what to write.
inline tree_plan plan_tree(const machine_recording& rec) {
    tree_plan plan;
    for (const auto& c : rec.conflicts) plan.notes.push_back(c);
    resolver res;

    // Links first: their keys are canonical paths, which depend on the other links, so
    // settle them until nothing moves.
    std::vector<std::pair<std::string, std::string>> links;
    for (const auto& [path, target] : rec.links)
        if (target) links.emplace_back(path, *target);
    for (const auto& [path, target] : rec.folder_links)
        if (!rec.links.count(path)) links.emplace_back(path, target);
    for (int pass = 0; pass < 8; ++pass) {
        std::map<std::string, std::string, std::less<>> keyed;
        for (const auto& [path, target] : links)
            if (auto at = res.resolve(path, false); at && !at->empty()) keyed.emplace(join(*at), target);
        if (keyed == res.links) break;
        res.links = std::move(keyed);
    }
    for (const auto& [key, target] : res.links) {
        const auto at = split(key);
        bool inside = false;
        const auto to = lexical_target(at, target, inside);
        std::string text = target;
        // A ".." climbs from where the links before it led, which the text alone does not
        // say ("b/../../etc" with b -> "/" leaves the tree though its text stays inside):
        // a target that climbs above the root either way is written as the path to where
        // it leads, the links on the way followed as inside a chroot at the tree's root.
        bool above_root = false;
        const auto dest =
            res.resolve(target.front() == '/' ? target : "/" + join(at, at.size() - 1) + "/" + target, false, &above_root);
        if (!inside || above_root) {
            text = relative_text(at, dest ? *dest : to);
            plan.notes.push_back("link /" + key + " -> " + target + " written as " + text + " (stays inside the tree)");
        }
        plan.add(at, node{node_kind::link, text}, "link");
    }

    for (const auto& [path, r] : rec.reads) {
        const auto at = res.resolve(path, true);
        if (!at) {
            plan.notes.push_back("file " + path + ": too many links on the way");
            continue;
        }
        if (r.status == read_status::ok || r.status == read_status::truncated) {
            node n{node_kind::file, r.data};
            if (r.status == read_status::truncated) pad_truncated(n.content);
            plan.add(*at, std::move(n), "file");
        } else if (r.status == read_status::error) {
            plan.add(*at, node{node_kind::fifo, {}}, "unreadable file");
        } else if (r.status == read_status::permission_denied) {
            plan.notes.push_back("file " + path + ": permission denied, left out (reads as not found)");
        }
    }
    // What was asked about and did not exist: a listed entry among them was there and led
    // nowhere (a broken link, a link loop, or one removed while the detection ran).
    std::set<std::string, std::less<>> missing;
    for (const auto& [path, there] : rec.existence)
        if (!there)
            if (const auto at = res.resolve(path, true); at && !at->empty()) missing.insert(join(*at));
    for (const auto& [path, names] : rec.listings) {
        if (!names) continue;
        const auto at = res.resolve(path, true);
        if (!at) {
            plan.notes.push_back("folder " + path + ": too many links on the way");
            continue;
        }
        plan.add(*at, node{node_kind::directory, {}}, "folder");
        for (const auto& name : *names) {
            if (name.empty() || name == "."sv || name == ".."sv || name.find('/') != std::string::npos) continue;
            auto child = *at;
            child.push_back(name);
            const std::string key = join(child);
            if (plan.nodes.count(key) || plan.has_below(key)) continue;
            if (missing.count(key)) {
                // Listed yet not there: a link into a folder the tree never has, so the
                // entry is listed and does not exist in the replay either.
                plan.add(child, node{node_kind::link, std::string(dangling_target)}, "listed entry");
                plan.notes.push_back("/" + key +
                                     ": listed but not there (a broken link?), written as a link to nothing");
            } else
                plan.add(child, node{node_kind::placeholder, {}}, "listed entry");
        }
    }
    for (const auto& [path, there] : rec.existence) {
        if (!there) continue;
        const auto at = res.resolve(path, true);
        if (!at) continue;
        if (at->empty() || plan.nodes.count(join(*at)) || plan.has_below(join(*at))) continue;
        plan.add(*at, node{node_kind::placeholder, {}}, "existing path");
    }

    // Tool outputs and their index.
    std::string index = "# written by ai-hwaccel gather: <outcome> TAB <stdout file> TAB <command line>\n";
    std::size_t n = 0;
    const auto dir = split(capture_dir_path);
    for (const auto& t : rec.tools) {
        const std::string_view line = t.command_line;
        if (line.empty() || line.find_first_of("\t\n\r") != std::string_view::npos ||
            detail::trim(line).size() != line.size()) {
            plan.notes.push_back("tool '" + t.command_line + "': its command line cannot be written in the index");
            continue;
        }
        std::string outcome;
        bool with_output = !t.out.empty();
        switch (t.status) {
        case tool_status::exited:
        case tool_status::truncated:
            outcome = std::to_string(t.exit_code >= 0 && t.exit_code < 256 ? t.exit_code : 0);
            with_output = with_output || t.status == tool_status::exited;
            break;
        case tool_status::signalled: outcome = "signal:" + std::to_string(t.signal); break;
        case tool_status::timed_out: outcome = "timeout"; break;
        case tool_status::not_executable:
            outcome = "not-executable";
            with_output = false;
            break;
        default:
            plan.notes.push_back("tool '" + t.command_line + "': " + std::string(to_string(t.status)) +
                                 " cannot be written in the index, left out");
            continue;
        }
        std::string file = "-";
        if (with_output) {
            file = output_name(++n, t.argv.empty() ? std::string_view("tool") : std::string_view(t.argv[0]));
            auto at = dir;
            at.push_back(file);
            node out{node_kind::file, t.out};
            if (t.out_truncated) pad_truncated(out.content);
            if (!plan.add(at, std::move(out), "tool output")) continue;
        }
        index += outcome + '\t' + file + '\t' + t.command_line + '\n';
    }
    if (!rec.tools.empty()) {
        auto at = split(capture_index_path);
        plan.add(at, node{node_kind::file, index}, "capture index");
    }

    // The environment the probes asked about, unless they read the file themselves.
    std::string environ_text;
    for (const auto& [name, value] : rec.environment)
        if (value && !name.empty() && name.find('=') == std::string::npos) environ_text += name + '=' + *value + '\0';
    if (const auto at = res.resolve("/proc/self/environ", true); at && !environ_text.empty()) {
        const auto it = plan.nodes.find(join(*at));
        if (it == plan.nodes.end() || it->second.kind == node_kind::placeholder)
            plan.add(*at, node{node_kind::file, environ_text}, "environment");
    }
    // Placeholders that turned out to have something beneath them are folders.
    for (auto& [key, nd] : plan.nodes)
        if ((nd.kind == node_kind::placeholder || nd.kind == node_kind::fifo) && plan.has_below(key))
            nd = node{node_kind::directory, {}};
    // A folder that was listed shows what else was written in it (the capture folder in a
    // listed root, a file the machine added between a listing and a read).
    for (const auto& [path, names] : rec.listings) {
        if (!names) continue;
        const auto at = res.resolve(path, true);
        if (!at) continue;
        const std::string prefix = at->empty() ? std::string() : join(*at) + "/";
        const std::set<std::string_view> listed(names->begin(), names->end());
        for (auto it = plan.nodes.lower_bound(prefix); it != plan.nodes.end() && std::string_view(it->first).starts_with(prefix); ++it) {
            const std::string_view rest = std::string_view(it->first).substr(prefix.size());
            if (rest.find('/') == std::string_view::npos && !listed.count(rest))
                plan.notes.push_back("folder " + path + " was listed without " + std::string(rest) + ", which is written in it");
        }
    }
    return plan;
}

#if AI_HWACCEL_OS_LINUX || AI_HWACCEL_OS_MACOS

inline std::string errno_text(int e) { return std::strerror(e); }

inline constexpr int dir_flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

// Opens (creating) the folder `name` inside `parent`, never through a link. With `force`,
// a file or link in the way is removed first (a folder is never removed).
inline fd_guard open_subdir(int parent, const std::string& name, bool force, bool& created, std::string& why) {
    created = false;
    fd_guard fd(::openat(parent, name.c_str(), dir_flags));
    if (fd.get() >= 0) return fd;
    int e = errno;
    if ((e == ENOTDIR || e == ELOOP) && force && ::unlinkat(parent, name.c_str(), 0) == 0) e = ENOENT;
    if (e != ENOENT) {
        why = name + ": " + errno_text(e);
        return fd;
    }
    if (::mkdirat(parent, name.c_str(), 0755) != 0 && errno != EEXIST) {
        why = name + ": " + errno_text(errno);
        return fd;
    }
    created = true;
    fd = fd_guard(::openat(parent, name.c_str(), dir_flags));
    if (fd.get() < 0) why = name + ": " + errno_text(errno);
    return fd;
}

inline bool write_all(int fd, std::string_view data) {
    while (!data.empty()) {
        const ::ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

// Makes room for a new entry `name` in `dir`: nothing there, or (with force) a file, link
// or FIFO that is removed. False when something that must stay is there.
inline bool clear_entry(int dir, const std::string& name, bool force, std::string& why) {
    struct stat st {};
    if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return errno == ENOENT;
    if (!force || S_ISDIR(st.st_mode)) {
        why = name + ": already exists";
        return false;
    }
    if (::unlinkat(dir, name.c_str(), 0) != 0) {
        why = name + ": " + errno_text(errno);
        return false;
    }
    return true;
}

inline std::optional<std::vector<std::string>> names_in(int dir) {
    const int copy = ::openat(dir, ".", dir_flags);
    if (copy < 0) return std::nullopt;
    DIR* d = ::fdopendir(copy);
    if (!d) {
        ::close(copy);
        return std::nullopt;
    }
    std::vector<std::string> names;
    while (const dirent* e = ::readdir(d)) {
        const std::string_view n = e->d_name;
        if (n != "."sv && n != ".."sv) names.emplace_back(n);
    }
    ::closedir(d);
    return names;
}

#endif

} // namespace detail::record

#if AI_HWACCEL_OS_LINUX || AI_HWACCEL_OS_MACOS
/// Writes under `dir` the machine tree that `rec` observed (see the header's notes).
inline machine_tree_result write_machine_tree(const machine_recording& rec, const std::string& dir,
                                              const machine_tree_options& options = {}) {
    using namespace detail::record;
    machine_tree_result result;
    // "lnk/" would be followed where "lnk" is refused: the name without its trailing slashes.
    std::string target = dir;
    while (target.size() > 1 && target.back() == '/') target.pop_back();
    if (target.empty()) {
        result.message = "no target folder given";
        return result;
    }
    // The target: created private, or an existing empty folder (any with force) that this
    // user owns, made private; never a link.
    bool made = false;
    if (::mkdir(target.c_str(), 0700) == 0) made = true;
    else if (errno != EEXIST) {
        result.message = "cannot create '" + dir + "': " + errno_text(errno);
        return result;
    }
    using detail::fd_guard;
    fd_guard root(::open(target.c_str(), dir_flags));
    if (root.get() < 0) {
        result.message = "'" + dir + "' is not a folder that can be written (" + errno_text(errno) +
                         (errno == ELOOP || errno == ENOTDIR ? "; a link or a file is never written through" : "") + ")";
        return result;
    }
    if (!made) {
        // A folder someone else made (in /tmp, beforehand) could be read by them: refused.
        struct stat st {};
        if (::fstat(root.get(), &st) != 0 || st.st_uid != ::geteuid()) {
            result.message = "'" + dir + "' belongs to another user: the tree it would hold is private";
            return result;
        }
        if ((st.st_mode & 077) != 0 && ::fchmod(root.get(), 0700) == 0)
            result.notes.push_back("'" + dir + "' made private (0700), as a folder gather creates is");
    }
    if (!made && !options.force) {
        const auto names = names_in(root.get());
        if (!names) {
            result.message = "cannot list '" + dir + "'";
            return result;
        }
        if (!names->empty()) {
            result.message = "'" + dir + "' exists and is not empty (use --force to write into it)";
            return result;
        }
    }
    tree_plan plan = plan_tree(rec);
    result.notes.insert(result.notes.end(), plan.notes.begin(), plan.notes.end());

    // Each node, in path order (a folder before what it holds), by folder descriptors
    // opened one component at a time without following links.
    std::vector<std::string> open_path;  // components of the folder held open
    std::vector<fd_guard> open_fds;      // its descriptors, root excluded
    for (const auto& [key, nd] : plan.nodes) {
        auto at = split(key);
        const std::string name = at.back();
        at.pop_back();
        std::size_t keep = 0;
        while (keep < open_path.size() && keep < at.size() && open_path[keep] == at[keep]) ++keep;
        open_path.resize(keep);
        open_fds.resize(keep);
        std::string why;
        bool ok = true;
        for (std::size_t i = keep; i < at.size() && ok; ++i) {
            const int parent = open_fds.empty() ? root.get() : open_fds.back().get();
            bool created = false;
            fd_guard fd = open_subdir(parent, at[i], options.force, created, why);
            if (fd.get() < 0) {
                ok = false;
                break;
            }
            if (created) ++result.directories;
            open_path.push_back(at[i]);
            open_fds.push_back(std::move(fd));
        }
        if (!ok) {
            result.notes.push_back("/" + key + ": not written (" + why + ")");
            ++result.not_written;
            continue;
        }
        const int parent = open_fds.empty() ? root.get() : open_fds.back().get();
        switch (nd.kind) {
        case node_kind::directory: {
            bool created = false;
            fd_guard fd = open_subdir(parent, name, options.force, created, why);
            if (fd.get() < 0) ok = false;
            else if (created) ++result.directories;
            break;
        }
        case node_kind::file:
        case node_kind::placeholder: {
            if (!clear_entry(parent, name, options.force, why)) {
                ok = false;
                break;
            }
            fd_guard fd(::openat(parent, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
            if (fd.get() < 0) {
                why = name + ": " + errno_text(errno);
                ok = false;
                break;
            }
            if (!write_all(fd.get(), nd.content)) {
                // A file cut short would replay as a different machine: none at all is
                // what the notes and the result's failure say.
                why = name + ": " + errno_text(errno);
                ::unlinkat(parent, name.c_str(), 0);
                ok = false;
                break;
            }
            ++result.files;
            if (nd.kind == node_kind::placeholder) ++result.placeholders;
            result.bytes += nd.content.size();
            result.written_files.push_back(key);
            break;
        }
        case node_kind::link:
            if (!clear_entry(parent, name, options.force, why) || ::symlinkat(nd.content.c_str(), parent, name.c_str()) != 0) {
                if (why.empty()) why = name + ": " + errno_text(errno);
                ok = false;
            } else
                ++result.links;
            break;
        case node_kind::fifo:
            if (!clear_entry(parent, name, options.force, why) || ::mkfifoat(parent, name.c_str(), 0644) != 0) {
                if (why.empty()) why = name + ": " + errno_text(errno);
                ok = false;
            } else
                ++result.fifos;
            break;
        }
        if (!ok) {
            result.notes.push_back("/" + key + ": not written (" + why + ")");
            ++result.not_written;
        }
    }
    {
        const auto it = plan.nodes.find(std::string(capture_index_path.substr(1)));
        if (it != plan.nodes.end())
            for (std::string_view s = it->second.content; !s.empty();) {
                const auto nl = s.find('\n');
                if (s.front() != '#') ++result.tool_outputs;
                s.remove_prefix(nl == std::string_view::npos ? s.size() : nl + 1);
            }
    }
    result.ok = result.not_written == 0;
    if (!result.ok)
        result.message = std::to_string(result.not_written) + " of " + std::to_string(plan.nodes.size()) +
                         " entries could not be written into '" + dir + "' (see the notes); the tree is incomplete";
    return result;
}
#endif

AI_HWACCEL_NAMESPACE_END
