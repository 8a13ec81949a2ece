# Typed stubs of the ai_hwaccel._native extension (python/ai_hwaccel_python.cpp).
# Names starting with an underscore exist only here, to type the dicts the planning
# functions return; every other name is checked against the built module by
# python/tests/test_stubs.py.
import os
from typing import Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, TypedDict, Union

__version__: str
json_support: bool

class _Bandwidth(TypedDict):
    gbps: float
    bytes_per_pass: int
    threads: int
    passes: int
    fastest_seconds: float
    slowest_seconds: float
    cache_bytes: int
    note: str

class _Memory(TypedDict):
    weights_bytes: int
    kv_cache_bytes: int
    overhead_bytes: int
    total_bytes: int

class _Shape(TypedDict):
    layers: int
    hidden_size: int
    attention_heads: int
    kv_heads: int
    latent_kv_values: int
    assumed: bool

class _Estimate(TypedDict):
    device: str
    count: int
    device_memory_bytes: int
    link: str
    link_group: int
    model: str
    parameters: int
    active_parameters: int
    shape: _Shape
    quant: str
    context: int
    prompt: int
    prompt_depth: int
    batch: int
    fits: bool
    reason: Optional[str]
    strategy: str
    tensor_parallel: int
    stages: int
    decode_tokens_per_second: Optional[float]
    prefill_tokens_per_second: Optional[float]
    memory: _Memory
    usable_bytes: int
    memory_headroom: float
    estimate: bool

class _Shard(TypedDict):
    device: int
    index: int
    node: Optional[str]
    name: str
    replica: int
    stage: int
    tensor_rank: int
    tensor_size: int
    first_layer: int
    last_layer: int
    embeddings: bool
    output_head: bool
    weights_bytes: int
    kv_cache_bytes: int
    overhead_bytes: int
    total_bytes: int
    usable_bytes: int
    fits: bool

class _ClusterNode(TypedDict):
    name: str
    considered: bool
    devices: int
    devices_used: int
    planned_bytes: int
    usable_bytes: int
    capacity_bytes: int
    fits: bool

class _InterNodeLink(TypedDict):
    kind: str
    gbps: float
    assumed: bool

class _Cluster(TypedDict):
    nodes: List[_ClusterNode]
    joined: bool
    network_assumed_gbps: Optional[float]
    nodes_per_replica: int
    inter_node_hops: int
    inter_node_link: Optional[_InterNodeLink]
    decode_inter_node_seconds: float
    notes: List[str]

class _PlanLink(TypedDict):
    kind: str
    gbps: float

class _Plan(TypedDict):
    model: str
    parameters: int
    active_parameters: int
    quant: str
    quant_chosen: str
    spread: bool
    context: int
    prompt: int
    prompt_depth: int
    batch: int
    fits: bool
    outcome: str
    reason: Optional[str]
    strategy: str
    kind: Optional[str]
    replicas: int
    stages: int
    tensor_parallel: int
    decode_tokens_per_second: Optional[float]
    aggregate_decode_tokens_per_second: Optional[float]
    prefill_tokens_per_second: Optional[float]
    decode_compute_seconds: float
    decode_tensor_seconds: float
    decode_pipeline_seconds: float
    tensor_link: Optional[_PlanLink]
    pipeline_link: Optional[_PlanLink]
    memory: _Memory
    usable_bytes: int
    largest_device_bytes: int
    candidate_devices: int
    truncated: bool
    cpu_excluded: bool
    free_memory: bool
    memory_headroom: float
    cluster: Optional[_Cluster]
    shards: List[_Shard]
    estimate: bool

class _TrainingBreakdown(TypedDict):
    weights_bytes: int
    frozen_models_bytes: int
    gradients_bytes: int
    optimizer_bytes: int
    activations_bytes: int
    buffers_bytes: int
    total_bytes: int

class _Training(TypedDict):
    model: str
    parameters: int
    method: str
    policy: Optional[str]
    seq: int
    batch: int
    devices: int
    zero: int
    rank: Optional[int]
    checkpointing: bool
    optimizer: str
    trainable_parameters: int
    peak_memory_bytes: int
    breakdown: _TrainingBreakdown
    host_memory_bytes: int
    estimate: bool
    device: None  # the CLI's --device, which training() does not take
    device_memory_bytes: None
    fits: None

class _Instance(TypedDict):
    name: str
    provider: str
    region: str
    price_per_hour_usd: float
    price_date: Optional[str]
    price_snapshot: Optional[str]
    price_source: str
    price_date_source: Optional[str]
    accelerator: str
    accelerator_count: int
    required_bytes: int
    available_bytes: int
    format_supported: bool
    fits: bool
    decode_tokens_per_second: Optional[float]
    replicas: int
    replica_accelerators: int
    tensor_parallel: int
    usd_per_million_output_tokens: Optional[float]

