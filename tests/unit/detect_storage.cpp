#include "ai_hwaccel/detect/storage.hpp"

#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace ah = ai_hwaccel;
namespace fs = std::filesystem;
using ah::storage_kind;

namespace {
using test::denying_view;

using test::count_kind;

const fs::path block_capture = fs::path(AI_HWACCEL_FIXTURES_DIR) / "block-sysfs/sys-block-rotational_nvme-sata-pmem";

// A disk in a scratch tree the way the kernel lays it out: the device directory under
// /sys/devices and a link to it in /sys/block.
void add_disk(const test::scratch_dir& root, const std::string& name, const std::string& rotational,
              const std::string& size, const std::string& vendor = "", const std::string& model = "") {
    const std::string dir = "sys/devices/virtual/test/" + name + "/";
    if (!rotational.empty()) root.write(dir + "queue/rotational", rotational);
    if (!size.empty()) root.write(dir + "size", size);
    if (!vendor.empty()) root.write(dir + "device/vendor", vendor);
    if (!model.empty()) root.write(dir + "device/model", model);
    root.write(dir + "uevent", "DEVNAME=" + name + "\n");
    fs::create_directories(root.path() / "sys/block");
    fs::create_directory_symlink("../devices/virtual/test/" + name, root.path() / "sys/block" / name);
}

const ah::storage_device* find(const std::vector<ah::storage_device>& v, std::string_view name) {
    for (const auto& d : v)
        if (d.name == name) return &d;
    return nullptr;
}
} // namespace

TEST_CASE("is_pseudo_block_device") {
    for (const char* n :
         {"loop0", "ram15", "zram0", "dm-3", "md0", "md127", "zd0", "mmcblk0boot0", "mmcblk0rpmb", "sr0", "sr12",
          "mtdblock0", "nullb0"}) { // an RK3588 board's 16 MiB SPI flash is no disk
        CAPTURE(n);
        CHECK(ah::is_pseudo_block_device(n));
    }
    for (const char* n : {"sda", "nvme0n1", "vda", "xvda", "mmcblk0", "pmem0", "nbd0"}) {
        CAPTURE(n);
        CHECK_FALSE(ah::is_pseudo_block_device(n));
    }
}

TEST_CASE("classify_block_device") {
    CHECK(ah::classify_block_device("sda", "ATA", "ST4000DM004-2CV1", true) == storage_kind::hdd);
    CHECK(ah::classify_block_device("sdb", "ATA", "Samsung SSD 870", false) == storage_kind::sata_ssd);
    CHECK(ah::classify_block_device("nvme0n1", "", "Samsung SSD 990 PRO 2TB", false) == storage_kind::nvme);
    CHECK(ah::classify_block_device("nvme0n1", "", "Amazon EC2 NVMe Instance Storage", false) == storage_kind::nvme);
    CHECK(ah::classify_block_device("nvme1n1", "", "Amazon Elastic Block Store", false) == storage_kind::virtual_disk);
    CHECK(ah::classify_block_device("nvme0n1", "", "QEMU NVMe Ctrl", false) == storage_kind::virtual_disk);
    // virtio and Xen disks: the rotational flag means nothing there.
    CHECK(ah::classify_block_device("vda", "", "", true) == storage_kind::virtual_disk);
    CHECK(ah::classify_block_device("vdb", "", "", false) == storage_kind::virtual_disk);
    CHECK(ah::classify_block_device("xvda", "", "", true) == storage_kind::virtual_disk);
    CHECK(ah::classify_block_device("sda", "QEMU    ", "QEMU HARDDISK", true) == storage_kind::virtual_disk);
    CHECK(ah::classify_block_device("sda", "VMware  ", "Virtual disk", true) == storage_kind::virtual_disk);
    CHECK(ah::classify_block_device("sda", "Msft    ", "Virtual Disk    ", true) == storage_kind::virtual_disk);
    CHECK(ah::classify_block_device("sda", "Google  ", "PersistentDisk", false) == storage_kind::virtual_disk);
    CHECK(ah::classify_block_device("sda", "Linux   ", "File-Stor Gadget", true) == storage_kind::virtual_disk);
    CHECK(ah::classify_block_device("pmem0", "", "", false) == storage_kind::ram);
    CHECK(ah::classify_block_device("nbd0", "", "", false) == storage_kind::network);
    CHECK(ah::classify_block_device("sdz", "", "", std::nullopt) == storage_kind::unknown);
}

