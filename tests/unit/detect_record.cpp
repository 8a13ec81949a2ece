#include "ai_hwaccel/detect/record.hpp"

#include "fixtures.hpp"

#include <doctest/doctest.h>

#if AI_HWACCEL_JSON
#include "ai_hwaccel/io/json.hpp"
#endif

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <set>
#include <string>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace ah = ai_hwaccel;
namespace fs = std::filesystem;

namespace {

// A rooted host whose tool runs are scripted by command line (unscripted: not found).
struct scripted_view : ah::host_system {
    using ah::host_system::host_system;
    std::vector<std::pair<std::string, ah::tool_result>> script;
    ah::tool_result run(const ah::tool_request& request) const {
        const auto line = ah::command_line_of(request.argv);
        for (const auto& [l, r] : script)
            if (l == line) return r;
        return {};
    }
};

ah::tool_result result(ah::tool_status s, std::string out = {}, int code = 0, int sig = 0) {
    ah::tool_result r;
    r.status = s;
    r.out = std::move(out);
    r.exit_code = code;
    r.signal = sig;
    return r;
}

ah::tool_request request(std::vector<std::string> argv, std::size_t cap = std::size_t{16} << 20) {
    ah::tool_request r;
    r.argv = std::move(argv);
    r.stdout_cap = cap;
    return r;
}

// Regular files under `root`, relative, with '/'.
std::set<std::string> regular_files(const fs::path& root) {
    std::set<std::string> files;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec))
        if (it->is_regular_file(ec) && !it->is_symlink(ec)) files.insert(it->path().lexically_relative(root).generic_string());
    return files;
}

std::string registry_text(const ah::accelerator_registry& reg) {
#if AI_HWACCEL_JSON
    return nlohmann::json(reg).dump(1, ' ', false, nlohmann::json::error_handler_t::replace);
#else
    std::string s;
    for (const auto& p : reg.all())
        s += std::string(p.name.view()) + "|" + std::to_string(p.memory_bytes.value_or(0)) + "|" +
             std::to_string(p.utilization_percent.value_or(-1)) + "\n";
    s += "devices " + std::to_string(reg.all().size()) + "\n";
    for (const auto& w : reg.warnings()) s += ah::to_string(w) + "\n";
    return s;
#endif
}

} // namespace

TEST_CASE("recording_system") {
    test::scratch_dir dir;
    dir.write("proc/cpuinfo", "processor: 0\n");
    dir.write("sys/class/x/a", "1\n");
    dir.write("proc/self/environ", std::string("A=1\0B=2\0", 8));
    ::symlink("../../devices/pci0", (dir.path() / "sys/class/x/link").c_str());
    scripted_view inner(dir.path().string());
    inner.script.emplace_back("tool -v", result(ah::tool_status::exited, "v1\n"));
    const ah::recording_system<scripted_view> rec(inner);
    static_assert(ah::system_view<ah::recording_system<scripted_view>>);

    CHECK(rec.read_file("/proc/cpuinfo").data == "processor: 0\n");
    CHECK(rec.read_file("/missing").status == ah::read_status::not_found);
    CHECK(rec.list_dir("/sys/class/x")->size() == 2);
    CHECK(rec.read_link("/sys/class/x/link") == "../../devices/pci0");
    CHECK(rec.exists("/sys/class/x/a"));
    CHECK_FALSE(rec.exists("/nothing"));
    CHECK(rec.env("A") == "1");
    CHECK_FALSE(rec.env("C"));
    CHECK(rec.run(request({"/usr/bin/tool", "-v"})).out == "v1\n");
    CHECK(rec.run(request({"absent"})).status == ah::tool_status::not_found);
    CHECK(rec.replays_tools()); // forwarded: the inner view replays

    const auto r = rec.recording();
    CHECK(r.reads.size() == 2);
    CHECK(r.reads.at("/proc/cpuinfo").data == "processor: 0\n");
    CHECK(r.reads.at("/missing").status == ah::read_status::not_found);
    CHECK(r.listings.at("/sys/class/x")->size() == 2);
    CHECK(r.links.at("/sys/class/x/link") == "../../devices/pci0");
    CHECK(r.existence.at("/sys/class/x/a"));
    CHECK_FALSE(r.existence.at("/nothing"));
    CHECK(r.environment.at("A") == "1");
    CHECK_FALSE(r.environment.at("C"));
    REQUIRE(r.tools.size() == 1); // a tool not found leaves nothing to write
    CHECK(r.tools[0].command_line == "tool -v");
    CHECK(r.conflicts.empty());
    // The environment file read by the inner view to answer env() is not a probe's read.
    CHECK_FALSE(r.reads.count("/proc/self/environ"));
}

