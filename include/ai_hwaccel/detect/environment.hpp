// ai-hwaccel detect: where the process runs — container, Kubernetes, WSL, hypervisor,
// cloud.
//
// Container runtimes leave marks: Docker's /.dockerenv, Podman's /run/.containerenv, and
// cgroup paths in /proc/1/cgroup and /proc/self/cgroup ("/docker/<id>",
// "docker-<id>.scope", "libpod-<id>.scope", "/lxc/<name>", "lxc.payload.<name>",
// "cri-containerd-<id>.scope", "/kubepods/…"). With cgroup v2 and a private cgroup
// namespace (Docker's default there) the path is just "/", so the marker files matter,
// and so do systemd's container files (/run/host/container-manager, written by nspawn
// and Podman; /run/systemd/container, written by systemd as PID 1 of an LXC, LXD or
// Incus container) and Apptainer's /.singularity.d. CRI-O writes Podman's
// /run/.containerenv too (empty), so in a Kubernetes pod that marker alone means CRI-O
// (`other`) and a runtime in the cgroup path wins over it. Kubernetes sets
// KUBERNETES_SERVICE_HOST in every pod and mounts the service account's namespace file.
// WSL's kernel names Microsoft in its release string (systemd's "wsl" container name is
// WSL, not a container). Xen's dom0 ("control_d" in /proc/xen/capabilities) is no guest.
// DMI strings are made printable (a warning says so). The hypervisor and
// the cloud come from the firmware's DMI strings (/sys/class/dmi/id), the same evidence
// cloud-init uses: "Amazon EC2", "Google Compute Engine", Azure's chassis asset tag
// 7783-7084-3265-9085-8269-3286-77 (a plain Hyper-V VM has "Microsoft Corporation" too,
// without the tag), Oracle's "OracleCloud.com" asset tag. A KVM guest without DMI
// (Firecracker) is known by the kvm-clock its kernel registers. Region and zone are not
// in DMI and are left empty: finding them needs the network (metadata services), which
// detection never touches.
#pragma once

#include "ai_hwaccel/config.hpp"
#include "ai_hwaccel/core/system_io.hpp"
#include "ai_hwaccel/core/text.hpp"
#include "ai_hwaccel/core/warning.hpp"
#include "ai_hwaccel/detect/capture.hpp"
#include "ai_hwaccel/detect/system.hpp"
#include "ai_hwaccel/detect/sysfs.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

AI_HWACCEL_NAMESPACE_BEGIN

// ---------------------------------------------------------------------------------------
// cgroup paths

/// What a /proc/<pid>/cgroup file says about containers.
struct cgroup_hints {
    container_runtime runtime = container_runtime::none;
    bool kubernetes = false;  ///< a "kubepods" cgroup
    std::string container_id; ///< the id or name in the path, when it names one
    friend bool operator==(const cgroup_hints&, const cgroup_hints&) = default;
};