TEST_CASE("probe_storage on the captured tree") {
    if (!fs::exists(block_capture)) {
        MESSAGE("skipped: capture not found: " << block_capture.string());
        return;
    }
    // The capture's /sys/block holds ram*, loop* and sda (stored as files holding the link
    // targets); nvme0n1 and pmem* are only under /sys/devices.
    std::vector<ah::warning> w;
    const auto disks = ah::probe_storage(ah::host_system(block_capture.string()), w);
    CHECK(w.empty());
    REQUIRE(disks.size() == 1);
    CHECK(disks[0].name == "sda");
    CHECK(disks[0].kind == storage_kind::hdd); // queue/rotational 1
    CHECK(disks[0].size_bytes == 0);          // no size file in the capture: unknown
    CHECK(disks[0].model.empty());
    CHECK_FALSE(disks[0].read_bandwidth_gbps.has_value());
}

TEST_CASE("read_block_device on the captured tree") {
    if (!fs::exists(block_capture)) {
        MESSAGE("skipped: capture not found: " << block_capture.string());
        return;
    }
    const ah::host_system sys(block_capture.string());
    std::vector<ah::warning> w;
    const std::string nd = "/sys/devices/LNXSYSTM:00/LNXSYBUS:00/ACPI0012:00/ndbus0/";
    struct expected {
        std::string name, dir;
        storage_kind kind;
    };
    for (const auto& e : {expected{"nvme0n1", "/sys/devices/pci0000:00/0000:00:02.0/block/nvme0n1", storage_kind::nvme},
                          expected{"sda", "/sys/devices/pci0000:00/0000:00:1f.2/host4/target4:0:0/4:0:0:0/block/sda",
                                   storage_kind::hdd},
                          expected{"pmem0.1", nd + "region0/pfn0.0/block/pmem0.1", storage_kind::ram},
                          expected{"pmem0.2s", nd + "region0/btt0.0/block/pmem0.2s", storage_kind::ram},
                          expected{"pmem0.3", nd + "region0/namespace0.3/block/pmem0.3", storage_kind::ram},
                          expected{"pmem1", nd + "region1/namespace1.0/block/pmem1", storage_kind::ram},
                          expected{"pmem1.1s", nd + "region1/btt1.0/block/pmem1.1s", storage_kind::ram},
                          expected{"pmem1.2", nd + "region1/pfn1.0/block/pmem1.2", storage_kind::ram}}) {
        CAPTURE(e.name);
        const auto d = ah::read_block_device(sys, e.name, e.dir, w);
        REQUIRE(d);
        CHECK(d->name == e.name);
        CHECK(d->kind == e.kind);
    }
    CHECK(w.empty());
    // The loop and RAM disks the capture lists are not storage.
    CHECK_FALSE(ah::read_block_device(sys, "loop0", "/sys/devices/virtual/block/loop0", w).has_value());
    CHECK_FALSE(ah::read_block_device(sys, "ram0", "/sys/devices/virtual/block/ram0", w).has_value());
}

