#include "ai_hwaccel/detect/environment.hpp"

#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace ah = ai_hwaccel;
namespace fs = std::filesystem;
using ah::cloud_provider;
using ah::container_runtime;

namespace {
// A rooted host whose environment variables are a map (from a captured `env` dump).
// It inherits from host_system so that it keeps modelling system_view as the concept grows.
struct env_view : ah::host_system {
    using ah::host_system::host_system;
    std::map<std::string, std::string> vars;
    std::optional<std::string> env(std::string_view name) const {
        const auto it = vars.find(std::string(name));
        if (it == vars.end()) return std::nullopt;
        return it->second;
    }
};
static_assert(ah::system_view<env_view>);

// An env_view where chosen paths read as "permission denied" (works when tests run as root).
struct denying_view : env_view {
    using env_view::env_view;
    std::set<std::string, std::less<>> denied;
    ah::file_read read_file(std::string_view path, std::size_t cap = ah::default_read_cap) const {
        if (denied.count(path)) return {ah::read_status::permission_denied, {}};
        return ah::host_system::read_file(path, cap);
    }
};
static_assert(ah::system_view<denying_view>);

std::map<std::string, std::string> parse_env_dump(const std::string& text) {
    std::map<std::string, std::string> vars;
    std::size_t pos = 0;
    while (pos < text.size()) {
        const auto nl = text.find('\n', pos);
        const std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
        pos = nl == std::string::npos ? text.size() : nl + 1;
        const auto eq = line.find('=');
        if (eq != std::string::npos && eq > 0) vars[line.substr(0, eq)] = line.substr(eq + 1);
    }
    return vars;
}

using test::count_kind;

const fs::path dmi_captures = fs::path(AI_HWACCEL_FIXTURES_DIR) / "dmi";

// A scratch root whose /sys/class/dmi/id is a copy of a captured one.
void copy_dmi(const test::scratch_dir& root, const std::string& capture) {
    fs::create_directories(root.path() / "sys/class/dmi");
    fs::copy(dmi_captures / capture, root.path() / "sys/class/dmi/id", fs::copy_options::recursive);
}

// The quoted results of `File.read('/sys/class/dmi/id/<field>')` in an irb transcript.
std::map<std::string, std::string> irb_reads(const std::string& text) {
    std::map<std::string, std::string> out;
    std::string field;
    std::size_t pos = 0;
    while (pos < text.size()) {
        const auto nl = text.find('\n', pos);
        const std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
        pos = nl == std::string::npos ? text.size() : nl + 1;
        if (const auto at = line.find("/dmi/id/"); at != std::string::npos) {
            field = line.substr(at + 8, line.find('\'', at) - at - 8);
        } else if (line.rfind("=> \"", 0) == 0 && !field.empty()) {
            std::string value = line.substr(4, line.rfind('"') - 4);
            if (value.size() >= 2 && value.substr(value.size() - 2) == "\\n") value.resize(value.size() - 2);
            out[field] = value;
            field.clear();
        }
    }
    return out;
}
} // namespace

TEST_CASE("parse_proc_cgroup") {
    struct expected {
        const char* file;
        container_runtime runtime;
        bool kubernetes;
        const char* id_prefix;
    };
    for (const auto& e : {
             expected{"proc-1-cgroup_docker-cgroup-v1-hybrid.txt", container_runtime::docker, false, "98b476fc486a"},
             expected{"proc-1-cgroup_docker-cgroup-v2-cgroupns-host.txt", container_runtime::docker, false, "aa86ac98959e"},
             expected{"proc-self-cgroup_k8s-docker-burstable_truncated.txt", container_runtime::other, true, "fbaa59723cd1"},
             expected{"proc-self-cgroup_podman-libpod-systemd_truncated.txt", container_runtime::podman, false,
                      "2521e906f0a0"},
             // Hosts: user sessions and services, no container.
             expected{"proc-self-cgroup_cgroup-v1_cloudstack-vm_user-session.txt", container_runtime::none, false, ""},
             expected{"proc-self-cgroup_cgroup-v1_kunpeng920_user-session.txt", container_runtime::none, false, ""},
             expected{"proc-self-cgroup_cgroup-v1_supermicro-nec-ve_sshd-service.txt", container_runtime::none, false, ""},
             expected{"proc-self-cgroup_cgroup-v2_dgx-spark_user-session.txt", container_runtime::none, false, ""},
             expected{"proc-self-cgroup_host-cgroup2-user-session.txt", container_runtime::none, false, ""},
             // Not a cgroup file at all (a mountinfo line): nothing is read from it.
             expected{"mountinfo-grep-cgroup_podman-cgroup2.txt", container_runtime::none, false, ""},
         }) {
        CAPTURE(e.file);
        const auto text = test::capture(std::string("container/") + e.file);
        if (!text) continue;
        const auto h = ah::parse_proc_cgroup(*text);
        CHECK(h.runtime == e.runtime);
        CHECK(h.kubernetes == e.kubernetes);
        CHECK(h.container_id.substr(0, std::string_view(e.id_prefix).size()) == e.id_prefix);
        if (std::string_view(e.id_prefix).empty()) CHECK(h.container_id.empty());
        else CHECK(h.container_id.size() == 64);
    }
}