namespace detail {
/// Strips `prefix` and `suffix` from `s` if both are there.
constexpr std::optional<std::string_view> between(std::string_view s, std::string_view prefix,
                                                  std::string_view suffix) noexcept {
    if (s.size() < prefix.size() + suffix.size() || !s.starts_with(prefix) || !s.ends_with(suffix))
        return std::nullopt;
    return s.substr(prefix.size(), s.size() - prefix.size() - suffix.size());
}

/// A cgroup path segment that names a container: the segment before it (empty: any), the
/// segment's prefix and suffix, and the runtime; what lies between prefix and suffix is the
/// container's id. `none` is a segment on the host that looks like a container's.
/// The strings are arrays, not views, so that the table needs no relocation in a PIE.
struct cgroup_rule {
    char previous[14], prefix[16], suffix[7];
    container_runtime runtime;
    bool exact = false; ///< the segment is the prefix and nothing more
};

/// The first rule that matches a segment decides it.
inline constexpr cgroup_rule cgroup_rules[] = {
    {"", "docker-", ".scope", container_runtime::docker},
    {"docker", "", "", container_runtime::docker}, // cgroupfs driver: /docker/<id>
    {"", "cri-containerd-", ".scope", container_runtime::containerd},
    {"", "nerdctl-", ".scope", container_runtime::containerd}, // nerdctl on systemd-managed containerd
    {"", "crio-", ".scope", container_runtime::other}, // CRI-O
    {"", "libpod-conmon-", "", container_runtime::none}, // Podman's monitor, on the host beside the container
    {"", "libpod-", ".scope", container_runtime::podman},
    {"libpod_parent", "libpod-", "", container_runtime::podman},
    {"lxc", "", "", container_runtime::lxc}, // LXC before 4.0: /lxc/<name>
    {"", "lxc.payload.", "", container_runtime::lxc},
    {"", "lxc.payload", "", container_runtime::lxc, true},
};

/// Looks at one cgroup path, segment by segment.
inline void read_cgroup_path(std::string_view path, cgroup_hints& h) {
    std::string_view previous;
    while (!path.empty()) {
        const auto slash = path.find('/');
        const std::string_view seg = path.substr(0, slash);
        path = slash == std::string_view::npos ? std::string_view{} : path.substr(slash + 1);
        if (seg.empty()) continue;
        if (seg.starts_with("kubepods")) h.kubernetes = true; // kubepods, kubepods.slice, kubepods-burstable.slice
        const cgroup_rule* rule = nullptr;
        std::optional<std::string_view> id; // what the rule leaves of the segment
        for (const auto& r : cgroup_rules) {
            if (*r.previous && r.previous != previous) continue;
            id = r.exact ? (seg == r.prefix ? std::optional<std::string_view>(""sv) : std::nullopt)
                         : between(seg, r.prefix, r.suffix);
            if (id) {
                rule = &r;
                break;
            }
        }
        if (rule) {
            if (rule->runtime != container_runtime::none) {
                if (h.runtime == container_runtime::none || h.runtime == container_runtime::other)
                    h.runtime = rule->runtime;
                if (h.container_id.empty()) h.container_id = std::string(*id);
            }
        } else if (h.kubernetes && previous.starts_with("pod") && h.container_id.empty()) {
            h.container_id = std::string(seg); // cgroupfs driver: /kubepods/<qos>/pod<uid>/<id>
        }
        previous = seg;
    }
}
} // namespace detail

/// /proc/<pid>/cgroup ("hierarchy:controllers:/path" lines, v1, v2 or both) → the
/// container runtime and Kubernetes pod its paths name. The daemons' own cgroups
/// ("/system.slice/docker.service", "containerd.service", Podman's "libpod-conmon-…")
/// belong to the host and are not read as containers. A Kubernetes pod whose path names
/// no runtime (the cgroupfs driver: "/kubepods/burstable/pod<uid>/<id>") is runtime
/// `other`.
inline cgroup_hints parse_proc_cgroup(std::string_view text) {
    cgroup_hints h{};
    while (!text.empty()) {
        const auto nl = text.find('\n');
        const std::string_view line = detail::trim(text.substr(0, nl));
        text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
        const auto c1 = line.find(':');
        const auto c2 = c1 == std::string_view::npos ? c1 : line.find(':', c1 + 1);
        if (c2 == std::string_view::npos) continue;
        const std::string_view path = line.substr(c2 + 1);
        if (path.empty() || path.front() != '/') continue;
        detail::read_cgroup_path(path, h);
    }
    if (h.kubernetes && h.runtime == container_runtime::none) h.runtime = container_runtime::other;
    return h;
}

// ---------------------------------------------------------------------------------------
// DMI: hypervisor and cloud

/// The /sys/class/dmi/id strings that identify a platform (blanks trimmed).
struct dmi_info {
    std::string sys_vendor, product_name, product_version, product_serial, product_uuid;
    std::string bios_vendor, bios_version, board_vendor, chassis_vendor, chassis_asset_tag;
    friend bool operator==(const dmi_info&, const dmi_info&) = default;
};

struct platform_identity {
    cloud_provider cloud = cloud_provider::none;
    std::string hypervisor;    ///< "KVM", "QEMU", "Xen", "VMware", "Microsoft", …; empty: bare metal or unknown
    std::string instance_type; ///< where the firmware names it (AWS: product_name, "p4d.24xlarge")
    friend bool operator==(const platform_identity&, const platform_identity&) = default;
};