class _CostBase(TypedDict):
    model: str
    parameters: int
    active_parameters: int
    quant: str
    context: int
    batch: int
    objective: str
    required_bytes: int
    memory_headroom: float
    fits: bool
    instance: Optional[_Instance]
    estimate: bool

class _Cost(_CostBase, total=False):
    instances: List[_Instance]  # only with all_instances=True

class _Cpu(TypedDict):
    model: str
    vendor: str
    arch: str
    sockets: int
    cores: int
    threads: int
    usable_threads: int
    cpu_quota: float

class _HostMemory(TypedDict):
    total_bytes: Optional[int]
    available_bytes: Optional[int]
    cgroup_limit_bytes: Optional[int]
    cgroup_free_bytes: Optional[int]
    usable_bytes: int

class _Host(TypedDict):
    cpu: _Cpu
    memory: _HostMemory
    numa_nodes: int

class Device:
    """One device; each sourced value has an `*_origin` (tool, sysfs, user, measured,
    catalogue, estimated), None when the value is unknown."""
    @property
    def kind(self) -> str: ...
    @property
    def family(self) -> str: ...
    @property
    def vendor(self) -> str: ...
    @property
    def backend(self) -> Optional[str]: ...
    @property
    def index(self) -> int: ...
    @property
    def name(self) -> str: ...
    @property
    def uuid(self) -> Optional[str]: ...
    @property
    def pci(self) -> Optional[str]: ...
    @property
    def stack(self) -> Optional[int]: ...
    @property
    def pci_device_id(self) -> Optional[int]: ...
    @property
    def arch(self) -> Optional[str]: ...
    @property
    def driver_version(self) -> Optional[str]: ...
    @property
    def available(self) -> bool: ...
    @property
    def software(self) -> bool: ...
    @property
    def unified_memory(self) -> bool: ...
    @property
    def is_accelerator(self) -> bool: ...
    @property
    def is_cpu(self) -> bool: ...
    @property
    def memory_bytes(self) -> Optional[int]: ...
    @property
    def memory_origin(self) -> Optional[str]: ...
    @property
    def memory_used_bytes(self) -> Optional[int]: ...
    @property
    def memory_used_origin(self) -> Optional[str]: ...
    @property
    def memory_free_bytes(self) -> Optional[int]: ...
    @property
    def memory_free_origin(self) -> Optional[str]: ...
    @property
    def bandwidth_gbps(self) -> Optional[float]: ...
    @property
    def bandwidth_origin(self) -> Optional[str]: ...
    @property
    def peak_tflops(self) -> Dict[str, float]: ...
    @property
    def peak_origin(self) -> Optional[str]: ...
    @property
    def compute_units(self) -> Optional[int]: ...
    @property
    def compute_units_origin(self) -> Optional[str]: ...
    @property
    def chips(self) -> Optional[int]: ...
    @property
    def chips_origin(self) -> Optional[str]: ...
    @property
    def pcie_current(self) -> Optional[Tuple[int, int]]: ...
    @property
    def pcie_current_origin(self) -> Optional[str]: ...
    @property
    def pcie_max(self) -> Optional[Tuple[int, int]]: ...
    @property
    def pcie_max_origin(self) -> Optional[str]: ...
    @property
    def pcie_bandwidth_gbps(self) -> Optional[float]: ...
    @property
    def numa_node(self) -> Optional[int]: ...
    @property
    def numa_node_origin(self) -> Optional[str]: ...
    @property
    def temperature_c(self) -> Optional[float]: ...
    @property
    def temperature_origin(self) -> Optional[str]: ...
    @property
    def power_draw_watts(self) -> Optional[float]: ...
    @property
    def power_draw_origin(self) -> Optional[str]: ...
    @property
    def power_limit_watts(self) -> Optional[float]: ...
    @property
    def power_limit_origin(self) -> Optional[str]: ...
    @property
    def utilization_percent(self) -> Optional[float]: ...
    @property
    def utilization_origin(self) -> Optional[str]: ...
    @property
    def spec(self) -> Optional[str]: ...
    @property
    def capability_score(self) -> float: ...

class WarningInfo:
    """A problem detection met, as a record (never raised)."""
    @property
    def kind(self) -> str: ...
    @property
    def backend(self) -> Optional[str]: ...
    @property
    def subject(self) -> str: ...
    @property
    def message(self) -> str: ...
    @property
    def code(self) -> int: ...