TEST_CASE("probe_storage scratch tree") {
    test::scratch_dir root;
    add_disk(root, "sda", "1\n", "7814037168\n", "ATA     ", "ST4000DM004-2CV1\n");
    add_disk(root, "sdb", "0\n", "1953525168\n", "ATA     ", "Samsung SSD 870 EVO 1TB\n");
    add_disk(root, "nvme0n1", "0\n", "3907029168\n", "", "Samsung SSD 990 PRO 2TB                 \n");
    add_disk(root, "vda", "1\n", "268435456\n");
    add_disk(root, "xvdb", "0\n", "20971520\n");
    add_disk(root, "sdc", "1\n", "41943040\n", "QEMU    ", "QEMU HARDDISK   \n");
    add_disk(root, "pmem0", "0\n", "16777216\n");
    add_disk(root, "nbd1", "0\n", "2097152\n");
    add_disk(root, "mmcblk0", "0\n", "61071360\n");
    // Left out: pseudo devices, stacks, hidden multipath paths, no medium.
    add_disk(root, "loop0", "0\n", "131072\n");
    add_disk(root, "zram0", "0\n", "8388608\n");
    add_disk(root, "dm-0", "0\n", "8388608\n");
    add_disk(root, "md127", "0\n", "8388608\n");
    add_disk(root, "mmcblk0boot0", "0\n", "8192\n");
    add_disk(root, "vg-lv", "0\n", "8388608\n");
    root.write("sys/devices/virtual/test/vg-lv/dm/name", "vg-lv\n"); // device-mapper under another name
    add_disk(root, "nvme0c0n1", "0\n", "3907029168\n");
    root.write("sys/devices/virtual/test/nvme0c0n1/hidden", "1\n");
    add_disk(root, "sr0", "1\n", "0\n");
    add_disk(root, "sr1", "1\n", "8388608\n"); // a DVD in its drive: no place to load a model from
    add_disk(root, "nbd0", "0\n", "0\n");
    // A plain directory (a hand-made tree without links) still works.
    root.write("sys/block/sdd/queue/rotational", "1\n");
    root.write("sys/block/sdd/size", "2048\n");

    std::vector<ah::warning> w;
    const auto disks = ah::probe_storage(ah::host_system(root.path().string()), w);
    CHECK(w.empty());
    std::vector<std::string> names;
    for (const auto& d : disks) names.push_back(d.name);
    CHECK(names == std::vector<std::string>{"mmcblk0", "nbd1", "nvme0n1", "pmem0", "sda", "sdb", "sdc", "sdd", "vda", "xvdb"});
    REQUIRE(names.size() == 10);
    CHECK(find(disks, "sda")->kind == storage_kind::hdd);
    CHECK(find(disks, "sda")->size_bytes == 7814037168ull * 512);
    CHECK(find(disks, "sda")->model == "ST4000DM004-2CV1");
    CHECK(find(disks, "sdb")->kind == storage_kind::sata_ssd);
    CHECK(find(disks, "nvme0n1")->kind == storage_kind::nvme);
    CHECK(find(disks, "nvme0n1")->model == "Samsung SSD 990 PRO 2TB"); // padding trimmed
    CHECK(find(disks, "vda")->kind == storage_kind::virtual_disk);     // rotational 1 ignored
    CHECK(find(disks, "xvdb")->kind == storage_kind::virtual_disk);
    CHECK(find(disks, "sdc")->kind == storage_kind::virtual_disk);
    CHECK(find(disks, "pmem0")->kind == storage_kind::ram);
    CHECK(find(disks, "nbd1")->kind == storage_kind::network);
    CHECK(find(disks, "mmcblk0")->kind == storage_kind::sata_ssd);
    CHECK(find(disks, "sdd")->size_bytes == 2048u * 512);
}