/// The DMI-visible azure marker: Hyper-V VMs everywhere say "Microsoft Corporation"
/// / "Virtual Machine", Azure's also carry this chassis asset tag.
inline constexpr std::string_view azure_chassis_asset_tag = "7783-7084-3265-9085-8269-3286-77";

/// Hypervisor and cloud from DMI strings, plus /sys/hypervisor/type and /uuid (Xen
/// guests). Cloud rules: AWS when a vendor string is "Amazon EC2", the BIOS version names
/// Amazon (Xen-era instances: "4.11.amazon"), or, last, in a Xen guest that no other rule
/// places, the Xen or product UUID starts with "ec2"; GCP for product "Google Compute
/// Engine", BIOS vendor "Google" or serial "GoogleCloud-…"; Azure only with its chassis
/// asset tag; Oracle for the "OracleCloud.com" asset tag; `other` for DigitalOcean,
/// Hetzner, Vultr, Scaleway, UpCloud, Linode/Akamai, Alibaba Cloud ECS, Exoscale,
/// CloudSigma, Huawei Cloud and Open Telekom Cloud. Software platforms (OpenStack,
/// CloudStack) are not clouds by themselves.
inline platform_identity identify_platform(const dmi_info& d, std::string_view hypervisor_type = {},
                                           std::string_view hypervisor_uuid = {}) {
    using detail::icontains;
    using detail::iequals;
    platform_identity p{};
    const std::string_view vendor = d.sys_vendor, product = d.product_name;
    const bool ec2_vendor =
        vendor == "Amazon EC2"sv || d.board_vendor == "Amazon EC2"sv || d.bios_vendor == "Amazon EC2"sv;
    // Bare-metal sizes: "i3.metal", and the newer "m7i.metal-24xl" / "c7i.metal-48xl".
    const auto dot = product.find('.');
    const bool metal = ec2_vendor && dot != std::string_view::npos && product.substr(dot + 1).starts_with("metal");

    // Hypervisor, most specific evidence first.
    std::string_view hypervisor;
    if (iequals(detail::trim(hypervisor_type), "xen"sv)) hypervisor = "Xen"sv;
    else if (ec2_vendor) hypervisor = metal ? ""sv : "Amazon"sv; // Nitro (KVM-based); metal sizes have none
    else if (icontains(product, "KVM"sv)) hypervisor = "KVM"sv;
    else if (vendor == "QEMU"sv) hypervisor = "QEMU"sv; // KVM or TCG: DMI cannot tell
    else if (icontains(vendor, "VMware"sv) || icontains(product, "VMware"sv)) hypervisor = "VMware"sv;
    else if (vendor == "innotek GmbH"sv || product == "VirtualBox"sv) hypervisor = "VirtualBox"sv;
    else if (vendor == "Microsoft Corporation"sv && product == "Virtual Machine"sv) hypervisor = "Microsoft"sv;
    else if (vendor == "Xen"sv || product == "HVM domU"sv || d.chassis_vendor == "Xen"sv) hypervisor = "Xen"sv;
    else if (vendor == "Google"sv && product == "Google Compute Engine"sv) hypervisor = "Google"sv;
    else if (icontains(vendor, "Parallels"sv)) hypervisor = "Parallels"sv;
    else if (d.chassis_vendor == "Bochs"sv) hypervisor = "QEMU"sv; // QEMU's default chassis vendor
    p.hypervisor = hypervisor;

    const auto starts_ec2 = [](std::string_view s) { return s.size() >= 3 && iequals(s.substr(0, 3), "ec2"sv); };
    const std::string_view tag = d.chassis_asset_tag;
    // The definitive marks first; a UUID starting "ec2" last, and only in a Xen guest (EC2's
    // Xen-era instances, whose DMI names no vendor): AWS's own page calls that test
    // potentially inaccurate, and one random UUID in 4096 starts so.
    if (ec2_vendor || icontains(d.bios_version, "amazon"sv)) {
        p.cloud = cloud_provider::aws;
        // Nitro instances name their type; Xen-era ones say "HVM domU".
        if (ec2_vendor && product.find('.') != std::string_view::npos) p.instance_type = d.product_name;
    } else if (product == "Google Compute Engine"sv || d.bios_vendor == "Google"sv ||
               d.product_serial.starts_with("GoogleCloud-")) {
        // Not sys_vendor "Google" alone: Chromebooks say that too.
        p.cloud = cloud_provider::gcp;
    } else if (tag == azure_chassis_asset_tag) {
        p.cloud = cloud_provider::azure;
    } else if (tag == "OracleCloud.com"sv) {
        p.cloud = cloud_provider::oracle;
    } else {
        constexpr auto vendors = "DigitalOcean\0Hetzner\0Vultr\0Scaleway\0UpCloud\0Linode\0Akamai\0Alibaba Cloud\0"sv;
        constexpr auto products = "Droplet\0Alibaba Cloud ECS\0CloudSigma\0"sv;
        constexpr auto tags = "HUAWEICLOUD\0OpenTelekomCloud\0"sv;
        if (detail::one_of(vendor, vendors) || detail::one_of(product, products) || product.starts_with("Exoscale") ||
            detail::one_of(tag, tags))
            p.cloud = cloud_provider::other;
        if (p.cloud == cloud_provider::none && p.hypervisor == "Xen"sv &&
            (starts_ec2(detail::trim(hypervisor_uuid)) || starts_ec2(d.product_uuid)))
            p.cloud = cloud_provider::aws;
    }
    return p;
}