TEST_CASE("parse_proc_cgroup, hand-made paths") {
    // systemd cgroup driver layouts under Kubernetes and elsewhere.
    auto h = ah::parse_proc_cgroup(
        "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234.slice/cri-containerd-abc123.scope\n");
    CHECK(h.runtime == container_runtime::containerd);
    CHECK(h.kubernetes);
    CHECK(h.container_id == "abc123");
    h = ah::parse_proc_cgroup("0::/kubepods.slice/kubepods-pod1.slice/crio-def.scope\n");
    CHECK(h.runtime == container_runtime::other); // CRI-O
    CHECK(h.kubernetes);
    CHECK(ah::parse_proc_cgroup("0::/system.slice/docker-0123.scope\n").runtime == container_runtime::docker);
    // nerdctl's containers on systemd-managed containerd (which writes no /.dockerenv).
    CHECK(ah::parse_proc_cgroup("0::/system.slice/nerdctl-4f1e.scope\n") ==
          ah::cgroup_hints{container_runtime::containerd, false, "4f1e"});
    CHECK(ah::parse_proc_cgroup("0::/machine.slice/libpod-77.scope/container\n").runtime == container_runtime::podman);
    CHECK(ah::parse_proc_cgroup("1:name=systemd:/libpod_parent/libpod-99\n").runtime == container_runtime::podman);
    CHECK(ah::parse_proc_cgroup("0::/lxc.payload.web1\n").runtime == container_runtime::lxc);
    CHECK(ah::parse_proc_cgroup("0::/lxc.payload.web1\n").container_id == "web1");
    CHECK(ah::parse_proc_cgroup("3:cpu:/lxc/web1\n").runtime == container_runtime::lxc);
    CHECK(ah::parse_proc_cgroup("3:cpu:/lxc/web1\n").container_id == "web1");
    // LXC 4's payload cgroup without the container's name: LXC, no id.
    CHECK(ah::parse_proc_cgroup("0::/lxc.payload\n") == ah::cgroup_hints{container_runtime::lxc, false, ""});
    CHECK(ah::parse_proc_cgroup("0::/lxc.payloads\n") == ah::cgroup_hints{});
    CHECK(ah::parse_proc_cgroup("1:name=systemd:/libpod_parent/libpod-99\n").container_id == "99");
    CHECK(ah::parse_proc_cgroup("5:memory:/docker/0123abc\n").container_id == "0123abc");
    // The cgroupfs driver under Kubernetes names no runtime: the segment after the pod's.
    CHECK(ah::parse_proc_cgroup("4:memory:/kubepods/burstable/pod12-34/0123abc\n") ==
          ah::cgroup_hints{container_runtime::other, true, "0123abc"});
    // The first runtime named wins over a later one.
    CHECK(ah::parse_proc_cgroup("0::/system.slice/docker-1.scope/lxc.payload.web1\n") ==
          ah::cgroup_hints{container_runtime::docker, false, "1"});
    // The daemons' and monitors' own cgroups are the host's.
    for (const char* host : {"0::/system.slice/docker.service\n", "0::/system.slice/containerd.service\n",
                             "0::/machine.slice/libpod-conmon-77.scope\n", "0::/lxc.monitor.web1\n", "0::/\n",
                             "0::/user.slice/user-1000.slice/user@1000.service/app.slice/podman.service\n"}) {
        CAPTURE(host);
        CHECK(ah::parse_proc_cgroup(host) == ah::cgroup_hints{});
    }
}

TEST_CASE("parse_proc_cgroup hostile input") {
    for (const std::string& bad : {std::string(), std::string("\xff\xfe\x00\x01", 4), std::string("::"), std::string(":::::"),
                                  std::string("no colons\n"), std::string("0::docker/abc\n"), std::string(100000, '/'),
                                  std::string(100000, ':'), std::string("0::/docker\n")}) {
        CHECK(ah::parse_proc_cgroup(bad) == ah::cgroup_hints{});
    }
    std::string long_path = "0::";
    for (int i = 0; i < 10000; ++i) long_path += "/docker";
    CHECK(ah::parse_proc_cgroup(long_path).runtime == container_runtime::docker); // /docker/docker/…: still bounded
}

