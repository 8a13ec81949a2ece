#include "ai_hwaccel/detect/system.hpp"

#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <sys/inotify.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace ah = ai_hwaccel;

TEST_CASE("host_system::read_file") {
    test::scratch_dir dir;
    dir.write("proc/meminfo", "MemTotal: 1024 kB\n");
    dir.write("big", std::string(10000, 'x'));
    const ah::host_system sys(dir.path().string());
    const auto r = sys.read_file("/proc/meminfo", 4096);
    CHECK(r.status == ah::read_status::ok);
    CHECK(r.data == "MemTotal: 1024 kB\n");
    // A file over the cap is cut at the cap and says so.
    const auto big = sys.read_file("/big", 100);
    CHECK(big.status == ah::read_status::truncated);
    CHECK(big.data.size() == 100);
    CHECK(big.ok());
    CHECK(sys.read_file("/big", 10000).status == ah::read_status::ok);
    CHECK(sys.read_file("/missing", 10).status == ah::read_status::not_found);
    CHECK_FALSE(sys.read_file("/missing", 10).ok());
    // A directory is not a file.
    CHECK(sys.read_file("/proc", 10).status == ah::read_status::error);
    // No cap at all reads the whole file (the cap + 1 of the read wrapped to 0: empty, "ok").
    const auto all = sys.read_file("/big", SIZE_MAX);
    CHECK(all.status == ah::read_status::ok);
    CHECK(all.data.size() == 10000);
}

TEST_CASE("host_system::read_file permission") {
    if (::geteuid() == 0) {
        MESSAGE("skipped: root reads any file");
        return;
    }
    test::scratch_dir dir;
    dir.write("secret", "x");
    ::chmod((dir.path() / "secret").c_str(), 0);
    CHECK(ah::host_system(dir.path().string()).read_file("/secret", 10).status ==
          ah::read_status::permission_denied);
}

TEST_CASE("host_system::read_file does not block on a FIFO") {
    test::scratch_dir dir;
    const auto fifo = dir.path() / "fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    CHECK(ah::host_system(dir.path().string()).read_file("/fifo", 10).status == ah::read_status::error);
    // Nor opens it: opening a FIFO wakes a writer waiting for a reader, and opening a tree's
    // device node runs its driver. inotify sees every open; before, there was one.
    const int watch = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    REQUIRE(watch >= 0);
    REQUIRE(::inotify_add_watch(watch, fifo.c_str(), IN_OPEN) >= 0);
    CHECK(ah::host_system(dir.path().string()).read_file("/fifo", 10).status == ah::read_status::error);
    char events[4096];
    CHECK(::read(watch, events, sizeof events) == -1); // no event: never opened
    ::close(watch);
}

TEST_CASE("host_system::list_dir") {
    test::scratch_dir dir;
    dir.write("sys/class/drm/card0/x", "");
    dir.write("sys/class/drm/card1/x", "");
    const ah::host_system sys(dir.path().string() + "///");
    auto names = sys.list_dir("/sys/class/drm");
    REQUIRE(names.has_value());
    std::sort(names->begin(), names->end());
    CHECK(*names == std::vector<std::string>{"card0", "card1"});
    CHECK_FALSE(sys.list_dir("/sys/class/nope").has_value());
}

TEST_CASE("host_system::read_link") {
    test::scratch_dir dir;
    dir.write("sys/devices/pci0000:00/0000:00:01.0/x", "");
    std::filesystem::create_directories(dir.path() / "sys/class/drm/card0");
    std::filesystem::create_symlink("../../../../bus/pci/drivers/amdgpu", dir.path() / "sys/class/drm/card0/driver");
    const ah::host_system sys(dir.path().string());
    CHECK(sys.read_link("/sys/class/drm/card0/driver") == "../../../../bus/pci/drivers/amdgpu");
    CHECK_FALSE(sys.read_link("/sys/class/drm/card0").has_value());
    CHECK(sys.exists("/sys/class/drm/card0"));
    CHECK_FALSE(sys.exists("/sys/class/drm/card9"));
}