// ---------------------------------------------------------------------------------------
// WSL, Kubernetes

/// Whether a kernel release or /proc/version string is WSL's: "5.15.153.1-microsoft-
/// standard-WSL2", "4.4.0-19041-Microsoft" (WSL 1).
constexpr bool is_wsl_kernel(std::string_view release) noexcept {
    return detail::icontains(release, "microsoft"sv) || release.find("WSL"sv) != std::string_view::npos;
}

/// Whether `s` is a Kubernetes namespace name (an RFC 1123 label: 1–63 of a-z, 0-9 and
/// '-', starting and ending with a letter or digit).
constexpr bool is_kubernetes_namespace(std::string_view s) noexcept {
    if (s.empty() || s.size() > 63 || s.front() == '-' || s.back() == '-') return false;
    for (char c : s)
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
    return true;
}

static_assert(is_wsl_kernel("5.15.153.1-microsoft-standard-WSL2"));
static_assert(!is_wsl_kernel("6.17.0-1013-azure"));
static_assert(is_kubernetes_namespace("kube-system") && !is_kubernetes_namespace("Default"));

// ---------------------------------------------------------------------------------------
// The probes

/// Reads /sys/class/dmi/id. Files that are missing are left empty; the serial and UUID
/// are readable by root only, so their being denied is not a warning.
template <system_view S>
dmi_info read_dmi(const S& sys, std::vector<warning>& warnings) {
    dmi_info d;
    struct field {
        char file[18]; // the name itself, not a pointer: no relocation in a PIE
        std::string dmi_info::*member;
        bool root_only;
    };
    static constexpr field fields[] = {
        {"sys_vendor", &dmi_info::sys_vendor, false},
        {"product_name", &dmi_info::product_name, false},
        {"product_version", &dmi_info::product_version, false},
        {"product_serial", &dmi_info::product_serial, true},
        {"product_uuid", &dmi_info::product_uuid, true},
        {"bios_vendor", &dmi_info::bios_vendor, false},
        {"bios_version", &dmi_info::bios_version, false},
        {"board_vendor", &dmi_info::board_vendor, false},
        {"chassis_vendor", &dmi_info::chassis_vendor, false},
        {"chassis_asset_tag", &dmi_info::chassis_asset_tag, false},
    };
    // Virtual machines without firmware tables (Firecracker) and most Arm boards have no
    // DMI folder: one lookup says so instead of ten.
    if (!sys.exists("/sys/class/dmi/id"sv)) return d;
    std::vector<warning> ignored; // for the root-only files: permission denied is the normal case for users
    for (const auto& f : fields) {
        std::string path = "/sys/class/dmi/id/";
        path += f.file;
        const auto text = detail::read_optional_file(sys, path, 4096, f.root_only ? ignored : warnings);
        if (!text) continue;
        // Firmware strings reach JSON and terminals: control bytes and broken UTF-8 become '?'.
        bool changed = false;
        d.*(f.member) = detail::parsing::printable(detail::trim(*text), changed);
        if (changed) detail::add_warning(warnings, warning_kind::parse_error, path, "not printable UTF-8; '?' put in");
    }
    return d;
}