TEST_CASE("identify_platform from captured DMI") {
    struct expected {
        const char* dir;
        const char* hypervisor;
        const char* product;
    };
    for (const auto& e : {expected{"sys-class-dmi-id_2pa-pcidomain32bits", "KVM", "CloudStack KVM Hypervisor"},
                          expected{"sys-class-dmi-id_128arm-2pa2n8cluster4co", "", "XA320 V2"},
                          expected{"sys-class-dmi-id_32amd64-4s2n4c-cgroup2", "", "H8QG6"},
                          expected{"sys-class-dmi-id_nvidia-dgx-gb10", "", "NVIDIA_DGX_Spark"},
                          expected{"sys-class-dmi-id_supermicro-sys-4029gp-nec-ve", "", "SYS-4029GP-TRT2-1-NE010"}}) {
        CAPTURE(e.dir);
        if (!fs::exists(dmi_captures / e.dir)) {
            MESSAGE("skipped: capture not found");
            continue;
        }
        test::scratch_dir root;
        copy_dmi(root, e.dir);
        std::vector<ah::warning> w;
        const auto dmi = ah::read_dmi(ah::host_system(root.path().string()), w);
        CHECK(w.empty());
        CHECK(dmi.product_name == e.product); // trailing blanks trimmed ("XA320 V2 ")
        const auto p = ah::identify_platform(dmi);
        CHECK(p.hypervisor == e.hypervisor);
        CHECK(p.cloud == cloud_provider::none); // a CloudStack guest: the platform is not a provider
        CHECK(p.instance_type.empty());
    }
}

TEST_CASE("identify_platform from captured excerpts") {
    if (auto text = test::capture("dmi/aws-ec2-c5_irb-file-read_truncated.txt")) {
        const auto reads = irb_reads(*text);
        REQUIRE(reads.size() == 2);
        ah::dmi_info d;
        d.bios_vendor = reads.at("bios_vendor");
        d.sys_vendor = reads.at("sys_vendor");
        CHECK(d.sys_vendor == "Amazon EC2");
        const auto p = ah::identify_platform(d);
        CHECK(p.cloud == cloud_provider::aws);
        CHECK(p.hypervisor == "Amazon");
        CHECK(p.instance_type.empty()); // the capture stops before product_name
    }
    const auto xen = test::capture("dmi/aws-ec2-xen_chassis_vendor.txt");
    if (xen) {
        ah::dmi_info d;
        d.chassis_vendor = ah::detail::trim(*xen);
        const auto p = ah::identify_platform(d);
        CHECK(p.hypervisor == "Xen");
        CHECK(p.cloud == cloud_provider::none); // "Xen" alone does not say Amazon
    }
    if (auto uuid = test::capture("dmi/aws-ec2_product_uuid.txt")) {
        ah::dmi_info d;
        d.product_uuid = ah::detail::trim(*uuid);
        CHECK(ah::identify_platform(d).cloud == cloud_provider::none); // a UUID alone could be chance
        d.chassis_vendor = xen ? std::string(ah::detail::trim(*xen)) : "Xen"; // in a VM, as EC2's Xen guests are
        CHECK(ah::identify_platform(d).cloud == cloud_provider::aws);
    }
    if (auto text = test::capture("dmi/digitalocean-droplet_product_name.txt")) {
        ah::dmi_info d;
        d.product_name = ah::detail::trim(*text);
        CHECK(ah::identify_platform(d).cloud == cloud_provider::other);
    }
    if (auto text = test::capture("dmi/dmidecode-type1_dell-poweredge-xe9680.txt")) {
        ah::dmi_info d;
        ah::detail::for_each_key_value(*text, [&](std::string_view k, std::string_view v, bool) {
            if (k == "Manufacturer") d.sys_vendor = v;
            if (k == "Product Name") d.product_name = v;
        });
        CHECK(d.sys_vendor == "Dell Inc.");
        CHECK(d.product_name == "PowerEdge XE9680");
        CHECK(ah::identify_platform(d) == ah::platform_identity{}); // bare metal, no cloud
    }
}