TEST_CASE("probe_storage: NVMe over fabrics and GCP's NVMe persistent disks are not local NVMe") {
    test::scratch_dir root;
    add_disk(root, "nvme0n1", "0\n", "3907029168\n", "", "Samsung SSD 990 PRO 2TB\n");
    add_disk(root, "nvme4n1", "0\n", "2097152\n", "", "nvme_card-pd\n"); // a GCP persistent disk
    add_disk(root, "nvme5n1", "0\n", "2097152\n", "", "nvme_card\n");    // a GCP local SSD
    // A fabrics (TCP, RDMA, FC) controller's namespace, where the kernel puts it.
    const std::string fabrics = "sys/devices/virtual/nvme-fabrics/ctl/nvme1/nvme1n1/";
    root.write(fabrics + "queue/rotational", "0\n");
    root.write(fabrics + "size", "2097152\n");
    root.write(fabrics + "device/model", "Linux\n");
    fs::create_directory_symlink("../devices/virtual/nvme-fabrics/ctl/nvme1/nvme1n1",
                                 root.path() / "sys/block/nvme1n1");
    // Native multipath, the kernel's default: the namespace a user sees is the head under the
    // subsystem, whose folder links its controllers; their `transport` says how they are reached.
    const auto head = [&](const std::string& ns, const std::string& subsys, const std::string& ctrl,
                          const std::string& transport, const std::string& ctrl_dir) {
        const std::string dir = "sys/devices/virtual/nvme-subsystem/" + subsys + "/" + ns + "/";
        root.write(dir + "queue/rotational", "0\n");
        root.write(dir + "size", "2097152\n");
        root.write(ctrl_dir + "/transport", transport + "\n");
        fs::create_directory_symlink(fs::relative(root.path() / ctrl_dir,
                                                  root.path() / "sys/devices/virtual/nvme-subsystem" / subsys),
                                     root.path() / "sys/devices/virtual/nvme-subsystem" / subsys / ctrl);
        fs::create_directory_symlink("../devices/virtual/nvme-subsystem/" + subsys + "/" + ns,
                                     root.path() / "sys/block" / ns);
    };
    head("nvme2n1", "nvme-subsys2", "nvme2", "tcp", "sys/devices/virtual/nvme-fabrics/ctl/nvme2");
    head("nvme3n1", "nvme-subsys3", "nvme3", "pcie", "sys/devices/pci0000:00/0000:00:1d.0/0000:05:00.0/nvme/nvme3");
    // A namespace of one controller: the folder above it is the controller.
    const std::string single = "sys/devices/pci0000:00/0000:00:1c.0/0000:06:00.0/nvme/nvme6/";
    root.write(single + "transport", "pcie\n");
    root.write(single + "nvme6n1/size", "2097152\n");
    fs::create_directory_symlink("../devices/pci0000:00/0000:00:1c.0/0000:06:00.0/nvme/nvme6/nvme6n1",
                                 root.path() / "sys/block/nvme6n1");
    std::vector<ah::warning> w;
    const auto disks = ah::probe_storage(ah::host_system(root.path().string()), w);
    CHECK(w.empty());
    REQUIRE(disks.size() == 7);
    CHECK(find(disks, "nvme0n1")->kind == storage_kind::nvme);
    CHECK(find(disks, "nvme1n1")->kind == storage_kind::network);
    CHECK(find(disks, "nvme2n1")->kind == storage_kind::network); // a multipath head over TCP
    CHECK(find(disks, "nvme3n1")->kind == storage_kind::nvme);    // a multipath head over PCIe
    CHECK(find(disks, "nvme6n1")->kind == storage_kind::nvme);
    CHECK(find(disks, "nvme4n1")->kind == storage_kind::virtual_disk);
    CHECK(find(disks, "nvme5n1")->kind == storage_kind::nvme);
}