TEST_CASE("machine_recording::note_read") {
    ah::machine_recording r;
    r.note_read("/f", {ah::read_status::truncated, "abc"});
    r.note_read("/f", {ah::read_status::ok, "abcdef"});
    CHECK(r.reads.at("/f").data == "abcdef");
    CHECK(r.reads.at("/f").status == ah::read_status::ok);
    r.note_read("/f", {ah::read_status::truncated, "ab"}); // the start of it: agrees
    CHECK(r.conflicts.empty());
    r.note_read("/f", {ah::read_status::ok, "changed"});
    CHECK(r.reads.at("/f").data == "abcdef");
    CHECK(r.conflicts.size() == 1);
}

TEST_CASE("write_machine_tree") {
    test::scratch_dir src;
    src.write("proc/meminfo", "MemTotal: 1 kB\n");
    src.write("big", std::string(100, 'x'));
    src.write("sys/devices/pci0/vendor", "0x10de\n");
    src.write("sys/devices/pci0/unread", "never read\n");
    src.write("sys/bus/devs/other", "listed only\n");
    fs::create_directories(src.path() / "sys/bus/devs/subdir");
    fs::create_directories(src.path() / "sys/class/drm");
    ::symlink("../../devices/pci0", (src.path() / "sys/class/drm/card0").c_str());
    ::symlink("../devices/pci0", (src.path() / "sys/bus/pcidev").c_str());
    ::symlink("/sys/devices/pci0", (src.path() / "sys/abs").c_str()); // absolute: leaves a rooted tree
    ::symlink("../../../../../../../../sys/devices/pci0", (src.path() / "sys/climb").c_str());
    ::symlink("../gone", (src.path() / "sys/bus/devs/broken").c_str()); // listed, leads nowhere
    fs::create_directories(src.path() / "dev/dri");
    REQUIRE(::mkfifo((src.path() / "dev/fifo").c_str(), 0600) == 0);
    src.write("dev/nvidia0", "");
    src.write("proc/self/environ", std::string("CUDA_VISIBLE_DEVICES=0\0HOME=/root\0", 34));

    scripted_view inner(src.path().string());
    inner.script.emplace_back("smi -q", result(ah::tool_status::exited, "GPU 0\n"));
    inner.script.emplace_back("smi -L", result(ah::tool_status::exited, "", 9));
    inner.script.emplace_back("hang", result(ah::tool_status::timed_out, "partial"));
    inner.script.emplace_back("crash --now", result(ah::tool_status::signalled, "", 0, 11));
    inner.script.emplace_back("noexec", result(ah::tool_status::not_executable));
    inner.script.emplace_back("spawn", result(ah::tool_status::spawn_failed));
    auto longer = result(ah::tool_status::truncated, "0123456789");
    longer.out_truncated = true;
    inner.script.emplace_back("chatty", longer);
    const ah::recording_system<scripted_view> rec(inner);

    (void)rec.read_file("/proc/meminfo");
    (void)rec.read_file("/big", 10);
    (void)rec.read_link("/sys/class/drm/card0");
    (void)rec.read_file("/sys/class/drm/card0/vendor"); // through the link
    (void)rec.read_file("/sys/bus/pcidev/vendor"); // through a link never read itself
    (void)rec.read_link("/sys/abs");
    (void)rec.read_link("/sys/climb");
    (void)rec.list_dir("/sys/bus/devs");
    (void)rec.exists("/sys/bus/devs/broken");
    (void)rec.read_file("/dev/fifo");
    (void)rec.exists("/dev/nvidia0");
    (void)rec.exists("/dev/nvidia1");
    (void)rec.read_file("/missing");
    (void)rec.env("CUDA_VISIBLE_DEVICES");
    (void)rec.env("NOT_SET");
    for (auto argv : std::vector<std::vector<std::string>>{
             {"/usr/bin/smi", "-q"}, {"smi", "-L"}, {"hang"}, {"crash", "--now"}, {"noexec"}, {"spawn"}, {"chatty"}, {"absent"}})
        (void)rec.run(request(argv, 10));

    test::scratch_dir out_parent;
    const std::string out = (out_parent.path() / "tree").string();
    const auto w = ah::write_machine_tree(rec.recording(), out);
    REQUIRE_MESSAGE(w.ok, w.message);
    INFO(w.notes.size());

    const ah::host_system tree(out);
    CHECK(tree.read_file("/proc/meminfo").data == "MemTotal: 1 kB\n");
    // A truncated read is cut again at the same cap.
    const auto big = tree.read_file("/big", 10);
    CHECK(big.status == ah::read_status::truncated);
    CHECK(big.data == std::string(10, 'x'));
    // The link, and the file read through it where the link leads.
    CHECK(tree.read_link("/sys/class/drm/card0") == "../../devices/pci0");
    CHECK(tree.read_file("/sys/class/drm/card0/vendor").data == "0x10de\n");
    CHECK(tree.read_file("/sys/devices/pci0/vendor").data == "0x10de\n");
    // A folder read through is a link when it was one, though nobody read it.
    CHECK(tree.read_link("/sys/bus/pcidev") == "../devices/pci0");
    CHECK(tree.read_file("/sys/bus/pcidev/vendor").data == "0x10de\n");
    CHECK(tree.read_file("/sys/devices/pci0/unread").status == ah::read_status::not_found);
    // Links that would leave a rooted tree are rewritten to the same place inside it.
    CHECK(tree.read_link("/sys/abs") == "devices/pci0");
    CHECK(tree.read_link("/sys/climb") == "devices/pci0");
    // The listing shows the same names; entries never looked at are empty files.
    auto names = *tree.list_dir("/sys/bus/devs");
    std::sort(names.begin(), names.end());
    CHECK(names == std::vector<std::string>{"broken", "other", "subdir"});
    CHECK(tree.read_file("/sys/bus/devs/other").data.empty());
    // A listed entry that did not exist is listed and does not exist in the tree either.
    CHECK_FALSE(tree.exists("/sys/bus/devs/broken"));
    CHECK(tree.read_file("/sys/bus/devs/broken").status == ah::read_status::not_found);
    CHECK(std::any_of(w.notes.begin(), w.notes.end(),
                      [](const std::string& n) { return n.find("/sys/bus/devs/broken: listed but not there") == 0; }));
    // A read that failed as not a regular file fails the same way.
    CHECK(tree.read_file("/dev/fifo").status == ah::read_status::error);
    CHECK(tree.exists("/dev/nvidia0"));
    CHECK_FALSE(tree.exists("/dev/nvidia1"));
    CHECK_FALSE(tree.exists("/missing"));
    // Only the variables read, with their values.
    CHECK(tree.env("CUDA_VISIBLE_DEVICES") == "0");
    CHECK_FALSE(tree.env("HOME"));
    CHECK_FALSE(tree.env("NOT_SET"));
    // Tool runs replay with their outcomes.
    const auto q = tree.run(request({"smi", "-q"}, 10));
    CHECK(q.succeeded());
    CHECK(q.out == "GPU 0\n");
    const auto l = tree.run(request({"smi", "-L"}, 10));
    CHECK(l.status == ah::tool_status::exited);
    CHECK(l.exit_code == 9);
    const auto h = tree.run(request({"hang"}, 10));
    CHECK(h.status == ah::tool_status::timed_out);
    CHECK(h.out == "partial");
    const auto c = tree.run(request({"crash", "--now"}, 10));
    CHECK(c.status == ah::tool_status::signalled);
    CHECK(c.signal == 11);
    CHECK(tree.run(request({"noexec"}, 10)).status == ah::tool_status::not_executable);
    CHECK(tree.run(request({"spawn"}, 10)).status == ah::tool_status::not_found);
    const auto ch = tree.run(request({"chatty"}, 10));
    CHECK(ch.status == ah::tool_status::truncated);
    CHECK(ch.out == "0123456789");
    CHECK(tree.run(request({"absent"}, 10)).status == ah::tool_status::not_found);
    CHECK(w.tool_outputs == 6); // every run but the absent one and the one that could not start
    CHECK(std::any_of(w.notes.begin(), w.notes.end(), [](const std::string& n) { return n.find("spawn") != std::string::npos; }));

    // Nothing that was not observed: the files counted are the files there.
    const auto files = regular_files(out);
    CHECK(files.size() == w.files);
    CHECK(std::set<std::string>(w.written_files.begin(), w.written_files.end()) == files);
    CHECK_FALSE(files.count("sys/devices/pci0/unread"));
    CHECK_FALSE(files.count("proc/self/cgroup"));
    // Private: the target is the caller's alone.
    struct stat st {};
    REQUIRE(::stat(out.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0700);

    SUBCASE("an existing folder that is not empty is refused without force") {
        const auto again = ah::write_machine_tree(rec.recording(), out);
        CHECK_FALSE(again.ok);
        CHECK(again.message.find("not empty") != std::string::npos);
        const auto forced = ah::write_machine_tree(rec.recording(), out, {true});
        CHECK(forced.ok);
        CHECK(ah::host_system(out).read_file("/proc/meminfo").data == "MemTotal: 1 kB\n");
    }
    SUBCASE("an entry that cannot be written fails the whole tree, naming it") {
        fs::remove(fs::path(out) / "proc/meminfo");
        fs::create_directories(fs::path(out) / "proc/meminfo"); // force never removes a folder
        const auto forced = ah::write_machine_tree(rec.recording(), out, {true});
        CHECK_FALSE(forced.ok);
        CHECK(forced.not_written == 1);
        CHECK(forced.message.find("1 of ") == 0);
        CHECK(forced.message.find("incomplete") != std::string::npos);
        CHECK(std::any_of(forced.notes.begin(), forced.notes.end(), [](const std::string& n) {
            return n.find("/proc/meminfo: not written (meminfo: already exists)") == 0;
        }));
        // What could be written was.
        CHECK(ah::host_system(out).read_file("/sys/devices/pci0/vendor").data == "0x10de\n");
    }
    SUBCASE("a target that is a link is refused") {
        const std::string link = (out_parent.path() / "link").string();
        fs::create_directories(out_parent.path() / "empty");
        REQUIRE(::symlink((out_parent.path() / "empty").c_str(), link.c_str()) == 0);
        const auto via = ah::write_machine_tree(rec.recording(), link);
        CHECK_FALSE(via.ok);
        CHECK(fs::is_empty(out_parent.path() / "empty"));
    }
    SUBCASE("force never writes through a link planted in the tree") {
        test::scratch_dir outside;
        fs::remove_all(fs::path(out) / "proc");
        REQUIRE(::symlink(outside.path().c_str(), (fs::path(out) / "proc").c_str()) == 0);
        const auto forced = ah::write_machine_tree(rec.recording(), out, {true});
        CHECK(forced.ok);
        CHECK(fs::is_empty(outside.path()));
        CHECK(fs::is_directory(fs::symlink_status(fs::path(out) / "proc")));
    }
}

TEST_CASE("write_machine_tree: a link's '..' after another link, and targets it must not use") {
    // hand-made: b leads to the root; l's text climbs through b. Read as text, l stays
    // inside; the kernel follows b first and climbed out of the tree (to the host's
    // /etc/hostname). Now l is written as the path to where it leads inside the tree.
    ah::machine_recording rec;
    rec.links["/a/c/d/e/b"] = std::string("/");
    rec.links["/a/c/d/e/l"] = std::string("b/../../../../../etc/hostname");
    rec.links["/a/c/d/e/n"] = std::string("../../x"); // a plain relative target: kept as it is
    rec.reads["/sys/x"] = ah::machine_recording::read_entry{ah::read_status::ok, "x\n"};
    test::scratch_dir parent;
    const auto out = parent.path() / "tree";
    const auto w = ah::write_machine_tree(rec, out.string());
    REQUIRE_MESSAGE(w.ok, w.message);
    char buf[256] = {};
    REQUIRE(::readlink((out / "a/c/d/e/l").c_str(), buf, sizeof buf - 1) > 0);
    CHECK(std::string(buf) == "../../../../etc/hostname");
    const auto real = fs::weakly_canonical(out / "a/c/d/e/l");
    CHECK(real.string().rfind(fs::canonical(out).string(), 0) == 0);
    CHECK(ah::host_system(out.string()).read_link("/a/c/d/e/n") == "../../x");

    // "lnk/" is the link "lnk": refused, not written through.
    fs::create_directories(parent.path() / "real");
    REQUIRE(::symlink("real", (parent.path() / "lnk").c_str()) == 0);
    const auto through = ah::write_machine_tree(rec, (parent.path() / "lnk").string() + "/");
    CHECK_FALSE(through.ok);
    CHECK(fs::is_empty(parent.path() / "real"));

    // An empty folder open to all is made private; one another user owns is refused.
    const auto open_dir = parent.path() / "open";
    fs::create_directories(open_dir);
    REQUIRE(::chmod(open_dir.c_str(), 0777) == 0);
    const auto made_private = ah::write_machine_tree(rec, open_dir.string());
    REQUIRE_MESSAGE(made_private.ok, made_private.message);
    struct stat st {};
    REQUIRE(::stat(open_dir.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0700);
    if (::geteuid() == 0) { // only root can give a folder away
        const auto theirs = parent.path() / "theirs";
        fs::create_directories(theirs);
        REQUIRE(::chown(theirs.c_str(), 65534, 65534) == 0);
        const auto refused = ah::write_machine_tree(rec, theirs.string());
        CHECK_FALSE(refused.ok);
        CHECK(refused.message.find("belongs to another user") != std::string::npos);
        CHECK(fs::is_empty(theirs));
    }
}

TEST_CASE("write_machine_tree removes a file it could not finish") {
    test::scratch_dir src;
    src.write("small", "0123456789\n");
    src.write("large", std::string(5000, 'x'));
    const ah::host_system inner(src.path().string());
    const ah::recording_system<ah::host_system> rec(inner);
    (void)rec.read_file("/small");
    (void)rec.read_file("/large");

    // A full disk, as a file size limit: writes past 4 KiB fail with EFBIG.
    struct rlimit before {};
    REQUIRE(::getrlimit(RLIMIT_FSIZE, &before) == 0);
    if (before.rlim_cur != RLIM_INFINITY && before.rlim_cur < 8192) {
        MESSAGE("skipped: the file size limit is already below 8 KiB");
        return;
    }
    const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
    struct rlimit small_limit = before;
    small_limit.rlim_cur = 4096;
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &small_limit) == 0);
    test::scratch_dir out_parent;
    const std::string out = (out_parent.path() / "tree").string();
    const auto w = ah::write_machine_tree(rec.recording(), out);
    ::setrlimit(RLIMIT_FSIZE, &before);
    std::signal(SIGXFSZ, old_handler);

    CHECK_FALSE(w.ok);
    CHECK(w.not_written == 1);
    CHECK(std::any_of(w.notes.begin(), w.notes.end(),
                      [](const std::string& n) { return n.find("/large: not written") == 0; }));
    // No file cut short is left to replay as a different machine.
    CHECK_FALSE(fs::exists(fs::path(out) / "large"));
    CHECK(ah::host_system(out).read_file("/small").data == "0123456789\n");
}

