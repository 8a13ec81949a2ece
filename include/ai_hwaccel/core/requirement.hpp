// ai-hwaccel core: requirements a device must meet.
//
// A requirement is a conjunction of simple criteria (families, kinds, vendor, memory,
// bandwidth, native data type, chip count, training support), each one optional, so it can
// say "any GPU" as well as "a device with 80 GiB that runs fp8 natively". The named
// constructors cover the reference peer's seven requirements.
#pragma once

#include "ai_hwaccel/config.hpp"
#include "ai_hwaccel/core/profile.hpp"
#include "ai_hwaccel/core/taxonomy.hpp"

#include <cstdint>
#include <optional>

AI_HWACCEL_NAMESPACE_BEGIN

struct requirement {
    std::uint32_t families = 0; ///< bit per `family`; 0 = any
    std::uint32_t kinds = 0;    ///< bit per `device_kind`; 0 = any
    bool accelerator_only = false;
    std::optional<vendor> maker;
    std::uint64_t min_memory_bytes = 0;
    double min_bandwidth_gbps = 0;
    std::optional<dtype> native;
    std::uint32_t min_chips = 0;
    bool trainable = false;

    static constexpr std::uint32_t bit(family f) noexcept { return 1u << static_cast<unsigned>(f); }
    static constexpr std::uint32_t bit(device_kind k) noexcept { return 1u << static_cast<unsigned>(k); }

    // The reference peer's vocabulary.
    static constexpr requirement none() noexcept { return {}; }
    static constexpr requirement any_accelerator() noexcept {
        requirement r;
        r.accelerator_only = true;
        return r;
    }
    static constexpr requirement gpu() noexcept { return of(family::gpu); }
    static constexpr requirement tpu(std::uint32_t min_chips = 1) noexcept {
        requirement r = of(family::tpu);
        r.min_chips = min_chips;
        return r;
    }
    static constexpr requirement gpu_or_tpu() noexcept {
        requirement r;
        r.families = bit(family::gpu) | bit(family::tpu);
        r.accelerator_only = true;
        return r;
    }
    static constexpr requirement gaudi() noexcept { return of(device_kind::gaudi); }
    static constexpr requirement aws_neuron() noexcept {
        requirement r;
        r.kinds = bit(device_kind::aws_inferentia) | bit(device_kind::aws_trainium);
        r.accelerator_only = true;
        return r;
    }
    static constexpr requirement of(family f) noexcept {
        requirement r;
        r.families = bit(f);
        r.accelerator_only = f != family::cpu;
        return r;
    }
    static constexpr requirement of(device_kind k) noexcept {
        requirement r;
        r.kinds = bit(k);
        r.accelerator_only = k != device_kind::cpu;
        return r;
    }

    // Refinements, chainable: requirement::gpu().with_memory(80_GiB).with_native(dtype::fp8)
    constexpr requirement with_memory(std::uint64_t bytes) const noexcept {
        requirement r = *this;
        r.min_memory_bytes = bytes;
        return r;
    }
    constexpr requirement with_bandwidth(double gbps) const noexcept {
        requirement r = *this;
        r.min_bandwidth_gbps = gbps;
        return r;
    }
    constexpr requirement with_native(dtype d) const noexcept {
        requirement r = *this;
        r.native = d;
        return r;
    }
    constexpr requirement with_vendor(vendor v) const noexcept {
        requirement r = *this;
        r.maker = v;
        return r;
    }
    constexpr requirement for_training() const noexcept {
        requirement r = *this;
        r.trainable = true;
        return r;
    }

    /// An unavailable device never satisfies a requirement; a software renderer only
    /// satisfies one that does not ask for an accelerator. Unknown values fail a bound:
    /// a device whose memory is unknown does not have "at least 16 GiB".
    constexpr bool satisfied_by(const accelerator_profile& p) const noexcept {
        if (!p.available) return false;
        if (accelerator_only && !p.is_accelerator()) return false;
        if (families != 0 && (families & bit(p.device_family())) == 0) return false;
        if (kinds != 0 && (kinds & bit(p.kind)) == 0) return false;
        if (maker && p.maker != *maker) return false;
        if (min_memory_bytes != 0 && p.memory_bytes.value_or(0) < min_memory_bytes) return false;
        if (min_bandwidth_gbps > 0 && p.memory_bandwidth_gbps.value_or(0) < min_bandwidth_gbps)
            return false;
        if (native && !p.supports(*native)) return false;
        if (min_chips > 1 && p.chips.value_or(1) < min_chips) return false;
        if (trainable && !info(p.kind).trains) return false;
        return true;
    }
    constexpr bool operator()(const accelerator_profile& p) const noexcept { return satisfied_by(p); }
    friend constexpr bool operator==(const requirement&, const requirement&) noexcept = default;
};

static_assert(device_kind_count <= 32 && family_count <= 32, "requirement masks are 32 bits");

AI_HWACCEL_NAMESPACE_END