TEST_CASE("probe_storage: a multipath SAN volume is one network disk, not one local disk per path") {
    // Hand-made: one 2 TiB iSCSI LUN seen through four paths (sdb…sde), which multipathd maps
    // as dm-0 (uuid "mpath-<wwid>"); an LVM volume (dm-1) on the local sda stays out.
    test::scratch_dir root;
    add_disk(root, "sda", "0\n", "1953525168\n", "ATA     ", "Samsung SSD 870 EVO 1TB\n");
    const std::string map = "sys/devices/virtual/block/dm-0/";
    root.write(map + "dm/uuid", "mpath-3624a9370c1d2e3f4a5b6c7d800011234\n");
    root.write(map + "dm/name", "mpatha\n");
    root.write(map + "size", "4294967296\n");
    for (int i = 0; i < 4; ++i) {
        const std::string sd = std::string("sd") + static_cast<char>('b' + i);
        const std::string dir = "sys/devices/platform/host" + std::to_string(3 + i) + "/session" +
                                std::to_string(1 + i) + "/target" + std::to_string(3 + i) + ":0:0/" +
                                std::to_string(3 + i) + ":0:0:1/block/" + sd + "/";
        root.write(dir + "queue/rotational", "0\n");
        root.write(dir + "size", "4294967296\n");
        root.write(dir + "device/vendor", "PURE    \n");
        root.write(dir + "device/model", "FlashArray      \n");
        fs::create_directories(root.path() / dir / "holders");
        fs::create_directory_symlink(fs::relative(root.path() / map, root.path() / dir / "holders"),
                                     root.path() / dir / "holders/dm-0");
        fs::create_directories(root.path() / map / "slaves");
        fs::create_directory_symlink(fs::relative(root.path() / dir, root.path() / map / "slaves"),
                                     root.path() / map / "slaves" / sd);
        fs::create_directory_symlink(fs::relative(root.path() / dir, root.path() / "sys/block"),
                                     root.path() / "sys/block" / sd);
    }
    fs::create_directory_symlink("../devices/virtual/block/dm-0", root.path() / "sys/block/dm-0");
    add_disk(root, "dm-1", "0\n", "8388608\n");
    root.write("sys/devices/virtual/test/dm-1/dm/uuid", "LVM-abc\n");
    std::vector<ah::warning> w;
    const auto disks = ah::probe_storage(ah::host_system(root.path().string()), w);
    CHECK(w.empty());
    REQUIRE(disks.size() == 2);
    CHECK(disks[0].name == "dm-0");
    CHECK(disks[0].kind == storage_kind::network);
    CHECK(disks[0].size_bytes == 4294967296ull * 512);
    CHECK(disks[0].model == "FlashArray");
    CHECK(disks[1].name == "sda");
    CHECK(disks[1].kind == storage_kind::sata_ssd);
    // One path alone (no map), of an iSCSI session: a network disk all the same.
    test::scratch_dir one;
    const std::string dir = "sys/devices/platform/host3/session1/target3:0:0/3:0:0:1/block/sdb/";
    one.write(dir + "queue/rotational", "1\n");
    one.write(dir + "size", "2048\n");
    fs::create_directories(one.path() / "sys/block");
    fs::create_directory_symlink(fs::relative(one.path() / dir, one.path() / "sys/block"),
                                 one.path() / "sys/block/sdb");
    const auto single = ah::probe_storage(ah::host_system(one.path().string()), w);
    REQUIRE(single.size() == 1);
    CHECK(single[0].kind == storage_kind::network);

    // A standby path of an active/passive array that reads no size (sdb, the first by
    // name, as every path may): the map is still the volume, sized by its own size, its
    // kind and model its path's. Before, the volume vanished without a word.
    for (int i = 0; i < 4; ++i) {
        const std::string sd = std::string("sd") + static_cast<char>('b' + i);
        if (i == 0 || i == 3)
            root.write("sys/devices/platform/host" + std::to_string(3 + i) + "/session" + std::to_string(1 + i) +
                           "/target" + std::to_string(3 + i) + ":0:0/" + std::to_string(3 + i) + ":0:0:1/block/" +
                           sd + "/size",
                       "0\n");
    }
    w.clear();
    const auto standby = ah::probe_storage(ah::host_system(root.path().string()), w);
    CHECK(w.empty());
    REQUIRE(standby.size() == 2);
    CHECK(standby[0].name == "dm-0");
    CHECK(standby[0].kind == storage_kind::network);
    CHECK(standby[0].model == "FlashArray");
    CHECK(standby[0].size_bytes == 4294967296ull * 512);
}