TEST_CASE("host_system in a machine tree follows links inside the tree, never out of it") {
    // The host's own file, which no link in the tree may reach.
    test::scratch_dir outside;
    outside.write("secret", "host\n");
    const std::string secret = (outside.path() / "secret").string();

    test::scratch_dir dir;
    dir.write("proc/meminfo", "MemTotal: 1024 kB\n");
    dir.write("sys/devices/pci0000:00/0000:00:01.0/vendor", "0x10de\n");
    dir.write("etc/hostname", "tree\n");
    std::filesystem::create_directories(dir.path() / "sys/bus/pci/devices");
    std::filesystem::create_directories(dir.path() / "sys/class/x");
    const auto link = [&](const std::string& target, const char* at) {
        std::filesystem::create_symlink(target, dir.path() / at);
    };
    // Absolute targets start again at the tree's root.
    link(secret, "proc/cpuinfo");
    link("/etc/hostname", "proc/hostname");
    link("/sys/devices/pci0000:00", "sys/class/x/abs");
    // ".." climbing past the root stops at it.
    link("../../../../../../../../../.." + secret, "proc/climb");
    link("../../../../../../../../../../etc/hostname", "proc/climb_in");
    // The kernel's sysfs layout: a relative link into the device tree.
    link("../../../devices/pci0000:00/0000:00:01.0", "sys/bus/pci/devices/0000:00:01.0");
    // A folder link, then ".." after it: the parent of where the link leads.
    link("../../devices/pci0000:00/0000:00:01.0", "sys/class/x/dev");
    // A cycle.
    link("b", "proc/a");
    link("a", "proc/b");

    const ah::host_system sys(dir.path().string());
    CHECK(sys.read_file("/proc/cpuinfo").status == ah::read_status::not_found);
    CHECK_FALSE(sys.exists("/proc/cpuinfo"));
    CHECK(sys.read_file("/proc/climb").status == ah::read_status::not_found);
    CHECK(sys.read_file("/proc/hostname").data == "tree\n");
    CHECK(sys.read_file("/proc/climb_in").data == "tree\n");
    CHECK(sys.read_file("/sys/class/x/abs/0000:00:01.0/vendor").data == "0x10de\n");
    CHECK(sys.read_file("/sys/bus/pci/devices/0000:00:01.0/vendor").data == "0x10de\n");
    CHECK(sys.read_file("/sys/class/x/dev/../0000:00:01.0/vendor").data == "0x10de\n");
    CHECK(sys.read_file("/sys/class/x/dev/../../../../proc/meminfo").data == "MemTotal: 1024 kB\n");
    // A file is no folder: ".." after it is the kernel's ENOTDIR, not its parent.
    CHECK(sys.read_file("/proc/meminfo/../meminfo").status == ah::read_status::not_found);
    CHECK_FALSE(sys.exists("/proc/meminfo/.."));
    const auto listed = sys.list_dir("/sys/class/x/abs");
    REQUIRE(listed.has_value());
    CHECK(*listed == std::vector<std::string>{"0000:00:01.0"});
    // read_link reads the last link itself; links before it are followed in the tree.
    CHECK(sys.read_link("/proc/cpuinfo") == secret);
    CHECK(sys.read_link("/sys/class/x/abs/../../bus/pci/devices/0000:00:01.0") ==
          "../../../devices/pci0000:00/0000:00:01.0");
    // A loop reads as the kernel's ELOOP would: an error, not found, nothing listed.
    CHECK(sys.read_file("/proc/a").status == ah::read_status::error);
    CHECK_FALSE(sys.exists("/proc/a"));
    CHECK_FALSE(sys.list_dir("/proc/a").has_value());
    CHECK(sys.read_link("/proc/a") == "b");
    // The live host's paths are the host's: the outside file reads from a tree at "/".
    CHECK(ah::host_system("/").read_file(secret).data == "host\n");
}