/// The hypervisor a guest kernel's paravirtual clocksource names, from the list in
/// `available_clocksource`: "kvm-clock" (registered only in a KVM guest) → "KVM"; empty
/// for anything else. (Hyper-V's clocksource adds nothing: its guests have DMI, except
/// WSL 2, which `wsl` names.)
constexpr std::string_view paravirtual_clock_hypervisor(std::string_view clocks) noexcept {
    return detail::icontains(clocks, "kvm-clock"sv) ? "KVM"sv : std::string_view{};
}

/// The same, read from `sys`: what names the hypervisor where there is no DMI (microVMs
/// such as Firecracker have none). A hint only, so a file that cannot be read is no warning.
template <system_view S>
std::string_view paravirtual_clock_hypervisor(const S& sys) {
    const auto r = sys.read_file("/sys/devices/system/clocksource/clocksource0/available_clocksource"sv, 4096);
    return r.ok() ? paravirtual_clock_hypervisor(r.data) : std::string_view{};
}

/// Whether /proc/cpuinfo's text is an x86 CPU's (`flags` lines) that lacks the
/// "hypervisor" flag (CPUID's bit, set in every guest): bare metal. False for other
/// architectures, whose cpuinfo has no `flags`.
constexpr bool x86_bare_metal(std::string_view cpuinfo) noexcept {
    return cpuinfo.find("\nflags") != std::string_view::npos && cpuinfo.find(" hypervisor") == std::string_view::npos;
}
static_assert(!x86_bare_metal("processor: 0\nflags\t\t: fpu vme hypervisor lahf_lm\n"));
static_assert(x86_bare_metal("processor: 0\nflags\t\t: fpu vme lahf_lm\n"));
static_assert(!x86_bare_metal("processor: 0\nFeatures : fp asimd\n"));