TEST_CASE("probe_storage with bad and unreadable files") {
    test::scratch_dir root;
    add_disk(root, "sda", "1\n", "garbage\n");
    add_disk(root, "sdb", "2\n", "36028797018963968\n");            // 2^55 sectors: over 2^64 bytes
    add_disk(root, "sdc", "0\n", "1000000000000000000000000000000\n"); // 10^30
    add_disk(root, "sdd", "\xff\xfe", "-1\n", "ATA", "model");
    denying_view sys(root.path().string());
    sys.denied.insert("/sys/devices/virtual/test/sdd/device/model");
    std::vector<ah::warning> w;
    const auto disks = ah::probe_storage(sys, w);
    REQUIRE(disks.size() == 4);
    CHECK(disks[0].size_bytes == 0);
    CHECK(disks[0].kind == storage_kind::hdd);
    CHECK(disks[1].size_bytes == 0);
    CHECK(disks[1].kind == storage_kind::unknown); // rotational "2"
    CHECK(disks[2].size_bytes == 0);
    CHECK(disks[3].kind == storage_kind::unknown);
    CHECK(disks[3].model.empty());
    // Malformed: the garbage size; rotational "2" and binary. Numbers no disk has: 2^55
    // sectors, 10^30 (past 2^64), -1.
    CHECK(count_kind(w, ah::warning_kind::parse_error) == 3);
    CHECK(count_kind(w, ah::warning_kind::value_out_of_range) == 3);
    CHECK(count_kind(w, ah::warning_kind::permission_denied) == 1);
    CHECK(w.size() == 7);

    test::scratch_dir empty;
    w.clear();
    CHECK(ah::probe_storage(ah::host_system(empty.path().string()), w).empty());
    CHECK(w.empty());

    // A model string with terminal control sequences (a hostile tree, a USB disk's inquiry
    // data): made printable, as DMI strings are.
    test::scratch_dir hostile;
    add_disk(hostile, "sda", "0\n", "2048\n", "ATA", "Amazon EBS\x1b]0;owned\x07\x1b[31m\n");
    w.clear();
    const auto cleaned = ah::probe_storage(ah::host_system(hostile.path().string()), w);
    REQUIRE(cleaned.size() == 1);
    CHECK(cleaned[0].model == "Amazon EBS?]0;owned??[31m");
#if AI_HWACCEL_JSON
    const auto listed = ah::parse_lsblk_json(R"({"blockdevices":[{"name":"sd\u001ba","type":"disk","size":1024,"model":"X\u001b[2J"}]})");
    REQUIRE(listed);
    REQUIRE(listed->size() == 1);
    CHECK((*listed)[0].name == "sd?a");
    CHECK((*listed)[0].model == "X?[2J");
#endif
}

TEST_CASE("parse_lsblk_size") {
    CHECK(ah::parse_lsblk_size("960197124096") == 960197124096ull);
    CHECK(ah::parse_lsblk_size("0B") == 0u);
    CHECK(ah::parse_lsblk_size("4M") == 4ull << 20);
    CHECK(ah::parse_lsblk_size("128G") == 128ull << 30);
    CHECK(ah::parse_lsblk_size("7T") == 7ull << 40);
    CHECK(ah::parse_lsblk_size("894.3G") == (894ull << 30) + ((3ull << 30) + 5) / 10);
    CHECK(ah::parse_lsblk_size("63,9M") == (63ull << 20) + ((9ull << 20) + 5) / 10);
    CHECK(ah::parse_lsblk_size("15.9E").has_value());
    for (const char* bad : {"", "M", "12.M", "12.34M", "-1", "-1G", "1.2.3G", "12 G", "12Q", "16E", "99999999999999999999K",
                            "1000000000000000000000000000000", "\xff"}) {
        CAPTURE(bad);
        CHECK_FALSE(ah::parse_lsblk_size(bad).has_value());
    }
}

#if AI_HWACCEL_JSON
TEST_CASE("parse_lsblk_json") {
    if (auto text = test::capture("lsblk/json_default-columns_majmin-mountpoints.json")) {
        // Human sizes, no ROTA column: a virtio disk and eight NVMe drives in one LVM volume.
        const auto disks = ah::parse_lsblk_json(*text);
        REQUIRE(disks);
        REQUIRE(disks->size() == 9);
        CHECK((*disks)[0].name == "vda");
        CHECK((*disks)[0].kind == storage_kind::virtual_disk);
        CHECK((*disks)[0].size_bytes == 128ull << 30);
        for (std::size_t i = 1; i < disks->size(); ++i) {
            CAPTURE((*disks)[i].name);
            CHECK((*disks)[i].kind == storage_kind::nvme);
            CHECK((*disks)[i].size_bytes == (894ull << 30) + ((3ull << 30) + 5) / 10);
        }
        CHECK((*disks)[1].name == "nvme0n1");
        CHECK((*disks)[8].name == "nvme3n1"); // lsblk's order
    }
    if (auto text = test::capture("lsblk/json_dell-server_nvme-raid_rota-false.json")) {
        // --bytes --paths, ROTA as booleans.
        const auto disks = ah::parse_lsblk_json(*text);
        REQUIRE(disks);
        REQUIRE(disks->size() == 8);
        CHECK((*disks)[0].name == "nvme0n1"); // "/dev/" stripped
        CHECK((*disks)[0].model == "Dell DC NVMe ISE 7450 RI U.2 960GB");
        CHECK((*disks)[0].size_bytes == 960197124096ull);
        CHECK((*disks)[2].name == "nvme3n1");
        CHECK((*disks)[2].model == "INTEL SSDPF2KX076T1O");
        CHECK((*disks)[2].size_bytes == 7681501126656ull);
        for (const auto& d : *disks) CHECK(d.kind == storage_kind::nvme);
    }
    if (auto text = test::capture("lsblk/json_fsused_usb-virtual-media-rota-true.json")) {
        // The BMC's virtual media /dev/sda has no medium (size 0) and is left out.
        const auto disks = ah::parse_lsblk_json(*text);
        REQUIRE(disks);
        REQUIRE(disks->size() == 2);
        CHECK((*disks)[0].name == "nvme0n1");
        CHECK((*disks)[0].model == "SAMSUNG MZTL63T8HFLT-00AW7");
        CHECK((*disks)[0].size_bytes == 3840755982336ull);
        CHECK((*disks)[1].name == "nvme4n1");
        CHECK((*disks)[1].size_bytes == 1920383410176ull);
    }
    // Hand-made: old lsblk's strings for ROTA and SIZE, a rotating disk, a nested disk.
    const auto old = ah::parse_lsblk_json(R"({"blockdevices": [
        {"name": "sda", "type": "disk", "size": "4000787030016", "rota": "1", "vendor": "ATA     ", "model": "ST4000DM004"},
        {"name": "sdb", "type": "disk", "size": 500107862016, "rota": true, "children": [
            {"name": "vg-root", "type": "lvm", "children": [{"name": "sdq", "type": "disk", "size": "1T", "rota": "0"}]}]},
        {"name": "sdb", "type": "disk", "size": 1, "rota": false},
        {"name": "zram0", "type": "disk", "size": "8G"},
        {"name": "sr0", "type": "rom", "size": "1024M"}]})");
    REQUIRE(old);
    REQUIRE(old->size() == 3);
    CHECK((*old)[0].name == "sda");
    CHECK((*old)[0].kind == storage_kind::hdd);
    CHECK((*old)[0].size_bytes == 4000787030016ull);
    CHECK((*old)[1].name == "sdb");
    CHECK((*old)[1].kind == storage_kind::hdd);
    CHECK((*old)[2].name == "sdq");
    CHECK((*old)[2].kind == storage_kind::sata_ssd);

    // Hand-made in lsblk's layout: a 1 TiB Fibre Channel LUN through two paths, which
    // multipathd maps as mpatha (each path's child), and an NVMe/TCP namespace. As
    // probe_storage lists them: the map once, both network volumes. Before, each path was a
    // local disk (the LUN counted twice) and the NVMe/TCP namespace a local NVMe drive.
    const auto san = ah::parse_lsblk_json(R"({"blockdevices": [
        {"name": "sda", "type": "disk", "size": 1099511627776, "rota": true, "tran": "fc", "model": "FlashArray",
         "children": [{"name": "mpatha", "type": "mpath", "size": 1099511627776}]},
        {"name": "sdb", "type": "disk", "size": 1099511627776, "rota": true, "tran": "fc", "model": "FlashArray",
         "children": [{"name": "mpatha", "type": "mpath", "size": 1099511627776}]},
        {"name": "nvme1n1", "type": "disk", "size": 3848290697216, "rota": false, "tran": "tcp"},
        {"name": "nvme0n1", "type": "disk", "size": 960197124096, "rota": false, "tran": "nvme"}]})");
    REQUIRE(san);
    REQUIRE(san->size() == 3);
    CHECK((*san)[0].name == "mpatha");
    CHECK((*san)[0].kind == storage_kind::network);
    CHECK((*san)[0].size_bytes == 1099511627776ull);
    CHECK((*san)[0].model == "FlashArray");
    CHECK((*san)[1].name == "nvme1n1");
    CHECK((*san)[1].kind == storage_kind::network);
    CHECK((*san)[2].kind == storage_kind::nvme);
    // --paths names the map /dev/mapper/mpatha.
    const auto paths = ah::parse_lsblk_json(R"({"blockdevices": [{"name": "/dev/sda", "type": "disk", "size": 4096,
        "children": [{"name": "/dev/mapper/mpatha", "type": "mpath"}]}]})");
    REQUIRE(paths);
    REQUIRE(paths->size() == 1);
    CHECK((*paths)[0].name == "mpatha");

    // Without a TYPE column (lsblk -J -o NAME,SIZE,ROTA,MODEL) the top-level entries are
    // the devices, their children partitions. Before, nothing was listed, without a word.
    const auto untyped = ah::parse_lsblk_json(R"({"blockdevices": [
        {"name": "nvme0n1", "size": "953.9G", "rota": false, "model": "Samsung SSD 980 PRO 1TB",
         "children": [{"name": "nvme0n1p1", "size": "512M", "rota": false}]},
        {"name": "sda", "size": "3.6T", "rota": true, "model": "ST4000DM004"},
        {"name": "loop0", "size": "63.9M", "rota": false}]})");
    REQUIRE(untyped);
    REQUIRE(untyped->size() == 2);
    CHECK((*untyped)[0].name == "nvme0n1");
    CHECK((*untyped)[0].kind == storage_kind::nvme);
    CHECK((*untyped)[1].name == "sda");
    CHECK((*untyped)[1].kind == storage_kind::hdd);
}

