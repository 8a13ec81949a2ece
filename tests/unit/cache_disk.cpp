#include "ai_hwaccel/cache/disk.hpp"

#include <doctest/doctest.h>

#if AI_HWACCEL_HAS_DISK_CACHE

#include "fixtures.hpp"

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <sched.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ah = ai_hwaccel;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {
// A registry that says which writer made it: one GPU whose index is `n`.
ah::accelerator_registry numbered(std::uint32_t n) {
    ah::accelerator_profile p;
    p.kind = ah::device_kind::cuda_gpu;
    p.index = n;
    p.name = "Test GPU";
    p.memory_bytes = {std::uint64_t{8} << 30, ah::origin::tool};
    ah::accelerator_registry r({p});
    r.add(ah::warning{ah::warning_kind::tool_failed, ah::backend_id::cuda, "nvidia-smi", "test", 3});
    return r;
}

std::string slurp(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

struct cache_fixture {
    test::scratch_dir scratch;
    fs::path folder = scratch.path() / "cache" / "ai-hwaccel";
    std::atomic<std::int64_t> now_s{1'700'000'000};

    ah::disk_cache_options options() {
        ah::disk_cache_options o;
        o.folder = folder.string();
        o.max_age = 60s;
        o.now = [this] { return std::chrono::system_clock::time_point(std::chrono::seconds(now_s.load())); };
        return o;
    }
    ah::disk_cache cache() { return ah::disk_cache(options()); }
    fs::path file() const { return folder / "registry.json"; }
    std::size_t files_in_folder() const {
        std::size_t n = 0;
        for ([[maybe_unused]] const auto& e : fs::directory_iterator(folder)) ++n;
        return n;
    }
};

std::size_t cache_warnings(std::span<const ah::warning> ws) { return test::count_kind(ws, ah::warning_kind::cache_invalid); }
} // namespace

TEST_CASE("default_disk_cache_folder") {
    const std::string f = ah::default_disk_cache_folder();
    if (!f.empty()) {
        CHECK(f.front() == '/');
        CHECK(f.ends_with("/ai-hwaccel"));
        CHECK_FALSE(f.starts_with("/tmp/"));
    }
}

TEST_CASE("current_host_identity") {
    const auto id = ah::current_host_identity();
    CHECK_FALSE(id.hostname.empty());
    if (fs::exists("/proc/sys/kernel/random/boot_id")) CHECK(id.boot_id.size() == 36);
}

TEST_CASE("process_fingerprint") {
    // What detection reads of the process: a visibility mask, set, empty or unset, and
    // the CPUs it may run on, each change the digest; putting them back restores it.
    const std::string before = ah::process_fingerprint();
    CHECK(before.size() == 16);
    CHECK(ah::current_host_identity().process == before);
    const char* saved = std::getenv("CUDA_VISIBLE_DEVICES");
    const std::string kept = saved ? saved : "";
    REQUIRE(::setenv("CUDA_VISIBLE_DEVICES", "1", 1) == 0);
    const std::string one = ah::process_fingerprint();
    REQUIRE(::setenv("CUDA_VISIBLE_DEVICES", "", 1) == 0);
    const std::string empty = ah::process_fingerprint();
    REQUIRE(::unsetenv("CUDA_VISIBLE_DEVICES") == 0);
    const std::string unset = ah::process_fingerprint();
    if (saved) REQUIRE(::setenv("CUDA_VISIBLE_DEVICES", kept.c_str(), 1) == 0);
    CHECK(one != empty);
    CHECK(one != unset);
    CHECK(empty != unset);
    CHECK(ah::process_fingerprint() == before);
    // The Vulkan loader's driver selection, which vulkaninfo (a tool detection runs) obeys.
    for (const char* v : {"VK_DRIVER_FILES", "VK_ICD_FILENAMES", "VK_ADD_DRIVER_FILES", "VK_LOADER_DRIVERS_SELECT",
                          "VK_LOADER_DRIVERS_DISABLE"}) {
        CAPTURE(v);
        const char* was = std::getenv(v);
        const std::string had = was ? was : "";
        REQUIRE(::setenv(v, "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json", 1) == 0);
        CHECK(ah::process_fingerprint() != before);
        if (was) REQUIRE(::setenv(v, had.c_str(), 1) == 0);
        else REQUIRE(::unsetenv(v) == 0);
    }
#if defined(__linux__)
    cpu_set_t all;
    CPU_ZERO(&all);
    REQUIRE(::sched_getaffinity(0, sizeof all, &all) == 0);
    if (CPU_COUNT(&all) >= 2) {
        cpu_set_t first;
        CPU_ZERO(&first);
        for (int c = 0; c < CPU_SETSIZE; ++c)
            if (CPU_ISSET(c, &all)) {
                CPU_SET(c, &first);
                break;
            }
        // This thread's mask is what /proc/self/status shows for the main thread, which
        // runs the tests.
        REQUIRE(::sched_setaffinity(0, sizeof first, &first) == 0);
        const std::string pinned = ah::process_fingerprint();
        REQUIRE(::sched_setaffinity(0, sizeof all, &all) == 0);
        CHECK(pinned != before);
        CHECK(ah::process_fingerprint() == before);
    }
    // Another mount namespace, as a container has: a child that enters one of its own
    // (where unprivileged user namespaces are allowed) digests otherwise.
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        ::close(fds[0]);
        const std::string own = ::unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0 ? ah::process_fingerprint() : "";
        const auto wrote = ::write(fds[1], own.data(), own.size());
        ::_exit(wrote == static_cast<::ssize_t>(own.size()) ? 0 : 1);
    }
    ::close(fds[1]);
    std::string got;
    char buf[64];
    for (::ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) got.append(buf, static_cast<std::size_t>(n));
    ::close(fds[0]);
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    if (got.empty()) MESSAGE("unshare(CLONE_NEWUSER | CLONE_NEWNS) refused here: the mount namespace is not checked");
    else CHECK(got != before);
#endif
}

TEST_CASE("disk_cache: a file another process's view wrote is detected again, without a warning") {
    // The ranks of a distributed job differ in CUDA_VISIBLE_DEVICES and CPUs: one rank's
    // detection is not another's.
    cache_fixture fx;
    auto rank0 = fx.options();
    rank0.identity = ah::host_identity{"node", "boot", "rank-0"};
    auto rank1 = fx.options();
    rank1.identity = ah::host_identity{"node", "boot", "rank-1"};
    REQUIRE(ah::disk_cache(rank0).store(numbered(0)).empty());
    const auto l = ah::disk_cache(rank1).load();
    CHECK(l.status == ah::disk_cache_status::other_process);
    CHECK_FALSE(l.registry.has_value());
    CHECK(l.warnings.empty());
    int runs = 0;
    const auto got = ah::disk_cache(rank1).get_or_detect([&] {
        ++runs;
        return numbered(1);
    });
    CHECK(runs == 1);
    CHECK(got == numbered(1)); // no cache warning added
    CHECK(ah::disk_cache(rank1).load().status == ah::disk_cache_status::hit);
    CHECK(ah::disk_cache(rank0).load().status == ah::disk_cache_status::other_process);
    CHECK(ah::to_string(ah::disk_cache_status::other_process) == "other_process");
}

TEST_CASE("disk_cache: the process's identity is taken when the cache is used, not when it was made") {
    // A program makes its cache first and sets a device mask afterwards (Python's
    // os.environ before CUDA starts): its masked detection is not another process's.
    cache_fixture fx;
    const char* saved = std::getenv("CUDA_VISIBLE_DEVICES");
    const std::string kept = saved ? saved : "";
    REQUIRE(::unsetenv("CUDA_VISIBLE_DEVICES") == 0);
    const auto cache = fx.cache();
    REQUIRE(::setenv("CUDA_VISIBLE_DEVICES", "1", 1) == 0);
    CHECK(cache.get_or_detect([] { return numbered(1); }) == numbered(1));
    CHECK(cache.identity().process == ah::process_fingerprint());
    REQUIRE(::unsetenv("CUDA_VISIBLE_DEVICES") == 0);
    // Without the mask, the same object and a new one both see another process's file.
    CHECK(cache.load().status == ah::disk_cache_status::other_process);
    int runs = 0;
    const auto all = fx.cache().get_or_detect([&] {
        ++runs;
        return numbered(8);
    });
    CHECK(runs == 1);
    CHECK(all == numbered(8));
    if (saved) REQUIRE(::setenv("CUDA_VISIBLE_DEVICES", kept.c_str(), 1) == 0);
}

TEST_CASE("disk_cache with a long file name still writes") {
    // The temporary file's name adds a pid, a counter and ticks to the cache file's: cut
    // so that it stays within a file name's 255 bytes.
    cache_fixture fx;
    auto o = fx.options();
    o.file_name = std::string(240, 'r');
    const ah::disk_cache cache(o);
    CHECK(cache.store(numbered(1)).empty());
    CHECK(cache.load().status == ah::disk_cache_status::hit);
    CHECK(fx.files_in_folder() == 1);
}

TEST_CASE("disk_cache::store") {
    cache_fixture fx;
    const auto cache = fx.cache();
    CHECK(cache.load().status == ah::disk_cache_status::missing);
    const auto reg = numbered(1);
    CHECK(cache.store(reg).empty());

    struct stat st {};
    REQUIRE(::stat(fx.folder.c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0700);
    REQUIRE(::lstat(fx.file().c_str(), &st) == 0);
    CHECK(S_ISREG(st.st_mode));
    CHECK((st.st_mode & 07777) == 0600);
    CHECK(fx.files_in_folder() == 1); // no temporary file left behind

    const auto text = slurp(fx.file());
    const auto j = nlohmann::json::parse(text);
    CHECK(j["format_version"] == ah::disk_cache_format_version);
    CHECK(j["library_version"] == ah::version.text);
    CHECK(j["hostname"] == ah::current_host_identity().hostname);
    CHECK(j["written_at"] == 1'700'000'000);

    const auto loaded = cache.load();
    CHECK(loaded.status == ah::disk_cache_status::hit);
    REQUIRE(loaded.registry);
    CHECK(*loaded.registry == reg);
    CHECK(loaded.warnings.empty());
}

TEST_CASE("disk_cache::get_or_detect") {
    cache_fixture fx;
    const auto cache = fx.cache();
    int runs = 0;
    auto detect = [&] { return numbered(static_cast<std::uint32_t>(++runs)); };

    auto r = cache.get_or_detect(detect);
    CHECK(runs == 1);
    CHECK(r == numbered(1));
    r = cache.get_or_detect(detect);
    CHECK(runs == 1); // from disk
    CHECK(r == numbered(1));

    SUBCASE("expired: detected again, silently") {
        fx.now_s += 60;
        CHECK(cache.load().status == ah::disk_cache_status::expired);
        r = cache.get_or_detect(detect);
        CHECK(runs == 2);
        CHECK(r == numbered(2));
        CHECK(cache.load().registry == numbered(2)); // replaced
    }
    SUBCASE("dated in the future: expired") {
        fx.now_s -= 1;
        CHECK(cache.load().status == ah::disk_cache_status::expired);
    }
    SUBCASE("another cache object in the same folder shares the file") {
        const auto other = fx.cache();
        CHECK(other.get_or_detect(detect) == numbered(1));
        CHECK(runs == 1);
    }
}

TEST_CASE("disk_cache with a corrupt file") {
    cache_fixture fx;
    const auto cache = fx.cache();
    int runs = 0;
    auto detect = [&] { return numbered(static_cast<std::uint32_t>(++runs)); };
    (void)cache.get_or_detect(detect);

    const std::string good = slurp(fx.file());
    const std::vector<std::string> bad = {
        "",                                    // empty
        good.substr(0, good.size() / 2),       // cut short
        "\x89PNG\r\n\x1a\n garbage",           // not JSON
        std::string("{\"format\":\0}", 12),    // a NUL byte
        "[1, 2, 3]",                           // JSON, not an envelope
        "{\"format\": \"ai-hwaccel-registry-cache\"}", // no version
        // A key named twice: a second boot_id that matches, after one that does not.
        "{\"boot_id\": \"an-older-boot\"," + good.substr(1),
    };
    for (const auto& text : bad) {
        CAPTURE(text);
        std::ofstream(fx.file(), std::ios::binary | std::ios::trunc) << text;
        CHECK(cache.load().status == ah::disk_cache_status::invalid);
        const int before = runs;
        const auto r = cache.get_or_detect(detect);
        CHECK(runs == before + 1);
        CHECK(cache_warnings(r.warnings()) == 1);
        // The file was replaced by a good one, which holds no cache warning.
        const auto again = cache.load();
        REQUIRE(again.status == ah::disk_cache_status::hit);
        CHECK(cache_warnings(again.registry->warnings()) == 0);
    }
}

TEST_CASE("disk_cache with a foreign or newer file") {
    cache_fixture fx;
    const auto cache = fx.cache();
    REQUIRE(cache.store(numbered(1)).empty());
    const auto j = nlohmann::json::parse(slurp(fx.file()));
    auto rewrite = [&](const char* key, const nlohmann::json& value) {
        auto k = j;
        k[key] = value;
        std::ofstream(fx.file(), std::ios::binary | std::ios::trunc) << k.dump();
    };
    auto check_invalid = [&](const char* why) {
        const auto l = cache.load();
        CHECK(l.status == ah::disk_cache_status::invalid);
        REQUIRE(l.warnings.size() == 1);
        CHECK(l.warnings[0].kind == ah::warning_kind::cache_invalid);
        CHECK(l.warnings[0].message.find(why) != std::string::npos);
    };
    rewrite("format_version", ah::disk_cache_format_version + 1);
    check_invalid("newer cache format");
    // An older release's file: replaced without a fault, as another version's is.
    rewrite("format_version", ah::disk_cache_format_version - 1);
    const auto older = cache.load();
    CHECK(older.status == ah::disk_cache_status::other_process);
    CHECK(older.warnings.empty());
    rewrite("hostname", "some-other-machine");
    check_invalid("another machine");
    // Another machine's file is stale whichever version of the library wrote it.
    auto foreign = j;
    foreign["hostname"] = "some-other-machine";
    foreign["library_version"] = "0.0.1";
    std::ofstream(fx.file(), std::ios::binary | std::ios::trunc) << foreign.dump();
    check_invalid("another machine");
    rewrite("boot_id", "00000000-0000-0000-0000-000000000000");
    check_invalid("reboot");
    // A program built against another release or backend set shares the default file:
    // its file is replaced without a fault (before, a cache_invalid warning on every
    // call of two programs taking turns).
    for (const auto& field : {std::pair<const char*, nlohmann::json>{"library_version", "0.0.1"},
                              std::pair<const char*, nlohmann::json>{"backends", 0x12345}}) {
        const char* key = field.first; // not a structured binding: clang 14 cannot capture one
        CAPTURE(key);
        rewrite(key, field.second);
        const auto l = cache.load();
        CHECK(l.status == ah::disk_cache_status::other_process);
        CHECK(l.warnings.empty());
    }
    rewrite("backends", nullptr);
    check_invalid("no backends");
    rewrite("process", nullptr);
    check_invalid("no process");
    rewrite("process", "0123456789abcdef");
    const auto other = cache.load();
    CHECK(other.status == ah::disk_cache_status::other_process);
    CHECK(other.warnings.empty());
    auto k = j;
    k["registry"]["schema_version"] = ah::accelerator_registry::schema_version + 1;
    std::ofstream(fx.file(), std::ios::binary | std::ios::trunc) << k.dump();
    check_invalid("newer");

    // A cache object that believes it is on another machine refuses this machine's file.
    REQUIRE(cache.store(numbered(1)).empty());
    auto o = fx.options();
    o.identity = ah::host_identity{"elsewhere", "x", "y"};
    CHECK(ah::disk_cache(o).load().status == ah::disk_cache_status::invalid);
}

TEST_CASE("disk_cache: a host name that is not UTF-8 still hits") {
    // The file holds the name with U+FFFD for the bad byte; the comparison must too.
    cache_fixture fx;
    auto o = fx.options();
    o.identity = ah::host_identity{"caf\xe9-node", "boot-1", "process-1"};
    const ah::disk_cache cache(o);
    REQUIRE(cache.store(numbered(1)).empty());
    const auto l = cache.load();
    CHECK(l.status == ah::disk_cache_status::hit);
    CHECK(l.warnings.empty());
    int runs = 0;
    (void)cache.get_or_detect([&] { return numbered(static_cast<std::uint32_t>(++runs)); });
    CHECK(runs == 0);
}

TEST_CASE("disk_cache: a written_at far in the past or future is no overflow") {
    cache_fixture fx;
    const auto cache = fx.cache();
    REQUIRE(cache.store(numbered(1)).empty());
    auto j = nlohmann::json::parse(slurp(fx.file()));
    for (const std::int64_t when : {INT64_MIN, std::int64_t{-1}, INT64_MAX, fx.now_s.load() + 10}) {
        CAPTURE(when);
        j["written_at"] = when;
        std::ofstream(fx.file(), std::ios::binary | std::ios::trunc) << j.dump();
        CHECK(cache.load().status == ah::disk_cache_status::expired);
    }
    j["written_at"] = fx.now_s.load() - 5;
    std::ofstream(fx.file(), std::ios::binary | std::ios::trunc) << j.dump();
    CHECK(cache.load().status == ah::disk_cache_status::hit);
}

TEST_CASE("disk_cache refuses a file over its size cap") {
    cache_fixture fx;
    auto o = fx.options();
    o.max_bytes = 64;
    const ah::disk_cache cache(o);
    (void)cache.store(numbered(1));
    const auto l = cache.load();
    CHECK(l.status == ah::disk_cache_status::invalid);
    CHECK(cache_warnings(l.warnings) == 1);
}

TEST_CASE("disk_cache never follows a symlink at the cache path") {
    cache_fixture fx;
    const auto cache = fx.cache();
    REQUIRE(cache.store(numbered(1)).empty());
    // A valid cache file elsewhere, and a file an attacker would like overwritten.
    const fs::path elsewhere = fx.scratch.path() / "valid.json";
    fs::copy_file(fx.file(), elsewhere);
    const fs::path victim = fx.scratch.path() / "victim";
    std::ofstream(victim) << "precious";

    for (const auto& target : {elsewhere, victim}) {
        fs::remove(fx.file());
        fs::create_symlink(target, fx.file());
        const auto l = cache.load();
        CHECK(l.status == ah::disk_cache_status::invalid); // even the valid target is not read
        CHECK(cache_warnings(l.warnings) == 1);
        int runs = 0;
        const auto r = cache.get_or_detect([&] { return numbered(static_cast<std::uint32_t>(10 + ++runs)); });
        CHECK(runs == 1);
        CHECK(cache_warnings(r.warnings()) == 1);
        CHECK_FALSE(fs::is_symlink(fx.file())); // replaced by a file of our own
        CHECK(cache.load().registry == numbered(11));
    }
    CHECK(slurp(victim) == "precious");
}

TEST_CASE("disk_cache refuses a symlinked, shared or foreign folder") {
    cache_fixture fx;
    int runs = 0;
    auto detect = [&] { return numbered(static_cast<std::uint32_t>(++runs)); };
    const fs::path real = fx.scratch.path() / "real";
    fs::create_directories(real);
    fs::permissions(real, fs::perms::owner_all, fs::perm_options::replace);
    fs::create_directories(fx.folder.parent_path());

    SUBCASE("a symlink to a private folder") {
        fs::create_symlink(real, fx.folder);
        const auto r = fx.cache().get_or_detect(detect);
        CHECK(runs == 1);
        CHECK(cache_warnings(r.warnings()) == 1);
        CHECK(fs::is_empty(real)); // nothing written through the link
        CHECK(fx.cache().load().status == ah::disk_cache_status::unavailable);
    }
    SUBCASE("a symlink named with a trailing slash, \"/.\" or \"/..\"") {
        // "link/" makes the kernel follow the link before O_NOFOLLOW is looked at.
        fs::create_symlink(real, fx.folder);
        for (const std::string suffix : {"/", "//", "/.", "/.."}) {
            CAPTURE(suffix);
            auto o = fx.options();
            o.folder = fx.folder.string() + suffix;
            const auto r = ah::disk_cache(o).get_or_detect(detect);
            CHECK_FALSE(r.warnings().empty());
            CHECK(fs::is_empty(real)); // nothing written through the link
            CHECK_FALSE(fs::exists(fx.folder.parent_path() / "registry.json"));
        }
    }
    SUBCASE("a symlink to a missing folder") {
        fs::create_symlink(fx.scratch.path() / "not-yet", fx.folder);
        const auto r = fx.cache().get_or_detect(detect);
        CHECK(runs == 1);
        CHECK_FALSE(r.warnings().empty());
        CHECK_FALSE(fs::exists(fx.scratch.path() / "not-yet"));
    }
    SUBCASE("writable by the group or by all") {
        for (const auto extra : {fs::perms::group_write, fs::perms::others_write}) {
            fs::create_directories(fx.folder);
            fs::permissions(fx.folder, fs::perms::owner_all | extra, fs::perm_options::replace);
            const auto r = fx.cache().get_or_detect(detect);
            CHECK(cache_warnings(r.warnings()) == 1);
            CHECK(fs::is_empty(fx.folder));
            fs::remove(fx.folder);
        }
    }
    SUBCASE("owned by another user") {
        fs::create_directories(fx.folder);
        fs::permissions(fx.folder, fs::perms::owner_all, fs::perm_options::replace);
        if (::geteuid() == 0 && ::chown(fx.folder.c_str(), 4242, 4242) == 0) {
            const auto r = fx.cache().get_or_detect(detect);
            CHECK(cache_warnings(r.warnings()) == 1);
            CHECK(fs::is_empty(fx.folder));
        } else {
            MESSAGE("not root: cannot give a folder away, skipped");
        }
    }
}

TEST_CASE("disk_cache never creates a folder inside another user's") {
    // Root with a user's HOME (sudo keeping it) must not leave that user a ~/.cache of root's.
    cache_fixture fx;
    const fs::path home = fx.scratch.path() / "home";
    fs::create_directories(home);
    if (::geteuid() != 0 || ::chown(home.c_str(), 4242, 4242) != 0) {
        MESSAGE("not root: cannot give a folder away, skipped");
        return;
    }
    auto o = fx.options();
    o.folder = (home / ".cache" / "ai-hwaccel").string();
    const auto w = ah::disk_cache(o).store(numbered(1));
    REQUIRE(w.size() == 1);
    CHECK(w[0].kind == ah::warning_kind::permission_denied);
    CHECK(w[0].message.find("belongs to uid 4242") != std::string::npos);
    CHECK_FALSE(fs::exists(home / ".cache"));
    // Root's own folders are fine parents: the scratch folder is root's here.
    CHECK(fx.cache().store(numbered(2)).empty());
}

TEST_CASE("disk_cache replaces what it cannot use at the file's name") {
    cache_fixture fx;
    int runs = 0;
    auto detect = [&] { return numbered(static_cast<std::uint32_t>(++runs)); };
    const auto cache = fx.cache();
    SUBCASE("an empty folder") {
        fs::create_directories(fx.file());
        const auto r = cache.get_or_detect(detect);
        CHECK(cache_warnings(r.warnings()) == 1);
        CHECK(fs::is_regular_file(fs::symlink_status(fx.file())));
        (void)cache.get_or_detect(detect);
        CHECK(runs == 1); // the second call hits
    }
    SUBCASE("a folder with something in it stays, and says so") {
        fs::create_directories(fx.file() / "x");
        const auto r = cache.get_or_detect(detect);
        CHECK(test::count_kind(r.warnings(), ah::warning_kind::read_error) == 1);
        CHECK(fs::exists(fx.file() / "x"));
    }
    SUBCASE("a file it cannot read") {
        REQUIRE(cache.store(numbered(7)).empty());
        fs::permissions(fx.file(), fs::perms::none, fs::perm_options::replace);
        if (std::ifstream(fx.file()).is_open()) {
            MESSAGE("running as root: the file's mode does not stop reads, skipped");
            return;
        }
        const auto r = cache.get_or_detect(detect);
        CHECK(runs == 1);
        CHECK(cache_warnings(r.warnings()) == 1);
        CHECK(cache.load().status == ah::disk_cache_status::hit); // replaced, readable again
    }
}

TEST_CASE("disk_cache::store removes temporary files a killed writer left, and only those") {
    cache_fixture fx;
    const auto cache = fx.cache();
    REQUIRE(cache.store(numbered(1)).empty());
    const auto left = fx.folder / ".registry.json.4242.0.77.tmp";
    const auto fresh = fx.folder / ".registry.json.4243.0.78.tmp";
    const auto other = fx.folder / ".notes.4242.0.77.tmp";
    for (const auto& p : {left, fresh, other}) std::ofstream(p) << "partial";
    const auto old = fs::file_time_type::clock::now() - std::chrono::hours(1);
    fs::last_write_time(left, old);
    fs::last_write_time(other, old);
    REQUIRE(cache.store(numbered(2)).empty());
    CHECK_FALSE(fs::exists(left));
    CHECK(fs::exists(fresh));  // a writer may still be at work on it
    CHECK(fs::exists(other));  // not this cache's
    CHECK(cache.load().registry == numbered(2));
}

TEST_CASE("disk_cache in a read-only folder") {
    cache_fixture fx;
    int runs = 0;
    auto detect = [&] { return numbered(static_cast<std::uint32_t>(++runs)); };

    SUBCASE("a folder that cannot be created") {
        // Its parent is a file: no user, not even root, can make it.
        fs::create_directories(fx.folder.parent_path().parent_path());
        std::ofstream(fx.folder.parent_path()) << "a file";
        const auto cache = fx.cache();
        const auto r = cache.get_or_detect(detect);
        CHECK(runs == 1);
        CHECK(r.all().size() == 1);
        REQUIRE_FALSE(r.warnings().empty());
        CHECK(r.warnings().back().message.find("no cache") != std::string::npos);
        (void)cache.get_or_detect(detect);
        CHECK(runs == 2);
    }
    SUBCASE("a folder without write permission") {
        REQUIRE(fx.cache().store(numbered(7)).empty());
        fs::remove(fx.file());
        fs::permissions(fx.folder, fs::perms::owner_read | fs::perms::owner_exec, fs::perm_options::replace);
        // Does the mode bind this user? (It does not bind root.)
        const fs::path probe = fx.folder / "probe";
        const bool enforced = !std::ofstream(probe).is_open();
        const auto cache = fx.cache();
        const auto r = cache.get_or_detect(detect);
        CHECK(runs == 1);
        CHECK(r.all().size() == 1);
        if (enforced) {
            REQUIRE(test::count_kind(r.warnings(), ah::warning_kind::permission_denied) == 1);
            CHECK(r.warnings().back().message.find("no cache") != std::string::npos);
            CHECK(cache.load().status == ah::disk_cache_status::missing);
        } else {
            MESSAGE("running as root: the folder's mode does not stop writes");
            fs::remove(probe);
        }
        fs::permissions(fx.folder, fs::perms::owner_all, fs::perm_options::replace);
    }
}

TEST_CASE("disk_cache::store from many threads") {
    cache_fixture fx;
    const auto cache = fx.cache();
    REQUIRE(cache.store(numbered(0)).empty());
    constexpr std::uint32_t writers = 6, rounds = 15;
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (std::uint32_t w = 1; w <= writers; ++w)
        threads.emplace_back([&, w] {
            for (std::uint32_t i = 0; i < rounds; ++i) {
                if (!cache.store(numbered(w)).empty()) ++failures;
                // Whatever a reader sees is a complete file from some writer.
                const auto l = cache.load();
                if (l.status != ah::disk_cache_status::hit || l.registry->all().size() != 1 ||
                    l.registry->all()[0].index > writers)
                    ++failures;
            }
        });
    for (auto& t : threads) t.join();
    CHECK(failures == 0);
    CHECK(cache.load().status == ah::disk_cache_status::hit);
    CHECK(fx.files_in_folder() == 1);
}

TEST_CASE("disk_cache::store from many processes") {
    cache_fixture fx;
    const auto cache = fx.cache();
    REQUIRE(cache.store(numbered(0)).empty());
    constexpr std::uint32_t writers = 4, rounds = 15;
    std::vector<::pid_t> children;
    for (std::uint32_t w = 1; w <= writers; ++w) {
        const ::pid_t pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            int bad = 0;
            for (std::uint32_t i = 0; i < rounds; ++i) {
                if (!cache.store(numbered(w)).empty()) ++bad;
                if (cache.load().status != ah::disk_cache_status::hit) ++bad;
            }
            ::_exit(bad == 0 ? 0 : 1);
        }
        children.push_back(pid);
    }
    int seen_bad = 0;
    for (int i = 0; i < 40; ++i) {
        const auto l = cache.load();
        if (l.status != ah::disk_cache_status::hit || l.registry->all()[0].index > writers) ++seen_bad;
    }
    for (const auto pid : children) {
        int status = 0;
        REQUIRE(::waitpid(pid, &status, 0) == pid);
        CHECK(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 0);
    }
    CHECK(seen_bad == 0);
    CHECK(fx.files_in_folder() == 1);
}

TEST_CASE("disk_cache::clear") {
    cache_fixture fx;
    const auto cache = fx.cache();
    CHECK(cache.clear());
    REQUIRE(cache.store(numbered(1)).empty());
    CHECK(cache.clear());
    CHECK(cache.load().status == ah::disk_cache_status::missing);
}

#else

TEST_CASE("disk_cache is unavailable without JSON") {
    CHECK(AI_HWACCEL_HAS_DISK_CACHE == 0);
}

#endif