/// Container, Kubernetes, WSL, hypervisor and cloud of the machine seen through `sys`.
/// Missing files are normal (most of them only exist in one kind of environment) and
/// give no warning; unreadable ones do.
template <system_view S>
runtime_environment probe_environment(const S& sys, std::vector<warning>& warnings) {
    runtime_environment env{};
    // Containers: marker files first, then cgroup paths (PID 1's, then ours). CRI-O
    // writes /run/.containerenv too (empty), so in a Kubernetes pod the cgroup path's
    // runtime wins over that marker.
    if (sys.exists("/.dockerenv"sv)) env.container = container_runtime::docker;
    else if (sys.exists("/run/.containerenv"sv)) env.container = container_runtime::podman;
    const bool containerenv_only = env.container == container_runtime::podman;
    for (std::string_view path : {"/proc/1/cgroup"sv, "/proc/self/cgroup"sv}) {
        const auto text = detail::read_optional_file(sys, path, 64 * 1024, warnings);
        if (!text) continue;
        const auto h = parse_proc_cgroup(*text);
        env.kubernetes = env.kubernetes || h.kubernetes;
        const bool weaker = env.container == container_runtime::other ||
                            (h.kubernetes && env.container == container_runtime::podman);
        if (env.container == container_runtime::none || (weaker && h.runtime != container_runtime::none))
            env.container = h.runtime;
    }
    // systemd's container interface: the manager's name in /run/host/container-manager
    // (systemd-nspawn, Podman) or /run/systemd/container (systemd, inside any container
    // whose PID 1 it is: LXC, LXD, Incus), and in PID 1's `container` variable, which
    // this process sees only where it inherited it. With a private cgroup namespace these
    // are the only signs of LXC and nspawn.
    if (env.container == container_runtime::none) {
        const auto runtime_named = [](std::string_view c) {
            c = detail::trim(c);
            // systemd counts WSL as a container ("wsl"); here it is `wsl`, not a container.
            if (c == "wsl"sv) return container_runtime::none;
            if (c == "podman"sv) return container_runtime::podman;
            if (c == "docker"sv) return container_runtime::docker;
            if (c == "lxc"sv || c == "lxc-libvirt"sv) return container_runtime::lxc;
            return c.empty() ? container_runtime::none : container_runtime::other;
        };
        for (std::string_view path : {"/run/host/container-manager"sv, "/run/systemd/container"sv}) {
            const auto r = sys.read_file(path, 256);
            if (r.ok()) env.container = runtime_named(r.data);
            if (env.container != container_runtime::none) break;
        }
        if (env.container == container_runtime::none)
            if (const auto c = sys.env("container"sv)) env.container = runtime_named(*c);
        // Apptainer (Singularity), common on HPC clusters, shares the host's cgroups and
        // writes none of the above; its image always holds /.singularity.d.
        if (env.container == container_runtime::none && sys.exists("/.singularity.d"sv))
            env.container = container_runtime::other;
    }

    // Kubernetes: the service variables every pod gets, and the service account's namespace.
    if (const auto host = sys.env("KUBERNETES_SERVICE_HOST"sv); host && !host->empty()) env.kubernetes = true;
    constexpr std::string_view ns_path = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";
    if (const auto ns = detail::read_optional_file(sys, ns_path, 4096, warnings)) {
        const std::string_view name = detail::trim(*ns);
        if (is_kubernetes_namespace(name)) {
            env.kubernetes = true;
            env.kubernetes_namespace = std::string(name);
        } else {
            detail::add_warning(warnings, warning_kind::parse_error, ns_path, "not a Kubernetes namespace name");
        }
    }
    // A pod with its own cgroup namespace (cgroup v2) shows only "0::/": no runtime in the
    // path, and the empty /run/.containerenv is CRI-O's (kubelet runs no Podman).
    if (env.kubernetes && (env.container == container_runtime::none ||
                           (containerenv_only && env.container == container_runtime::podman)))
        env.container = container_runtime::other;

    // WSL: the kernel's release string.
    for (std::string_view path : {"/proc/sys/kernel/osrelease"sv, "/proc/version"sv}) {
        if (const auto text = detail::read_optional_file(sys, path, 4096, warnings)) {
            env.wsl = is_wsl_kernel(*text);
            break;
        }
    }

    // Hypervisor and cloud.
    const auto dmi = read_dmi(sys, warnings);
    auto hv_type = detail::read_optional_file(sys, "/sys/hypervisor/type"sv, 256, warnings);
    // Xen's control domain (dom0) runs on the machine itself: /proc/xen/capabilities says
    // "control_d" there, and a hint that cannot be read is no warning.
    if (hv_type) {
        const auto caps = sys.read_file("/proc/xen/capabilities"sv, 256);
        if (caps.ok() && caps.data.find("control_d") != std::string::npos) hv_type.reset();
    }
    const auto hv_uuid = detail::read_optional_file(sys, "/sys/hypervisor/uuid"sv, 256, warnings);
    auto platform = identify_platform(dmi, hv_type ? std::string_view(*hv_type) : std::string_view{},
                                      hv_uuid ? std::string_view(*hv_uuid) : std::string_view{});
    env.hypervisor = std::move(platform.hypervisor);
    // Google's bare-metal sizes (c3-*-metal) carry its VMs' DMI strings; only the CPU tells
    // them apart, as systemd-detect-virt does: a guest's x86 CPU has the hypervisor flag.
    if (env.hypervisor == "Google"sv) {
        const auto cpuinfo = sys.read_file("/proc/cpuinfo"sv, 64 * 1024);
        if (cpuinfo.ok() && x86_bare_metal(cpuinfo.data)) env.hypervisor.clear();
    }
    if (env.hypervisor.empty()) env.hypervisor = paravirtual_clock_hypervisor(sys);
    env.cloud = platform.cloud;
    env.instance_type = std::move(platform.instance_type);
    return env;
}

AI_HWACCEL_NAMESPACE_END
