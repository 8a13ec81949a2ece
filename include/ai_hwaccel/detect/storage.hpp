// ai-hwaccel detect: storage devices.
//
// Disks from /sys/block, and a parser for `lsblk --json`. Only devices a model could be
// loaded from are listed: loop and RAM disks, zram, device-mapper and md RAID stacks
// (which sit on disks already listed; a multipath map is listed instead of its paths,
// which are one volume), hidden NVMe multipath paths, eMMC boot/RPMB
// areas and devices without a medium are left out. Kinds are told apart honestly: a
// virtio or Xen disk, or one whose vendor or model names a hypervisor or a network block
// service, is a virtual disk whatever its rotational flag says (the flag means nothing
// there); NVMe over PCIe is NVMe, over fabrics (TCP, RDMA, Fibre Channel, by where the
// kernel puts the namespace or its controllers' transport) a network disk;
// otherwise queue/rotational decides between HDD and SSD (so SAS, USB and eMMC flash
// count as sata_ssd). Persistent memory (pmem*, NVDIMM namespaces) is byte-addressable
// memory behind a block interface and is reported as `ram`.
#pragma once

#include "ai_hwaccel/config.hpp"
#include "ai_hwaccel/core/system_io.hpp"
#include "ai_hwaccel/core/text.hpp"
#include "ai_hwaccel/core/warning.hpp"
#include "ai_hwaccel/detect/capture.hpp"
#include "ai_hwaccel/detect/system.hpp"
#include "ai_hwaccel/detect/sysfs.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#if AI_HWACCEL_JSON
#include <nlohmann/json.hpp>
#endif

AI_HWACCEL_NAMESPACE_BEGIN

/// True for block device names that are not disks of their own: loop devices, RAM disks,
/// zram, null_blk, device-mapper and md RAID stacks, ZFS volumes, an eMMC's boot and RPMB
/// areas, a board's SPI flash (mtdblock<N>: an RK3588's 16 MiB boot flash); and for optical
/// drives (sr<N>, with a disc in or not): no place to load a model from.
constexpr bool is_pseudo_block_device(std::string_view name) noexcept {
    if (name.starts_with("loop") || name.starts_with("ram") || name.starts_with("zram") ||
        name.starts_with("dm-") || name.starts_with("md") || name.starts_with("zd") || name.starts_with("sr") ||
        name.starts_with("mtdblock") || name.starts_with("nullb"))
        return true;
    if (name.starts_with("mmcblk") &&
        (name.find("boot") != std::string_view::npos || name.find("rpmb") != std::string_view::npos))
        return true;
    return false;
}

/// Vendor or model strings that say the disk is emulated or remote: QEMU, VMware,
/// VirtualBox and Hyper-V ("Msft" / "Virtual Disk") disks, AWS EBS and GCP persistent
/// disks (SCSI "PersistentDisk", NVMe "nvme_card-pd"; GCP's local SSDs are "nvme_card"),
/// and a BMC's virtual media (the Linux USB mass-storage gadget, "File-Stor Gadget").
constexpr bool names_virtual_disk(std::string_view vendor, std::string_view model) noexcept {
    for (std::string_view marker : {"QEMU"sv, "VMware"sv, "Virtual"sv, "VBOX"sv, "Msft"sv,
                                    "Amazon Elastic Block Store"sv, "PersistentDisk"sv, "nvme_card-pd"sv,
                                    "File-Stor Gadget"sv})

        if (detail::icontains(vendor, marker) || detail::icontains(model, marker)) return true;
    return false;
}

/// The kind of a block device from its kernel name, its vendor and model strings and its
/// rotational flag (nullopt when unknown). See the header comment for the rules.
constexpr storage_kind classify_block_device(std::string_view name, std::string_view vendor, std::string_view model,
                                             std::optional<bool> rotational) noexcept {
    if (name.starts_with("pmem")) return storage_kind::ram;
    if (name.starts_with("nbd") || name.starts_with("rbd")) return storage_kind::network;
    if (name.starts_with("vd") || name.starts_with("xvd") || names_virtual_disk(vendor, model))
        return storage_kind::virtual_disk;
    if (name.starts_with("nvme")) return storage_kind::nvme;
    if (!rotational) return storage_kind::unknown;
    return *rotational ? storage_kind::hdd : storage_kind::sata_ssd;
}

