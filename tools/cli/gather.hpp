// ai-hwaccel CLI: `gather`, the files and tool outputs a detection read, for a bug report.
//
// Included by main.cpp after its helpers (usage_error, error, out, str, fmt_bytes,
// parse_options). The
// detection runs through a recording view (detect/record.hpp) and what it read is
// written as a machine tree: a folder, or a tarball made by the system's `tar` (found in
// PATH's absolute entries and the system folders by the library's runner, no shell).
// docs/cli-gather.md describes the tree and what it may reveal.
#pragma once

#include "ai_hwaccel/detect/detect.hpp"
#include "ai_hwaccel/detect/process.hpp"
#include "ai_hwaccel/detect/record.hpp"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace {

namespace gather_cli {

constexpr std::string_view gather_help =
    "usage: ai-hwaccel gather [--root DIR] --output DIR|FILE.tar|FILE.tar.gz [--force]\n"
    "\n"
    "Detects as `detect` does and copies exactly what the detection read (files, folder\n"
    "listings, links, tool outputs, the environment variables asked for) into a machine tree\n"
    "that `ai-hwaccel detect --root` reads back to the same result. Attach it to a bug report.\n"
    "\n"
    "  --root DIR       gather from a captured machine tree instead of this machine\n"
    "  --output DIR     write the tree into DIR (made 0700; must be empty unless --force;\n"
    "                   not the --root tree itself)\n"
    "  --output FILE.tar, FILE.tar.gz, FILE.tgz\n"
    "                   write it as a tarball instead (made by the system's tar; mode 0600)\n"
    "  --force          write into a folder that is not empty, or replace an existing tarball\n"
    "\n"
    "NVML is not used while gathering: NVIDIA's command-line tool runs instead, so that its output can be kept.\n"
    "Review what was gathered before sharing it: it can hold serial numbers, UUIDs, host\n"
    "names and the values of the environment variables the probes read.\n";

// Whether `p` ends with `suffix`, in any case (an archive named "C.TAR.GZ" is still one).
bool ends_with_any_case(std::string_view p, std::string_view suffix) {
    return p.size() >= suffix.size() && ai_hwaccel::detail::iequals(p.substr(p.size() - suffix.size()), suffix);
}

bool is_tarball(std::string_view p, bool& gz) {
    gz = ends_with_any_case(p, ".tar.gz") || ends_with_any_case(p, ".tgz");
    return gz || ends_with_any_case(p, ".tar");
}

void print_notes(const ai_hwaccel::machine_tree_result& w) {
    for (const auto& n : w.notes) std::fprintf(stderr, "note: %s\n", n.c_str());
}

int summary(const ai_hwaccel::machine_tree_result& w, const ai_hwaccel::accelerator_registry& reg,
            const std::string& where) {
    print_notes(w);
    std::printf("gathered %zu file(s) (%zu empty placeholder(s)), %zu link(s), %zu folder(s), %zu tool output(s), "
                "%llu bytes into %s\n",
                w.files, w.placeholders, w.links, w.directories, w.tool_outputs, static_cast<unsigned long long>(w.bytes),
                where.c_str());
    std::size_t accelerators = 0;
    for (const auto& p : reg.all())
        if (p.is_accelerator()) ++accelerators;
    std::printf("the detection found %zu device(s), %zu accelerator(s), %zu warning(s)\n", reg.all().size(), accelerators,
                reg.warnings().size());
    std::printf("review it before sharing: it can hold serial numbers, UUIDs, host names and environment values\n");
    return 0;
}

int cmd_gather(std::span<const std::string_view> args) {
    namespace ah = ai_hwaccel;
    options o;
    std::string bad;
    if (!parse_options(args, "gather", {{"--root"}, {"--output"}, {"--force", false}}, o, bad)) return usage_error(bad);
    std::optional<std::string> root, output;
    if (const auto v = o.get("--root")) root = str(*v);
    if (const auto v = o.get("--output")) output = str(*v);
    const bool force = o.has("--force");
    if (!output) return usage_error("gather needs --output DIR or --output FILE.tar[.gz]");
    // A name that asks for an archive gather cannot make would otherwise become a folder.
    for (std::string_view ext : {".tar.bz2", ".tbz2", ".tbz", ".tar.xz", ".txz", ".tar.zst", ".tzst", ".zip", ".7z"})
        if (ends_with_any_case(*output, ext))
            return usage_error("--output: gather writes a folder, .tar, .tar.gz or .tgz, not " + str(ext) + " ('" +
                               *output + "')");
    if (root) {
        struct stat st {};
        if (::stat(root->c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
            return usage_error("--root: '" + *root + "' is not a directory");
    }
    bool gz = false;
    const bool tarball = is_tarball(*output, gz);
    if (root && !tarball) {
        // Written onto the tree it reads, a tree would lose what it was not read for (files
        // only listed become empty placeholders, long files are cut where the read stopped).
        char from[PATH_MAX], to[PATH_MAX];
        if (::realpath(root->c_str(), from) && ::realpath(output->c_str(), to) && std::strcmp(from, to) == 0)
            return usage_error("--output: '" + *output + "' is the --root tree itself");
    }
    const ah::host_system sys(root.value_or(std::string()));
    const auto recorded = ah::record_detection(sys);

    if (!tarball) {
        const auto w = ah::write_machine_tree(recorded.recording, *output, {force});
        if (!w.ok) {
            print_notes(w);
            return error(w.message);
        }
        return summary(w, recorded.registry, *output);
    }

    // A tarball: the tree is written in a private folder beside it, archived there, and
    // the archive renamed over the output (a link at the output is replaced, not followed).
    struct stat st {};
    if (::lstat(output->c_str(), &st) == 0 && !force)
        return error("'" + *output + "' exists (use --force to replace it)");
    const auto tar = ah::find_tool("tar");
    if (tar.status != ah::tool_status::exited)
        return error("no `tar` in PATH's absolute folders or the system folders; gather into a folder instead");
    std::filesystem::path parent = std::filesystem::path(*output).parent_path();
    if (parent.empty()) parent = ".";
    std::string stage = (parent / ".ai-hwaccel-gather-XXXXXX").string();
    if (::mkdtemp(stage.data()) == nullptr)
        return error("cannot create a private folder beside '" + *output + "': " + std::strerror(errno));
    const auto clean = [&stage] {
        std::error_code ec;
        std::filesystem::remove_all(stage, ec); // our own folder; links in it are removed, not followed
    };
    const std::string tree = stage + "/machine";
    const auto w = ah::write_machine_tree(recorded.recording, tree);
    if (!w.ok) {
        print_notes(w);
        clean();
        return error(w.message);
    }
    ah::tool_request request;
    request.argv = {tar.path, gz ? "-czf" : "-cf", stage + "/archive", "-C", tree, "."};
    request.timeout = std::chrono::seconds(300);
    const auto r = ah::run_tool(request);
    if (!r.succeeded()) {
        std::string why = str(ah::to_string(r.status));
        if (r.status == ah::tool_status::exited) why = "exit status " + std::to_string(r.exit_code);
        if (!r.err.empty()) why += ": " + r.err.substr(0, r.err.find('\n'));
        clean();
        return error(tar.path + " failed (" + why + ")");
    }
    // As private as the folder gather would have made (tar creates it 0666 less the umask).
    if (::chmod((stage + "/archive").c_str(), 0600) != 0) {
        const std::string why = std::strerror(errno);
        clean();
        return error("cannot make '" + *output + "' private: " + why);
    }
    if (::rename((stage + "/archive").c_str(), output->c_str()) != 0) {
        const std::string why = std::strerror(errno);
        clean();
        return error("cannot write '" + *output + "': " + why);
    }
    clean();
    std::printf("archived with %s; extract with: mkdir m && tar -xf %s -C m && ai-hwaccel detect --root m\n",
                tar.path.c_str(), output->c_str());
    return summary(w, recorded.registry, *output);
}

} // namespace gather_cli

} // namespace