TEST_CASE("host_system::env") {
    ::setenv("AI_HWACCEL_TEST_VARIABLE", "value", 1);
    const ah::host_system sys;
    CHECK(sys.env("AI_HWACCEL_TEST_VARIABLE") == "value");
    ::unsetenv("AI_HWACCEL_TEST_VARIABLE");
    CHECK_FALSE(sys.env("AI_HWACCEL_TEST_VARIABLE").has_value());
}

TEST_CASE("host_system::env in a machine tree is the captured process's, never ours") {
    ::setenv("AI_HWACCEL_TEST_VARIABLE", "ours", 1);
    test::scratch_dir root;
    const ah::host_system sys(root.path().string());
    CHECK_FALSE(sys.env("AI_HWACCEL_TEST_VARIABLE").has_value()); // no capture: no environment
    root.write("proc/self/environ", std::string("A=1\0CUDA_VISIBLE_DEVICES=0,1\0EMPTY=\0AB=2\0=x\0", 44));
    CHECK(sys.env("CUDA_VISIBLE_DEVICES") == "0,1");
    CHECK(sys.env("A") == "1");
    CHECK(sys.env("AB") == "2");
    CHECK(sys.env("EMPTY") == "");
    CHECK_FALSE(sys.env("AI_HWACCEL_TEST_VARIABLE").has_value());
    CHECK_FALSE(sys.env("").has_value());
    CHECK_FALSE(sys.env("A=1").has_value());
    // `env`'s one-per-line form, as k8s captures are published.
    root.write("proc/self/environ", "HOSTNAME=pod-1\r\nKUBERNETES_SERVICE_HOST=10.96.0.1\n");
    CHECK(sys.env("KUBERNETES_SERVICE_HOST") == "10.96.0.1");
    CHECK(sys.env("HOSTNAME") == "pod-1");
    ::unsetenv("AI_HWACCEL_TEST_VARIABLE");
}

TEST_CASE("system_view") {
    static_assert(ah::system_view<ah::host_system>);
    static_assert(!ah::system_view<int>);
}

// ---------------------------------------------------------------------------------------
// Captured tool outputs (machine trees)

TEST_CASE("parse_capture_index") {
    const auto idx = ah::parse_capture_index("# captured on gpu-node-7\n"
                                             "0\tsmi-L.txt\tnvidia-smi -L\n"
                                             "\n"
                                             "3\t-\trocm-smi --showuse\r\n"
                                             "timeout\t-\thl-smi\n"
                                             "signal:11\tcrash.txt\tneuron-ls --json-output\n"
                                             "not-executable\t-\txpu-smi discovery\n"
                                             "0\t../../etc/passwd\tcat\n" // leaves the folder: refused
                                             "0\tsub/x\tls\n"             // not a plain name
                                             "256\tx\tls\n"               // not an exit status
                                             "signal:0\tx\tls\n"
                                             "zero\tx\tls\n"
                                             "0\tx\n"                     // no command
                                             "0\tx\t   \n");
    REQUIRE(idx.entries.size() == 5);
    CHECK(idx.entries[0] == ah::capture_entry{"nvidia-smi -L", "smi-L.txt", ah::tool_status::exited, 0, 0});
    CHECK(idx.entries[1] == ah::capture_entry{"rocm-smi --showuse", "", ah::tool_status::exited, 3, 0});
    CHECK(idx.entries[2].status == ah::tool_status::timed_out);
    CHECK(idx.entries[3] == ah::capture_entry{"neuron-ls --json-output", "crash.txt", ah::tool_status::signalled, 0, 11});
    CHECK(idx.entries[4].status == ah::tool_status::not_executable);
    CHECK(idx.bad_lines == std::vector<std::size_t>{8, 9, 10, 11, 12, 13, 14});
    CHECK(idx.find("nvidia-smi -L") == &idx.entries[0]);
    CHECK(idx.find("nvidia-smi") == nullptr);
    // Hostile bytes never crash it.
    CHECK(ah::parse_capture_index(std::string("\0\t\0\t\0\n\xff\xfe\t\t\t", 10)).entries.empty());
}

