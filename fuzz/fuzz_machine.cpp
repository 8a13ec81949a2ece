// Fuzz target: whole detection (detect/detect.hpp, every compiled probe and the host
// probes) on a machine made of the input, served by an in-memory system_view. It reaches
// the sysfs and /proc value parsing that lives inside the probes, the symlink handling of
// sysfs trees, the capture index and replayed tool outputs, and the merge of devices seen
// by several backends.
//
// Input: records separated by the byte 0x1e. A record's first line says what it is, the
// rest is its content:
//   F/path     a file holding the content
//   L/path     a symbolic link whose target is the content
//   D/path     an empty directory
//   P/path     a file that exists but cannot be read (permission denied)
//   B/path     a file whose read fails
// Directories are implied by the paths below them. Tools are replayed as a machine tree
// replays them: from F/ai-hwaccel-tools/index and the files it names; environment
// variables come from F/proc/self/environ. make_corpus.py packs tests/machines/* this way.
#include "fuzz_common.hpp"

#include "ai_hwaccel/detect/detect.hpp"
#include "ai_hwaccel/detect/sysfs.hpp"
#include "ai_hwaccel/detect/system.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace ah = ai_hwaccel;

namespace {

class memory_machine {
public:
    explicit memory_machine(std::string_view input) {
        while (!input.empty()) {
            const auto end = input.find('\x1e');
            add(input.substr(0, end));
            input = end == std::string_view::npos ? std::string_view{} : input.substr(end + 1);
        }
    }

    ah::file_read read_file(std::string_view path, std::size_t cap = ah::default_read_cap) const {
        ah::file_read r;
        const auto n = nodes_.find(resolve(path));
        if (n == nodes_.end()) {
            r.status = ah::read_status::not_found;
            return r;
        }
        switch (n->second.kind) {
        case 'F':
            r.data = n->second.content.substr(0, cap);
            r.status = n->second.content.size() > cap ? ah::read_status::truncated : ah::read_status::ok;
            break;
        case 'P': r.status = ah::read_status::permission_denied; break;
        default: r.status = ah::read_status::error; break;
        }
        return r;
    }

    std::optional<std::vector<std::string>> list_dir(std::string_view path) const {
        const std::string dir = resolve(path);
        const auto n = nodes_.find(dir);
        if (n == nodes_.end() || n->second.kind != 'D') return std::nullopt;
        std::vector<std::string> names;
        const std::string prefix = dir == "/" ? dir : dir + "/";
        for (auto it = nodes_.lower_bound(prefix); it != nodes_.end() && it->first.starts_with(prefix); ++it) {
            const std::string_view rest = std::string_view(it->first).substr(prefix.size());
            if (!rest.empty() && rest.find('/') == std::string_view::npos) names.emplace_back(rest);
        }
        return names;
    }

    std::optional<std::string> read_link(std::string_view path) const {
        // The link itself, not what it points to: resolve only the folders above it.
        const std::string p = normal(path);
        const auto slash = p.rfind('/');
        const std::string full = ah::detail::join_path(resolve(p.substr(0, slash == 0 ? 1 : slash)), p.substr(slash + 1));
        const auto n = nodes_.find(full);
        if (n == nodes_.end() || n->second.kind != 'L') return std::nullopt;
        return n->second.content;
    }

    bool exists(std::string_view path) const { return nodes_.count(resolve(path)) != 0; }

    std::optional<std::string> env(std::string_view name) const {
        if (name.empty() || name.find('=') != std::string_view::npos) return std::nullopt;
        const auto r = read_file("/proc/self/environ", 1u << 20);
        if (!r.ok()) return std::nullopt;
        const std::string_view text = r.data;
        const char sep = text.find('\0') != std::string_view::npos ? '\0' : '\n';
        for (std::size_t pos = 0; pos < text.size();) {
            auto end = text.find(sep, pos);
            if (end == std::string_view::npos) end = text.size();
            const std::string_view entry = text.substr(pos, end - pos);
            if (entry.size() > name.size() && entry.starts_with(name) && entry[name.size()] == '=')
                return std::string(entry.substr(name.size() + 1));
            pos = end + 1;
        }
        return std::nullopt;
    }

    ah::tool_result run(const ah::tool_request& request) const {
        ah::tool_result r;
        if (request.argv.empty()) return r;
        const auto index = read_file(ah::capture_index_path, 1u << 20);
        if (!index.ok()) return r;
        const ah::capture_index idx = ah::parse_capture_index(index.data);
        const ah::capture_entry* e = idx.find(ah::command_line_of(request.argv));
        if (!e) return r;
        r.status = e->status;
        r.exit_code = e->exit_code;
        r.signal = e->signal;
        if (!e->stdout_file.empty()) {
            auto out = read_file(std::string(ah::capture_dir_path) + "/" + e->stdout_file, request.stdout_cap);
            if (!out.ok()) {
                r.status = ah::tool_status::not_executable;
                return r;
            }
            r.out = std::move(out.data);
            if (out.status == ah::read_status::truncated) {
                r.out_truncated = true;
                if (r.status == ah::tool_status::exited) r.status = ah::tool_status::truncated;
            }
        }
        return r;
    }

private:
    struct node {
        char kind = 'D';
        std::string content;
    };

    static std::string normal(std::string_view path) { return ah::detail::join_path("/", path); }

    void add(std::string_view record) {
        const auto nl = record.find('\n');
        const std::string_view head = record.substr(0, nl);
        const std::string_view content = nl == std::string_view::npos ? std::string_view{} : record.substr(nl + 1);
        if (head.size() < 2 || std::string_view("FLDPB").find(head[0]) == std::string_view::npos) return;
        const std::string path = normal(head.substr(1));
        if (path == "/") return;
        nodes_[path] = node{head[0], std::string(head[0] == 'L' ? ah::detail::trim(content) : content)};
        for (auto slash = path.rfind('/'); slash != std::string::npos && slash > 0; slash = path.rfind('/', slash - 1))
            nodes_.try_emplace(path.substr(0, slash));
        nodes_.try_emplace("/");
    }

    // `path` with every link among its components followed (at most 40 of them, as the
    // kernel allows); a loop or a dangling link leaves a path that names nothing.
    std::string resolve(std::string_view path) const {
        std::string p = normal(path);
        for (int hops = 0; hops < 40; ++hops) {
            bool followed = false;
            for (std::size_t end = 1; end <= p.size(); ++end) {
                if (end != p.size() && p[end] != '/') continue;
                const auto n = nodes_.find(p.substr(0, end));
                if (n == nodes_.end()) return p;
                if (n->second.kind != 'L') continue;
                const std::string prefix = p.substr(0, end);
                const std::string parent = prefix.substr(0, std::max<std::size_t>(prefix.rfind('/'), 1));
                p = ah::detail::join_path(ah::detail::join_path(parent, n->second.content), "." + p.substr(end));
                followed = true;
                break;
            }
            if (!followed) return p;
        }
        return "/\x1e-link-loop";
    }

    std::map<std::string, node, std::less<>> nodes_;
};
static_assert(ah::system_view<memory_machine>);

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const memory_machine machine(fuzz::as_text(data, size));
    auto d = ah::detector::all();
    d.parallel(false);
    const auto t = d.run_timed(machine);
    fuzz::consume(t.registry);
    return 0;
}