TEST_CASE("identify_platform, hand-made DMI strings") {
    ah::dmi_info d;
    d.sys_vendor = "Amazon EC2";
    d.product_name = "p4d.24xlarge";
    auto p = ah::identify_platform(d);
    CHECK(p.cloud == cloud_provider::aws);
    CHECK(p.instance_type == "p4d.24xlarge");
    CHECK(p.hypervisor == "Amazon");
    d.product_name = "i3.metal";
    p = ah::identify_platform(d);
    CHECK(p.hypervisor.empty()); // bare metal
    CHECK(p.instance_type == "i3.metal");
    d.product_name = "m7i.metal-48xl"; // the newer bare-metal sizes
    p = ah::identify_platform(d);
    CHECK(p.hypervisor.empty());
    CHECK(p.instance_type == "m7i.metal-48xl");
    d.product_name = "metal.fake"; // "metal" before the dot is no size
    CHECK(ah::identify_platform(d).hypervisor == "Amazon");

    d = {};
    d.sys_vendor = "Xen";
    d.product_name = "HVM domU";
    d.bios_version = "4.11.amazon";
    p = ah::identify_platform(d);
    CHECK(p.cloud == cloud_provider::aws);
    CHECK(p.hypervisor == "Xen");
    CHECK(p.instance_type.empty());
    d.bios_version = "4.11";
    CHECK(ah::identify_platform(d).cloud == cloud_provider::none);
    CHECK(ah::identify_platform(d, "xen\n", "ec2e1916-9099-7caf-fd21-012345abcdef\n").cloud == cloud_provider::aws);
    // A UUID starting "ec2" is chance (one in 4096) outside EC2's Xen guests: never over a
    // definitive mark, and not in another hypervisor's guest.
    struct guest {
        const char* vendor;
        const char* product;
        const char* bios;
        const char* tag;
        cloud_provider want;
    };
    for (const guest& g : {
             guest{"Microsoft Corporation", "Virtual Machine", "", "7783-7084-3265-9085-8269-3286-77",
                   cloud_provider::azure},
             guest{"Google", "Google Compute Engine", "Google", "", cloud_provider::gcp},
             guest{"QEMU", "Standard PC (i440FX + PIIX, 1996)", "", "OracleCloud.com", cloud_provider::oracle},
             guest{"VMware, Inc.", "VMware Virtual Platform", "", "", cloud_provider::none},
             guest{"QEMU", "Standard PC (Q35 + ICH9, 2009)", "", "", cloud_provider::none},
         }) {
        CAPTURE(g.vendor);
        d = {};
        d.sys_vendor = g.vendor;
        d.product_name = g.product;
        d.bios_vendor = g.bios;
        d.chassis_asset_tag = g.tag;
        d.product_uuid = "EC2B41D6-1234-5678-9ABC-DEF012345678";
        CHECK(ah::identify_platform(d).cloud == g.want);
        CHECK(ah::identify_platform(d, "", "ec2b41d6-1234-5678-9abc-def012345678").cloud == g.want);
    }

    d = {};
    d.sys_vendor = "Google";
    d.product_name = "Google Compute Engine";
    CHECK(ah::identify_platform(d).cloud == cloud_provider::gcp);
    CHECK(ah::identify_platform(d).hypervisor == "Google");
    d.product_name = "Eve"; // a Chromebook: Google hardware, not Google Cloud
    d.bios_vendor = "coreboot";
    CHECK(ah::identify_platform(d) == ah::platform_identity{});

    d = {};
    d.sys_vendor = "Microsoft Corporation";
    d.product_name = "Virtual Machine";
    d.chassis_asset_tag = "7783-7084-3265-9085-8269-3286-77";
    p = ah::identify_platform(d);
    CHECK(p.cloud == cloud_provider::azure);
    CHECK(p.hypervisor == "Microsoft");
    d.chassis_asset_tag = "None"; // a Hyper-V VM elsewhere
    p = ah::identify_platform(d);
    CHECK(p.cloud == cloud_provider::none);
    CHECK(p.hypervisor == "Microsoft");

    d = {};
    d.sys_vendor = "QEMU";
    d.product_name = "Standard PC (i440FX + PIIX, 1996)";
    d.chassis_asset_tag = "OracleCloud.com";
    p = ah::identify_platform(d);
    CHECK(p.cloud == cloud_provider::oracle);
    CHECK(p.hypervisor == "QEMU");
    d.chassis_asset_tag = "";
    CHECK(ah::identify_platform(d).cloud == cloud_provider::none); // plain QEMU

    for (const char* vendor :
         {"DigitalOcean", "Hetzner", "Vultr", "Scaleway", "UpCloud", "Linode", "Akamai", "Alibaba Cloud"}) {
        CAPTURE(vendor);
        d = {};
        d.sys_vendor = vendor;
        CHECK(ah::identify_platform(d).cloud == cloud_provider::other);
    }
    for (const char* product : {"Alibaba Cloud ECS", "Droplet", "CloudSigma", "Exoscale Compute Platform"}) {
        CAPTURE(product);
        d = {};
        d.product_name = product;
        CHECK(ah::identify_platform(d).cloud == cloud_provider::other);
    }
    for (const char* tag : {"HUAWEICLOUD", "OpenTelekomCloud"}) {
        CAPTURE(tag);
        d = {};
        d.chassis_asset_tag = tag;
        CHECK(ah::identify_platform(d).cloud == cloud_provider::other);
    }
    // Names are whole: a part of one, or one with more after it, is none of them.
    for (const char* vendor : {"Hetzne", "Hetzner Online GmbH", "Cloud", "", "Akamai\nLinode"}) {
        CAPTURE(vendor);
        d = {};
        d.sys_vendor = vendor;
        d.product_name = vendor;
        d.chassis_asset_tag = vendor;
        CHECK(ah::identify_platform(d).cloud == cloud_provider::none);
    }
    d = {};
    d.sys_vendor = "VMware, Inc.";
    d.product_name = "VMware Virtual Platform";
    CHECK(ah::identify_platform(d).hypervisor == "VMware");
    d.sys_vendor = "innotek GmbH";
    d.product_name = "VirtualBox";
    CHECK(ah::identify_platform(d).hypervisor == "VirtualBox");
    // Look-alikes are not matches.
    d = {};
    d.sys_vendor = "Amazon EC2 Compatible Inc.";
    d.chassis_asset_tag = "7783-7084-3265-9085-8269-3286-7";
    CHECK(ah::identify_platform(d) == ah::platform_identity{});
    d.sys_vendor = std::string("\xff\xfe\x00", 3);
    d.product_uuid = "ec2"; // but not in a VM
    CHECK(ah::identify_platform(d) == ah::platform_identity{});
}