static_assert(classify_block_device("nvme0n1", "", "Samsung SSD 990 PRO 2TB", false) == storage_kind::nvme);
static_assert(classify_block_device("nvme1n1", "", "Amazon Elastic Block Store", false) == storage_kind::virtual_disk);
static_assert(classify_block_device("nvme0n1", "", "nvme_card-pd", false) == storage_kind::virtual_disk);
static_assert(classify_block_device("nvme0n1", "", "nvme_card", false) == storage_kind::nvme);
static_assert(classify_block_device("vda", "", "", true) == storage_kind::virtual_disk);
static_assert(classify_block_device("sda", "ATA", "ST4000DM004", true) == storage_kind::hdd);

namespace detail {
inline std::optional<bool> parse_rotational(std::string_view s) noexcept {
    s = trim(s);
    if (s == "1"sv) return true;
    if (s == "0"sv) return false;
    return std::nullopt;
}

// A SCSI disk's folder under an iSCSI session ("/session3/target3:0:0/…") or a Fibre
// Channel remote port ("/rport-1:0-0/target1:0:0/…"): a volume of a storage network.
constexpr bool scsi_over_network(std::string_view dir) noexcept {
    for (std::string_view mark : {"/session"sv, "/rport-"sv})
        for (auto at = dir.find(mark); at != std::string_view::npos; at = dir.find(mark, at + 1))
            if (at + mark.size() < dir.size() && dir[at + mark.size()] >= '0' && dir[at + mark.size()] <= '9')
                return true;
    return false;
}
static_assert(scsi_over_network("/sys/devices/platform/host3/session1/target3:0:0/3:0:0:0/block/sdb"));
static_assert(scsi_over_network("/sys/devices/pci0000:00/0000:00:03.0/0000:05:00.0/host1/rport-1:0-0/target1:0:0"));
static_assert(!scsi_over_network("/sys/devices/pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0/block/sda"));
static_assert(!scsi_over_network("/sys/devices/virtual/sessions/x"));

// Whether `dir` (a dm-N folder) is a device-mapper multipath map: multipathd names its
// maps' uuids "mpath-<wwid>".
template <system_view S>
bool is_multipath_map(const S& sys, const std::string& dir) {
    const auto r = sys.read_file(dir + "/dm/uuid", 256);
    return r.ok() && trim(r.data).starts_with("mpath-");
}

// Whether a disk (its folder) is one path of a multipath map: a map holds it.
template <system_view S>
bool is_multipath_path(const S& sys, const std::string& dir) {
    const auto holders = sys.list_dir(dir + "/holders");
    if (!holders) return false;
    for (const auto& h : *holders)
        if (std::string_view(h).starts_with("dm-") && is_multipath_map(sys, concat({dir, "/holders/"sv, h})))
            return true;
    return false;
}

// Whether an NVMe namespace (`dir`, its sysfs folder) is reached over TCP, RDMA or Fibre
// Channel. A namespace of one fabrics controller sits under /sys/devices/virtual/
// nvme-fabrics/ctl/; otherwise its controller's `transport` says ("pcie", "tcp", "rdma",
// "fc", "loop"): the folder above for a namespace of one controller, the controllers the
// subsystem folder links for a multipath head (nvme-subsystem/nvme-subsysN/nvmeXnY, the
// kernel's default for fabrics targets). A hint: files that cannot be read say nothing.
template <system_view S>
bool nvme_over_fabrics(const S& sys, std::string_view dir) {
    if (dir.find("/nvme-fabrics/") != std::string_view::npos) return true;
    const auto slash = dir.rfind('/');
    if (slash == std::string_view::npos) return false;
    const std::string parent(dir.substr(0, slash));
    const auto remote = [&](const std::string& controller) {
        const auto r = sys.read_file(controller + "/transport", 64);
        if (!r.ok()) return false;
        const std::string_view t = trim(r.data);
        return t == "tcp"sv || t == "rdma"sv || t == "fc"sv;
    };
    if (!base_name(parent).starts_with("nvme-subsys")) return remote(parent);
    const auto entries = sys.list_dir(parent);
    if (!entries) return false;
    for (const auto& e : *entries) {
        const std::string_view n = e;
        if (n.size() > 4 && n.starts_with("nvme") &&
            std::all_of(n.begin() + 4, n.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
            remote(concat({parent, "/"sv, e})))
            return true;
    }
    return false;
}
} // namespace detail

/// One block device from its sysfs directory (`dir`, the target of /sys/block/<name>);
/// nullopt when it is not a disk a model could live on (see the header comment).
/// Attributes that are missing are left unknown without a warning.
/// `as_path`: read a path of a multipath map for the map's figures (it is not left out
/// for being one).
template <system_view S>
std::optional<storage_device> read_block_device(const S& sys, std::string_view name, std::string_view dir,
                                                std::vector<warning>& warnings, bool as_path = false) {
    if (name.empty() || is_pseudo_block_device(name)) return std::nullopt;
    const std::string d(dir);
    std::string path; // d + "/<file>", for each file read in turn
    const auto at = [&](std::string_view file) -> const std::string& {
        path = d;
        path += file;
        return path;
    };
    // Stacks that do not follow the naming (a renamed md array, device-mapper) say so.
    if (sys.exists(at("/dm"sv)) || sys.exists(at("/md"sv))) return std::nullopt;
    // One path of a multipath map: the map is listed instead (probe_storage).
    if (!as_path && detail::is_multipath_path(sys, d)) return std::nullopt;
    constexpr std::size_t cap = 4096;
    // An NVMe multipath path (nvmeXcYnZ); its namespace is listed as nvmeXnZ.
    const auto hidden = detail::read_optional_file(sys, at("/hidden"sv), cap, warnings);
    if (hidden && detail::trim(*hidden) == "1"sv) return std::nullopt;
    storage_device dev{};
    dev.name = std::string(name);
    if (auto text = detail::read_optional_file(sys, at("/size"sv), cap, warnings)) {
        const auto sectors = detail::parse_u64(detail::trim(*text));
        if (!sectors)
            detail::add_warning(warnings, detail::unparsed_number(*text), path, "not a sector count");
        else if (*sectors > UINT64_MAX / 512)
            detail::add_warning(warnings, warning_kind::value_out_of_range, path, "larger than any disk");
        else if (*sectors == 0) {
            // No medium (an empty card reader or drive, an unconnected nbd); a path of a
            // multipath map may read 0 (a standby path) and still tell the volume's kind.
            if (!as_path) return std::nullopt;
        }
        else
            dev.size_bytes = *sectors * 512; // always 512-byte units, whatever the logical block size
    }
    std::optional<bool> rotational;
    if (auto text = detail::read_optional_file(sys, at("/queue/rotational"sv), cap, warnings)) {
        rotational = detail::parse_rotational(*text);
        if (!rotational) detail::add_warning(warnings, warning_kind::parse_error, path, "not 0 or 1");
    }
    std::string vendor;
    if (auto text = detail::read_optional_file(sys, at("/device/vendor"sv), cap, warnings))
        vendor = std::string(detail::trim(*text));
    if (auto text = detail::read_optional_file(sys, at("/device/model"sv), cap, warnings)) {
        // A disk's inquiry data reaches terminals and JSON: control bytes and broken UTF-8
        // become '?', as in the firmware's DMI strings (without their warning: the '?'
        // says it, and the minimal program has no room for one more message).
        bool changed = false;
        dev.model = detail::parsing::printable(detail::trim(*text), changed);
    }
    dev.kind = classify_block_device(name, vendor, dev.model, rotational);
    if (dev.kind == storage_kind::nvme && detail::nvme_over_fabrics(sys, d)) dev.kind = storage_kind::network;
    // A SCSI disk of an iSCSI session or a Fibre Channel remote port is a SAN volume.
    if ((dev.kind == storage_kind::hdd || dev.kind == storage_kind::sata_ssd || dev.kind == storage_kind::unknown) &&
        detail::scsi_over_network(d))
        dev.kind = storage_kind::network;
    return dev;
}

/// A device-mapper multipath map (dm-N whose dm/uuid starts "mpath-"): one volume seen
/// through several paths (sdX each), reported once under its own name, sized by its own
/// `size`, with its first path's model and kind (a SAN volume is `network`; a standby
/// path of an active/passive array that reads no size still says them). nullopt for other
/// device-mapper targets and for a map without a readable path.
template <system_view S>
std::optional<storage_device> read_multipath_map(const S& sys, std::string_view name, std::string_view dir,
                                                 std::vector<warning>& warnings) {
    const std::string d(dir);
    if (!detail::is_multipath_map(sys, d)) return std::nullopt;
    const auto paths = sys.list_dir(d + "/slaves");
    if (!paths || paths->empty()) return std::nullopt;
    const std::string first = *std::min_element(paths->begin(), paths->end(), detail::name_less);
    const std::string path = detail::concat({d, "/slaves/"sv, first});
    const auto path_dir = detail::resolve_sysfs_link(sys, path);
    auto dev = read_block_device(sys, first, path_dir ? *path_dir : path, warnings, /*as_path=*/true);
    if (!dev) return std::nullopt;
    dev->name = std::string(name);
    constexpr std::size_t cap = 4096;
    if (auto text = detail::read_optional_file(sys, d + "/size", cap, warnings)) {
        const auto sectors = detail::parse_u64(detail::trim(*text));
        if (sectors && *sectors > 0 && *sectors <= UINT64_MAX / 512) dev->size_bytes = *sectors * 512;
    }
    return dev;
}

/// The machine's disks from /sys/block, by name. No /sys/block gives an empty list and no
/// warning.
template <system_view S>
std::vector<storage_device> probe_storage(const S& sys, std::vector<warning>& warnings) {
    std::vector<storage_device> out;
    auto names = detail::list_optional_dir(sys, "/sys/block"sv, warnings);
    if (!names) return out;
    detail::sort_names(*names, detail::name_less); // disks come out by name
    for (const auto& name : *names) {
        const bool map = std::string_view(name).starts_with("dm-"); // a multipath map stands for its paths
        if (!map && is_pseudo_block_device(name)) continue;
        std::string entry = "/sys/block/";
        entry += name;
        const auto dir = detail::resolve_sysfs_link(sys, entry);
        auto dev = map ? read_multipath_map(sys, name, dir ? *dir : entry, warnings)
                       : read_block_device(sys, name, dir ? *dir : entry, warnings);
        if (dev) out.push_back(std::move(*dev));
    }
    return out;
}

/// An lsblk SIZE: bytes ("960197124096", with --bytes) or a human size in binary
/// multiples ("12.9M", "894.3G", "7T", "0B"), which lsblk has rounded to one decimal, so
/// the result is as approximate as the text. nullopt for anything else or beyond 2^64.
constexpr std::optional<std::uint64_t> parse_lsblk_size(std::string_view s) noexcept {
    s = detail::trim(s);
    if (auto n = detail::parse_u64(s)) return n;
    if (s.empty()) return std::nullopt;
    unsigned shift = 0;
    switch (s.back()) {
    case 'B': shift = 0; break;
    case 'K': shift = 10; break;
    case 'M': shift = 20; break;
    case 'G': shift = 30; break;
    case 'T': shift = 40; break;
    case 'P': shift = 50; break;
    case 'E': shift = 60; break;
    default: return std::nullopt;
    }
    s.remove_suffix(1);
    // One decimal at most: '.' under LC_ALL=C, ',' in some locales.
    const auto dot = s.find_first_of(".,");
    const auto whole = detail::parse_u64(s.substr(0, dot));
    std::uint64_t tenths = 0;
    if (dot != std::string_view::npos) {
        const std::string_view frac = s.substr(dot + 1);
        if (frac.size() != 1 || frac[0] < '0' || frac[0] > '9') return std::nullopt;
        tenths = static_cast<std::uint64_t>(frac[0] - '0');
    }
    if (!whole || *whole > (UINT64_MAX >> shift)) return std::nullopt;
    const std::uint64_t base = *whole << shift;
    const std::uint64_t extra = ((tenths << shift) + 5) / 10; // 9 << 60 still fits in 64 bits
    if (extra > UINT64_MAX - base) return std::nullopt;
    return base + extra;
}

static_assert(parse_lsblk_size("7T") == 7ull << 40);
static_assert(parse_lsblk_size("12.9M") == (12ull << 20) + ((9ull << 20) + 5) / 10);
static_assert(!parse_lsblk_size("16E"));

#if AI_HWACCEL_JSON
namespace detail {
inline std::string json_text(const nlohmann::json& j, const char* key) {
    const auto it = j.find(key);
    if (it == j.end() || !it->is_string()) return {};
    return std::string(trim(it->get_ref<const std::string&>()));
}

inline std::optional<std::uint64_t> json_size(const nlohmann::json& j) {
    const auto it = j.find("size");
    if (it == j.end()) return std::nullopt;
    if (it->is_number_unsigned()) return it->get<std::uint64_t>();
    if (it->is_number_integer()) {
        const auto v = it->get<std::int64_t>();
        return v < 0 ? std::nullopt : std::optional<std::uint64_t>(static_cast<std::uint64_t>(v));
    }
    if (it->is_string()) return parse_lsblk_size(it->get_ref<const std::string&>());
    return std::nullopt;
}

inline std::optional<bool> json_rota(const nlohmann::json& j) {
    const auto it = j.find("rota");
    if (it == j.end()) return std::nullopt;
    if (it->is_boolean()) return it->get<bool>(); // newer lsblk
    if (it->is_string()) return parse_rotational(it->get_ref<const std::string&>()); // older: "0" / "1"
    if (it->is_number_unsigned()) {
        const auto v = it->get<std::uint64_t>();
        if (v <= 1) return v == 1;
    }
    return std::nullopt;
}

// lsblk's TRAN of a disk reached over a network: Fibre Channel ("fc", whatever carries it),
// iSCSI, NVMe over TCP or RDMA.
constexpr bool network_transport(std::string_view tran) noexcept {
    return tran == "fc"sv || tran == "iscsi"sv || tran == "tcp"sv || tran == "rdma"sv;
}

// An entry's name without the folder --paths gives it (/dev/, /dev/mapper/).
inline std::string lsblk_name(const nlohmann::json& j) {
    std::string name = json_text(j, "name");
    if (name.starts_with("/dev/")) name.erase(0, name.rfind('/') + 1);
    return name;
}

inline void collect_lsblk_disks(const nlohmann::json& list, int depth, std::vector<storage_device>& out) {
    if (!list.is_array() || depth > 16) return;
    for (const auto& j : list) {
        if (!j.is_object()) continue;
        const std::string path_name = lsblk_name(j);
        const std::string type = json_text(j, "type");
        // Without a TYPE column the top-level entries are the whole devices.
        const bool disk = j.contains("type") ? type == "disk"sv : depth == 0;
        const auto children = j.find("children");
        if (disk && !path_name.empty() && !is_pseudo_block_device(path_name)) {
            // One path of a multipath map (a child of type mpath): the map is the volume (of
            // the path's size), listed once under its own name, as probe_storage lists it.
            std::string name = path_name;
            const auto size = json_size(j);
            if (children != j.end() && children->is_array())
                for (const auto& c : *children)
                    if (c.is_object() && json_text(c, "type") == "mpath"sv) {
                        if (auto map = lsblk_name(c); !map.empty()) name = std::move(map);
                        break;
                    }
            const bool seen =
                std::any_of(out.begin(), out.end(), [&](const storage_device& d) { return d.name == name; });
            if (!seen && !(size && *size == 0)) {
                storage_device dev;
                bool changed = false;
                dev.name = detail::parsing::printable(name, changed);
                dev.model = detail::parsing::printable(json_text(j, "model"), changed);
                dev.size_bytes = size.value_or(0);
                dev.kind = network_transport(json_text(j, "tran"))
                               ? storage_kind::network
                               : classify_block_device(path_name, json_text(j, "vendor"), dev.model, json_rota(j));
                out.push_back(std::move(dev));
            }
        }
        if (children != j.end()) collect_lsblk_disks(*children, depth + 1, out);
    }
}
} // namespace detail

/// `lsblk --json` output (any column set; with or without --bytes and --paths) → its
/// disks, classified as probe_storage does, in the order lsblk printed them: a multipath
/// map once under its own name (not once per path), a disk whose TRAN is fc, iscsi, tcp or
/// rdma a network volume; without a TYPE column, the top-level entries. Partitions, LVM
/// volumes and the pseudo devices probe_storage skips are left out. nullopt when the text
/// is not lsblk's JSON. Never throws.
inline std::optional<std::vector<storage_device>> parse_lsblk_json(std::string_view text) {
    const auto doc = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) return std::nullopt;
    const auto it = doc.find("blockdevices");
    if (it == doc.end() || !it->is_array()) return std::nullopt;
    std::vector<storage_device> out;
    detail::collect_lsblk_disks(*it, 0, out);
    return out;
}
#endif

AI_HWACCEL_NAMESPACE_END