TEST_CASE("parse_lsblk_json hostile input") {
    for (const char* bad : {"", "{", "[]", "null", "42", R"({"blockdevices": 5})", R"({"other": []})", "\xff\xfe{}",
                            R"({"blockdevices": [)", R"({"blockdevices": [{"name": "sda\xff"}]})"}) {
        CAPTURE(bad);
        CHECK_FALSE(ah::parse_lsblk_json(bad).has_value());
    }
    // Valid JSON with the wrong types everywhere: nothing thrown, nothing invented.
    const auto odd = ah::parse_lsblk_json(R"({"blockdevices": [
        5, null, "sda", [],
        {"name": 5, "type": "disk"},
        {"name": "sda", "type": ["disk"]},
        {"name": "sdb", "type": "disk", "size": -1, "rota": "maybe", "model": 7, "children": "none"},
        {"name": "sdc", "type": "disk", "size": 1e30, "rota": 2},
        {"name": "sdd", "type": "disk", "size": "10^30", "rota": null},
        {"name": "", "type": "disk"}]})");
    REQUIRE(odd);
    REQUIRE(odd->size() == 3);
    CHECK((*odd)[0].name == "sdb");
    CHECK((*odd)[0].size_bytes == 0);
    CHECK((*odd)[0].kind == storage_kind::unknown);
    CHECK((*odd)[0].model.empty());
    CHECK((*odd)[1].size_bytes == 0);
    CHECK((*odd)[2].size_bytes == 0);
    // Deep nesting is parsed without recursion trouble and walked to a bounded depth.
    std::string deep = R"({"blockdevices": )";
    for (int i = 0; i < 100000; ++i) deep += "[";
    CHECK_FALSE(ah::parse_lsblk_json(deep).has_value());
    std::string nested = R"({"blockdevices": [)";
    for (int i = 0; i < 50; ++i) nested += R"({"name": "x", "type": "part", "children": [)";
    for (int i = 0; i < 50; ++i) nested += "]}";
    nested += "]}";
    const auto n = ah::parse_lsblk_json(nested);
    REQUIRE(n);
    CHECK(n->empty());
}
#endif