TEST_CASE("is_wsl_kernel and is_kubernetes_namespace") {
    CHECK(ah::is_wsl_kernel("5.15.153.1-microsoft-standard-WSL2\n"));
    CHECK(ah::is_wsl_kernel("4.4.0-19041-Microsoft"));
    CHECK(ah::is_wsl_kernel("Linux version 5.15.90.1-microsoft-standard-WSL2 (oe-user@oe-host) (gcc 9.3)"));
    CHECK_FALSE(ah::is_wsl_kernel("6.17.0-1013-azure"));
    CHECK_FALSE(ah::is_wsl_kernel(""));
    CHECK(ah::is_kubernetes_namespace("default"));
    CHECK(ah::is_kubernetes_namespace("ml-team-2"));
    for (const char* bad : {"", "-a", "a-", "Default", "a_b", "a.b", "ns\n", "\xff"}) {
        CAPTURE(bad);
        CHECK_FALSE(ah::is_kubernetes_namespace(bad));
    }
    CHECK_FALSE(ah::is_kubernetes_namespace(std::string(64, 'a')));
    CHECK(ah::is_kubernetes_namespace(std::string(63, 'a')));
}

TEST_CASE("probe_environment in the captured Kubernetes pods") {
    for (const char* file : {"env_busybox-pod_minimal.txt", "env_postgres-pod_with-service-links.txt",
                             "printenv_kind-pod-with-downward-api.txt"}) {
        CAPTURE(file);
        const auto text = test::capture(std::string("k8s-env/") + file);
        if (!text) continue;
        test::scratch_dir root;
        env_view sys(root.path().string());
        sys.vars = parse_env_dump(*text);
        CHECK(sys.vars.at("KUBERNETES_SERVICE_HOST") == "10.96.0.1");
        std::vector<ah::warning> w;
        const auto env = ah::probe_environment(sys, w);
        CHECK(w.empty());
        CHECK(env.kubernetes);
        CHECK(env.container == container_runtime::other); // a pod is a container; its runtime is not visible here
        CHECK(env.kubernetes_namespace.empty());          // no service account file in this tree
        CHECK_FALSE(env.wsl);
        CHECK(env.cloud == cloud_provider::none);
        // With the service account's namespace mounted.
        root.write("var/run/secrets/kubernetes.io/serviceaccount/namespace", "default");
        CHECK(ah::probe_environment(sys, w).kubernetes_namespace == "default");
        CHECK(w.empty());
    }
}