TEST_CASE("command_line_of keys a request by the tool's file name") {
    CHECK(ah::command_line_of({"nvidia-smi", "-L"}) == "nvidia-smi -L");
    CHECK(ah::command_line_of({"/usr/bin/nvidia-smi", "-q", "-x"}) == "nvidia-smi -q -x");
    CHECK(ah::command_line_of({}).empty());
}

TEST_CASE("host_system with a root replays captured tools and runs nothing") {
    test::scratch_dir root;
    root.write("ai-hwaccel-tools/index", "0\tlist.txt\tfake-smi -L\n"
                                         "4\terr.txt\tfake-smi --broken\n"
                                         "timeout\t-\tfake-smi --hang\n"
                                         "signal:9\t-\tfake-smi --crash\n"
                                         "0\tmissing.txt\tfake-smi --gone\n"
                                         "0\tbig.txt\tfake-smi --big\n");
    root.write("ai-hwaccel-tools/list.txt", "GPU 0: A\nGPU 1: B\n");
    root.write("ai-hwaccel-tools/err.txt", "oops\n");
    root.write("ai-hwaccel-tools/big.txt", std::string(5000, 'x'));
    const ah::host_system sys(root.path().string());
    CHECK(sys.replays_tools());
    auto r = sys.run({{"fake-smi", "-L"}});
    CHECK(r.succeeded());
    CHECK(r.out == "GPU 0: A\nGPU 1: B\n");
    r = sys.run({{"/opt/vendor/bin/fake-smi", "-L"}}); // keyed by file name
    CHECK(r.succeeded());
    r = sys.run({{"fake-smi", "--broken"}});
    CHECK(r.status == ah::tool_status::exited);
    CHECK(r.exit_code == 4);
    CHECK(r.out == "oops\n");
    CHECK(sys.run({{"fake-smi", "--hang"}}).status == ah::tool_status::timed_out);
    r = sys.run({{"fake-smi", "--crash"}});
    CHECK(r.status == ah::tool_status::signalled);
    CHECK(r.signal == 9);
    CHECK(sys.run({{"fake-smi", "--gone"}}).status == ah::tool_status::not_executable);
    CHECK(sys.run({{"fake-smi", "-l"}}).status == ah::tool_status::not_found); // arguments must match
    CHECK(sys.run({{"sh", "-c", "true"}}).status == ah::tool_status::not_found); // nothing real runs
    // An index cut at its 1 MiB cap ends in part of a line: that part names no command
    // (before, "fake-smi -q" matched the cut "fake-smi -q -x" line).
    {
        test::scratch_dir cut;
        const std::string head = "0\tx.txt\tfake-smi -q"; // what the cap leaves of the last line
        const std::size_t filler = (std::size_t{1} << 20) - head.size();
        std::string index;
        while (index.size() + 200 < filler) index += "#" + std::string(98, '.') + "\n";
        index += "#" + std::string(filler - index.size() - 2, '.') + "\n";
        REQUIRE(index.size() == filler);
        cut.write("ai-hwaccel-tools/index", index + head + " -x\n");
        cut.write("ai-hwaccel-tools/x.txt", "xml\n");
        const ah::host_system replay(cut.path().string());
        CHECK(replay.run({{"fake-smi", "-q"}}).status == ah::tool_status::not_found);
    }
    ah::tool_request big{{"fake-smi", "--big"}, std::chrono::seconds(1), 1000, 1000};
    r = sys.run(big);
    CHECK(r.status == ah::tool_status::truncated);
    CHECK(r.out.size() == 1000);

    // A tree without captures has no tools at all.
    test::scratch_dir bare;
    CHECK(ah::host_system(bare.path().string()).run({{"ls"}}).status == ah::tool_status::not_found);
    // The live host runs them.
    CHECK_FALSE(ah::host_system().replays_tools());
    CHECK(ah::host_system().run({{"true"}}).succeeded());
}
