"""ai_hwaccel: find the AI accelerators on a machine and plan model deployment on them.

Python bindings of the ai-hwaccel C++ library (built by CMake with
``-DAI_HWACCEL_BUILD_PYTHON=ON``; see docs/python.md)::

    import ai_hwaccel as ah

    reg = ah.detect()                       # this machine; detect(root=...) for a captured tree
    for d in reg.devices:
        print(d.kind, d.name, d.memory_bytes, d.memory_origin)
    ah.estimate("H100 SXM", "llama-3.1-70b", "fp8", count=2)
    ah.plan(ah.catalogue_registry("H100 SXM", 8), "llama-3.1-405b")

Detection never raises for anything the machine does: what went wrong is in
``Registry.warnings``. Every planning figure is an estimate. Unknown names (devices,
models, formats, methods) raise ValueError with the reason.
"""

from ._native import (
    Device,
    Interconnect,
    Model,
    Registry,
    WarningInfo,
    __version__,
    bits_per_weight,
    catalogue,
    catalogue_device,
    catalogue_registry,
    cost,
    detect,
    estimate,
    json_support,
    measure_memory_bandwidth,
    memory,
    model,
    models,
    plan,
    quant_formats,
    training,
)

__all__ = [
    "Device",
    "Interconnect",
    "Model",
    "Registry",
    "WarningInfo",
    "__version__",
    "bits_per_weight",
    "catalogue",
    "catalogue_device",
    "catalogue_registry",
    "cost",
    "detect",
    "estimate",
    "json_support",
    "measure_memory_bandwidth",
    "memory",
    "model",
    "models",
    "plan",
    "quant_formats",
    "training",
]