namespace {
// Two recordings hold the same observations (tool runs compared by line and outcome).
bool same_recording(const ah::machine_recording& a, const ah::machine_recording& b) {
    auto same_reads = [&] {
        if (a.reads.size() != b.reads.size()) return false;
        for (const auto& [path, e] : a.reads) {
            const auto it = b.reads.find(path);
            if (it == b.reads.end() || it->second.status != e.status || it->second.data != e.data) return false;
        }
        return true;
    };
    auto same_tools = [&] {
        if (a.tools.size() != b.tools.size()) return false;
        for (const auto& t : a.tools) {
            const auto it = std::find_if(b.tools.begin(), b.tools.end(),
                                         [&](const auto& u) { return u.command_line == t.command_line; });
            if (it == b.tools.end() || it->status != t.status || it->exit_code != t.exit_code || it->out != t.out)
                return false;
        }
        return true;
    };
    return same_reads() && same_tools() && a.listings == b.listings && a.links == b.links &&
           a.folder_links == b.folder_links && a.existence == b.existence && a.environment == b.environment &&
           a.conflicts == b.conflicts;
}
} // namespace

TEST_CASE("record_detection") {
    // The proof: for every fixture machine, detecting on the tree written from a recording
    // finds exactly what detecting on the machine found, from no file it did not read.
    const fs::path machines(AI_HWACCEL_MACHINES_DIR);
    std::error_code ec;
    if (!fs::is_directory(machines, ec)) {
        MESSAGE("skipped: no fixture machines at " << machines.string());
        return;
    }
    std::size_t checked = 0;
    for (const auto& entry : fs::directory_iterator(machines)) {
        if (!test::is_fixture_machine(entry)) continue;
        const std::string machine = entry.path().filename().string();
        CAPTURE(machine);
        const ah::host_system original(entry.path().string());
        const auto direct = ah::detect(original);
        const auto recorded = ah::record_detection(original);
        // Recording changes nothing about the detection.
        CHECK(registry_text(recorded.registry) == registry_text(direct));
        // The host is recorded through its observer; the wrapper, on the same machine,
        // sees the same calls and answers.
        const auto wrapped = ah::record_detection<ah::host_system>(original);
        CHECK(registry_text(wrapped.registry) == registry_text(direct));
        CHECK(same_recording(wrapped.recording, recorded.recording));

        test::scratch_dir scratch;
        const std::string out = (scratch.path() / "gathered").string();
        const auto w = ah::write_machine_tree(recorded.recording, out);
        REQUIRE_MESSAGE(w.ok, w.message);
        std::string notes;
        for (const auto& n : w.notes) notes += n + "\n";
        INFO(notes);
        CHECK(w.notes.empty());
        const auto again = ah::detect(ah::host_system(out));
        CHECK(registry_text(again) == registry_text(direct));

        // No file the detection did not read: each file written is a file of the machine
        // at the same place with the same bytes (a read's bytes or, for a placeholder,
        // nothing), or one of the captures, rewritten under its own name.
        const auto files = regular_files(out);
        CHECK(files.size() == w.files);
        const auto before = regular_files(entry.path());
        CHECK(files.size() <= before.size());
        for (const auto& f : files) {
            CAPTURE(f);
            if (f.starts_with("ai-hwaccel-tools/")) continue;
            if (f == "proc/self/environ") continue; // only the variables read
            const auto mine = test::read_file(fs::path(out) / f);
            const auto theirs = test::read_file(entry.path() / f);
            REQUIRE(mine);
            CHECK(theirs);
            if (theirs && !mine->empty()) CHECK(*mine == *theirs);
        }
        MESSAGE(machine << ": " << before.size() << " files in the machine, " << files.size() << " gathered ("
                        << w.placeholders << " empty placeholders, " << w.tool_outputs << " tool runs, " << w.bytes
                        << " bytes)");
        ++checked;
    }
    CHECK(checked >= 10);
}