TEST_CASE("probe_environment scratch trees") {
    SUBCASE("nothing: a bare host") {
        test::scratch_dir root;
        env_view sys(root.path().string());
        std::vector<ah::warning> w;
        CHECK(ah::probe_environment(sys, w) == ah::runtime_environment{});
        CHECK(w.empty());
    }
    SUBCASE("Docker on a CloudStack VM, WSL kernel string") {
        test::scratch_dir root;
        root.write(".dockerenv", "");
        if (auto text = test::capture("container/proc-1-cgroup_docker-cgroup-v1-hybrid.txt"))
            root.write("proc/1/cgroup", *text);
        root.write("proc/self/cgroup", "0::/\n");
        root.write("proc/sys/kernel/osrelease", "5.15.153.1-microsoft-standard-WSL2\n");
        if (fs::exists(dmi_captures / "sys-class-dmi-id_2pa-pcidomain32bits"))
            copy_dmi(root, "sys-class-dmi-id_2pa-pcidomain32bits");
        env_view sys(root.path().string());
        std::vector<ah::warning> w;
        const auto env = ah::probe_environment(sys, w);
        CHECK(w.empty());
        CHECK(env.container == container_runtime::docker);
        CHECK_FALSE(env.kubernetes);
        CHECK(env.wsl);
        if (fs::exists(dmi_captures / "sys-class-dmi-id_2pa-pcidomain32bits")) CHECK(env.hypervisor == "KVM");
    }
    SUBCASE("Google Cloud: a VM's CPU has the hypervisor flag, a bare-metal size's does not") {
        // hand-made: c3-*-metal carries the same DMI strings as Google's VMs.
        test::scratch_dir root;
        root.write("sys/class/dmi/id/sys_vendor", "Google\n");
        root.write("sys/class/dmi/id/product_name", "Google Compute Engine\n");
        root.write("sys/class/dmi/id/bios_vendor", "Google\n");
        env_view sys(root.path().string());
        std::vector<ah::warning> w;
        CHECK(ah::probe_environment(sys, w).hypervisor == "Google"); // no cpuinfo: the DMI's word
        root.write("proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu vme de pse hypervisor lahf_lm\n");
        CHECK(ah::probe_environment(sys, w).hypervisor == "Google");
        root.write("proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu vme de pse lahf_lm\n");
        const auto metal = ah::probe_environment(sys, w);
        CHECK(metal.hypervisor.empty());
        CHECK(metal.cloud == ah::cloud_provider::gcp);
        CHECK(w.empty());
    }
    SUBCASE("Podman: marker file, or only the container variable") {
        test::scratch_dir root;
        root.write("run/.containerenv", "engine=\"podman-4.9.3\"\n");
        env_view sys(root.path().string());
        std::vector<ah::warning> w;
        CHECK(ah::probe_environment(sys, w).container == container_runtime::podman);
        test::scratch_dir bare;
        env_view var(bare.path().string());
        var.vars["container"] = "podman";
        CHECK(ah::probe_environment(var, w).container == container_runtime::podman);
        var.vars["container"] = "systemd-nspawn";
        CHECK(ah::probe_environment(var, w).container == container_runtime::other);
        CHECK(w.empty());
    }
    SUBCASE("CRI-O writes Podman's .containerenv too: in a pod the cgroup path decides") {
        test::scratch_dir root;
        root.write("run/.containerenv", "");
        env_view sys(root.path().string());
        std::vector<ah::warning> w;
        CHECK(ah::probe_environment(sys, w).container == container_runtime::podman); // nothing else says
        root.write("proc/self/cgroup", "0::/kubepods.slice/kubepods-burstable.slice/"
                                       "kubepods-burstable-pod1a.slice/crio-3f2e.scope\n");
        auto env = ah::probe_environment(sys, w);
        CHECK(env.container == container_runtime::other);
        CHECK(env.kubernetes);
        root.write("proc/self/cgroup", "0::/kubepods.slice/kubepods-besteffort.slice/"
                                       "kubepods-besteffort-pod2b.slice/cri-containerd-9c.scope\n");
        CHECK(ah::probe_environment(sys, w).container == container_runtime::containerd);
        // Outside Kubernetes a cgroup path does not override the marker.
        root.write("proc/self/cgroup", "0::/user.slice/user-1000.slice/user@1000.service/app.slice/"
                                       "libpod-1f2e.scope\n");
        CHECK(ah::probe_environment(sys, w).container == container_runtime::podman);
        // cgroup v2 gives every container its own cgroup namespace: the path is "/" and only
        // the pod's variables and service account say Kubernetes. kubelet runs no Podman.
        root.write("proc/1/cgroup", "0::/\n");
        root.write("proc/self/cgroup", "0::/\n");
        CHECK(ah::probe_environment(sys, w).container == container_runtime::podman); // no pod: Podman's marker
        root.write("var/run/secrets/kubernetes.io/serviceaccount/namespace", "default\n");
        env = ah::probe_environment(sys, w);
        CHECK(env.container == container_runtime::other);
        CHECK(env.kubernetes);
        CHECK(env.kubernetes_namespace == "default");
        env_view vars(root.path().string());
        fs::remove(root.path() / "var/run/secrets/kubernetes.io/serviceaccount/namespace");
        vars.vars["KUBERNETES_SERVICE_HOST"] = "10.96.0.1";
        CHECK(ah::probe_environment(vars, w).container == container_runtime::other);
        // Docker's marker is no CRI-O sign: a pod of the Docker runtime stays Docker.
        root.write(".dockerenv", "");
        CHECK(ah::probe_environment(vars, w).container == container_runtime::docker);
        CHECK(w.empty());
    }
    SUBCASE("WSL 2 with systemd: \"wsl\" in systemd's container file is no container") {
        test::scratch_dir root;
        root.write("proc/sys/kernel/osrelease", "5.15.153.1-microsoft-standard-WSL2\n");
        root.write("proc/1/cgroup", "0::/init.scope\n");
        root.write("run/systemd/container", "wsl\n");
        env_view sys(root.path().string());
        std::vector<ah::warning> w;
        auto env = ah::probe_environment(sys, w);
        CHECK(env.container == container_runtime::none);
        CHECK(env.wsl);
        fs::remove(root.path() / "run/systemd/container");
        sys.vars["container"] = "wsl";
        CHECK(ah::probe_environment(sys, w).container == container_runtime::none);
        // A Docker container on WSL is still a container.
        root.write(".dockerenv", "");
        env = ah::probe_environment(sys, w);
        CHECK(env.container == container_runtime::docker);
        CHECK(env.wsl);
        CHECK(w.empty());
    }
    SUBCASE("LXC, Incus and systemd-nspawn from systemd's container files") {
        // With cgroup v2 and a private cgroup namespace /proc/*/cgroup says "0::/", and
        // `container` is set for PID 1 only.
        test::scratch_dir root;
        root.write("proc/1/cgroup", "0::/\n");
        root.write("proc/self/cgroup", "0::/\n");
        root.write("run/systemd/container", "lxc\n");
        env_view sys(root.path().string());
        std::vector<ah::warning> w;
        CHECK(ah::probe_environment(sys, w).container == container_runtime::lxc);
        root.write("run/host/container-manager", "systemd-nspawn\n"); // read first
        CHECK(ah::probe_environment(sys, w).container == container_runtime::other);
        root.write("run/host/container-manager", "\n");
        CHECK(ah::probe_environment(sys, w).container == container_runtime::lxc);
        CHECK(w.empty());
    }
    SUBCASE("Apptainer / Singularity: the image's /.singularity.d") {
        test::scratch_dir root;
        root.write(".singularity.d/runscript", "#!/bin/sh\n");
        root.write("proc/self/cgroup", "0::/user.slice/user-1000.slice/session-3.scope\n"); // the host's
        env_view sys(root.path().string());
        std::vector<ah::warning> w;
        CHECK(ah::probe_environment(sys, w).container == container_runtime::other);
        CHECK(w.empty());
    }
    SUBCASE("Kubernetes with containerd, on AWS, from cgroups and DMI") {
        test::scratch_dir root;
        root.write("proc/self/cgroup",
                   "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podab.slice/cri-containerd-12.scope\n");
        root.write("sys/class/dmi/id/sys_vendor", "Amazon EC2\n");
        root.write("sys/class/dmi/id/product_name", "p5.48xlarge\n");
        root.write("var/run/secrets/kubernetes.io/serviceaccount/namespace", "inference\n");
        env_view sys(root.path().string());
        std::vector<ah::warning> w;
        const auto env = ah::probe_environment(sys, w);
        CHECK(w.empty());
        CHECK(env.container == container_runtime::containerd);
        CHECK(env.kubernetes);
        CHECK(env.kubernetes_namespace == "inference");
        CHECK(env.cloud == cloud_provider::aws);
        CHECK(env.instance_type == "p5.48xlarge");
        CHECK(env.hypervisor == "Amazon");
    }
    SUBCASE("Xen guest from /sys/hypervisor") {
        test::scratch_dir root;
        root.write("sys/hypervisor/type", "xen\n");
        root.write("sys/hypervisor/uuid", "ec2f1a2b-0000-0000-0000-000000000000\n");
        env_view sys(root.path().string());
        std::vector<ah::warning> w;
        const auto env = ah::probe_environment(sys, w);
        CHECK(env.hypervisor == "Xen");
        CHECK(env.cloud == cloud_provider::aws);
    }
    SUBCASE("Xen's control domain (dom0) is the machine itself, not a guest") {
        // /proc/xen/capabilities says "control_d" in dom0 and nothing in a guest (Xen FAQ).
        test::scratch_dir root;
        root.write("sys/hypervisor/type", "xen\n");
        root.write("sys/class/dmi/id/sys_vendor", "Dell Inc.\n");
        root.write("sys/class/dmi/id/product_name", "PowerEdge R750\n");
        root.write("proc/xen/capabilities", "control_d\n");
        env_view sys(root.path().string());
        std::vector<ah::warning> w;
        CHECK(ah::probe_environment(sys, w).hypervisor.empty());
        root.write("proc/xen/capabilities", "");
        CHECK(ah::probe_environment(sys, w).hypervisor == "Xen");
        CHECK(w.empty());
    }
    SUBCASE("firmware strings with control bytes or broken UTF-8 are made printable, and said") {
        test::scratch_dir root;
        root.write("sys/class/dmi/id/sys_vendor", "Amazon EC2\n");
        root.write("sys/class/dmi/id/product_name", "p4d.24xlarge\x1b]0;owned\x07\x1b[2J\n");
        root.write("sys/class/dmi/id/bios_vendor", "\xff\xfe\n");
        env_view sys(root.path().string());
        std::vector<ah::warning> w;
        const auto env = ah::probe_environment(sys, w);
        CHECK(env.cloud == cloud_provider::aws);
        CHECK(env.instance_type == "p4d.24xlarge?]0;owned??[2J");
        REQUIRE(w.size() == 2);
        CHECK(count_kind(w, ah::warning_kind::parse_error) == 2);
        CHECK(w[0].subject == "/sys/class/dmi/id/product_name");
    }
    SUBCASE("KVM from the paravirtual clock, where there is no DMI") {
        // tests/data/clocksource: a Firecracker guest, which has no /sys/class/dmi.
        const auto real = test::read_file(std::string(AI_HWACCEL_TEST_DATA_DIR) +
                                          "/clocksource/firecracker-vm-linux-6.18/available_clocksource");
        REQUIRE(real.has_value());
        CHECK(ah::paravirtual_clock_hypervisor(*real) == "KVM");
        CHECK(ah::paravirtual_clock_hypervisor("tsc hpet acpi_pm \n").empty()); // hand-made: bare metal
        CHECK(ah::paravirtual_clock_hypervisor("").empty());
        test::scratch_dir root;
        root.write("sys/devices/system/clocksource/clocksource0/available_clocksource", *real);
        std::vector<ah::warning> w;
        CHECK(ah::probe_environment(env_view(root.path().string()), w).hypervisor == "KVM");
        CHECK(w.empty());
        // DMI, where there is some, is the better evidence: it names QEMU, VMware, a cloud…
        root.write("sys/class/dmi/id/sys_vendor", "VMware, Inc.\n");
        root.write("sys/class/dmi/id/product_name", "VMware Virtual Platform\n");
        CHECK(ah::probe_environment(env_view(root.path().string()), w).hypervisor == "VMware");
        // A hint only: an unreadable list is no warning, and names nothing.
        test::scratch_dir bare;
        bare.write("sys/devices/system/clocksource/clocksource0/available_clocksource", *real);
        denying_view denied(bare.path().string());
        denied.denied.insert("/sys/devices/system/clocksource/clocksource0/available_clocksource");
        CHECK(ah::probe_environment(denied, w).hypervisor.empty());
        CHECK(w.empty());
    }
    SUBCASE("bad and unreadable files") {
        test::scratch_dir root;
        root.write("proc/1/cgroup", "0::/docker/abc\n");
        root.write("proc/self/cgroup", std::string("\xff\xfe\x00garbage", 10));
        root.write("var/run/secrets/kubernetes.io/serviceaccount/namespace", "Not A Namespace\n");
        root.write("sys/class/dmi/id/sys_vendor", "Amazon EC2\n");
        root.write("sys/class/dmi/id/product_uuid", "EC2ABCDE-0000\n");
        root.write("sys/class/dmi/id/chassis_asset_tag", std::string(10000, 'x')); // over the cap
        denying_view sys(root.path().string());
        sys.denied.insert("/proc/1/cgroup");
        sys.denied.insert("/sys/class/dmi/id/product_uuid");   // root-only: silent
        sys.denied.insert("/sys/class/dmi/id/product_serial"); // root-only: silent
        sys.denied.insert("/sys/class/dmi/id/bios_vendor");
        std::vector<ah::warning> w;
        const auto env = ah::probe_environment(sys, w);
        CHECK(env.container == container_runtime::none); // the docker evidence was unreadable
        CHECK_FALSE(env.kubernetes);                      // the namespace was not a name
        CHECK(env.kubernetes_namespace.empty());
        CHECK(env.cloud == cloud_provider::aws);
        CHECK(count_kind(w, ah::warning_kind::permission_denied) == 2); // /proc/1/cgroup, bios_vendor
        CHECK(count_kind(w, ah::warning_kind::parse_error) == 1);       // the namespace
        CHECK(count_kind(w, ah::warning_kind::output_truncated) == 1);  // chassis_asset_tag
        CHECK(w.size() == 4);
    }
}