class Interconnect:
    @property
    def kind(self) -> str: ...
    @property
    def scope(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def state(self) -> str: ...
    @property
    def bandwidth_gbps(self) -> Optional[float]: ...
    @property
    def bandwidth_origin(self) -> Optional[str]: ...
    @property
    def devices(self) -> List[int]: ...

class Model:
    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def family(self) -> str: ...
    @property
    def parameters(self) -> int: ...
    @property
    def active_parameters(self) -> int: ...
    @property
    def layers(self) -> int: ...
    @property
    def hidden_size(self) -> int: ...
    @property
    def intermediate_size(self) -> int: ...
    @property
    def attention_heads(self) -> int: ...
    @property
    def kv_heads(self) -> int: ...
    @property
    def head_dim(self) -> int: ...
    @property
    def vocab_size(self) -> int: ...
    @property
    def context_length(self) -> int: ...
    @property
    def experts(self) -> int: ...
    @property
    def experts_per_token(self) -> int: ...
    @property
    def is_moe(self) -> bool: ...
    @property
    def tied_embeddings(self) -> bool: ...
    @property
    def gated_ffn(self) -> bool: ...
    @property
    def source(self) -> Optional[str]: ...
    @staticmethod
    def custom(
        parameters: int,
        layers: Optional[int] = None,
        hidden: Optional[int] = None,
        heads: Optional[int] = None,
        kv_heads: Optional[int] = None,
        vocab: int = 0,
    ) -> Model: ...

class Registry:
    def __init__(self, devices: Sequence[Device] = ...) -> None: ...
    @property
    def devices(self) -> List[Device]: ...
    @property
    def warnings(self) -> List[WarningInfo]: ...
    @property
    def interconnects(self) -> List[Interconnect]: ...
    @property
    def host(self) -> _Host: ...
    def available(self) -> List[Device]: ...
    def accelerators(self) -> List[Device]: ...
    def has_accelerator(self) -> bool: ...
    def best_available(self) -> Optional[Device]: ...
    def total_memory(self) -> int: ...
    def total_accelerator_memory(self) -> int: ...
    def what_if_add(self, devices: Sequence[Device]) -> Registry: ...
    def to_json(self, indent: int = 2) -> str: ...
    @staticmethod
    def from_json(text: str) -> Registry: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[Device]: ...
    def __eq__(self, other: object) -> bool: ...

_ModelArg = Union[Model, str]
_Devices = Union[Registry, Device, Sequence[Device], Mapping[str, Registry]]

def detect(root: Optional[Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]] = None,
           measure_bandwidth: bool = False) -> Registry: ...
def measure_memory_bandwidth(buffer_bytes: int = 0, threads: int = 0, passes: int = 5) -> _Bandwidth: ...
def catalogue_device(name: str, memory_bytes: Optional[int] = None, bandwidth_gbps: Optional[float] = None) -> Device: ...
def catalogue_registry(
    name: str, count: int = 1, memory_bytes: Optional[int] = None, bandwidth_gbps: Optional[float] = None
) -> Registry: ...
def catalogue() -> List[str]: ...
def model(id: str) -> Model: ...
def models() -> List[Model]: ...
def quant_formats() -> List[str]: ...
def bits_per_weight(quant: str) -> float: ...
def memory(model: _ModelArg, quant: str, context: int = 4096, batch: int = 1, kv_cache: str = "fp16") -> _Memory: ...
def estimate(
    device: Union[Device, str],
    model: _ModelArg,
    quant: str,
    context: int = 4096,
    batch: int = 1,
    count: int = 1,
    prompt: Optional[int] = None,
    memory_bytes: Optional[int] = None,
    headroom: float = 0.1,
    bandwidth_gbps: Optional[float] = None,
    prompt_depth: int = 0,
) -> _Estimate: ...
def plan(
    devices: _Devices,
    model: _ModelArg,
    quant: str = "auto",
    context: int = 4096,
    batch: int = 1,
    allow_cpu: bool = False,
    free_memory: bool = False,
    headroom: float = 0.1,
    prompt: Optional[int] = None,
    spread: bool = False,
    network_gbits: Optional[float] = None,
    prompt_depth: int = 0,
) -> _Plan: ...
def training(
    model: _ModelArg,
    method: str,
    seq: int = 2048,
    batch: int = 1,
    devices: int = 1,
    zero: int = 0,
    rank: Optional[int] = None,
    checkpointing: bool = False,
    optimizer: str = "adamw",
    policy: Optional[str] = None,
) -> _Training: ...
def cost(
    model: _ModelArg,
    quant: str,
    context: int = 4096,
    batch: int = 1,
    objective: str = "hour",
    all_instances: bool = False,
    headroom: float = 0.1,
) -> _Cost: ...
