#include "torchx/specs/named_resources.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/spelling.h"

namespace torchx::specs {
namespace {

constexpr int kGiB = 1024;
constexpr std::string_view kInstanceTypeKey = "node.kubernetes.io/instance-type";
constexpr std::string_view kEfa = "vpc.amazonaws.com/efa";
constexpr std::string_view kNeuron = "aws.amazon.com/neurondevice";

struct Entry {
  std::string_view name;
  int cpu;
  int gpu;
  int mem;  // generic: memMB; aws: GiB before the tax
  int efa;
  int neuron;
  bool aws;
};

// The tables of torchx/specs/named_resources_{generic,aws}.py.
constexpr Entry kTable[] = {
    {"gpu.small", 8, 1, 32 * kGiB, 0, 0, false},
    {"gpu.medium", 16, 2, 64 * kGiB, 0, 0, false},
    {"gpu.large", 32, 4, 128 * kGiB, 0, 0, false},
    {"gpu.xlarge", 64, 8, 256 * kGiB, 0, 0, false},
    {"cpu.nano", 1, 0, 512, 0, 0, false},
    {"cpu.micro", 1, 0, 1 * kGiB, 0, 0, false},
    {"cpu.small", 1, 0, 2 * kGiB, 0, 0, false},
    {"cpu.medium", 2, 0, 4 * kGiB, 0, 0, false},
    {"cpu.large", 2, 0, 8 * kGiB, 0, 0, false},
    {"cpu.xlarge", 8, 0, 32 * kGiB, 0, 0, false},
    {"aws_t3.medium", 2, 0, 4, 0, 0, true},
    {"aws_m5.large", 2, 0, 8, 0, 0, true},
    {"aws_m5.xlarge", 4, 0, 16, 0, 0, true},
    {"aws_m5.2xlarge", 8, 0, 32, 0, 0, true},
    {"aws_m5.4xlarge", 16, 0, 64, 0, 0, true},
    {"aws_m5.8xlarge", 32, 0, 128, 0, 0, true},
    {"aws_m5.12xlarge", 48, 0, 192, 0, 0, true},
    {"aws_m5.16xlarge", 64, 0, 256, 0, 0, true},
    {"aws_m5.24xlarge", 96, 0, 384, 0, 0, true},
    {"aws_m5.metal", 96, 0, 384, 0, 0, true},
    {"aws_m5d.large", 2, 0, 8, 0, 0, true},
    {"aws_m5d.xlarge", 4, 0, 16, 0, 0, true},
    {"aws_m5d.2xlarge", 8, 0, 32, 0, 0, true},
    {"aws_m5d.4xlarge", 16, 0, 64, 0, 0, true},
    {"aws_m5d.8xlarge", 32, 0, 128, 0, 0, true},
    {"aws_m5d.12xlarge", 48, 0, 192, 0, 0, true},
    {"aws_m5d.16xlarge", 64, 0, 256, 0, 0, true},
    {"aws_m5d.24xlarge", 96, 0, 384, 0, 0, true},
    {"aws_m5d.metal", 96, 0, 384, 0, 0, true},
    {"aws_c5.18xlarge", 72, 0, 142, 0, 0, true},
    {"aws_p3.2xlarge", 8, 1, 61, 0, 0, true},
    {"aws_p3.8xlarge", 32, 4, 244, 0, 0, true},
    {"aws_p3.16xlarge", 64, 8, 488, 0, 0, true},
    {"aws_p3dn.24xlarge", 96, 8, 768, 1, 0, true},
    {"aws_p4d.24xlarge", 96, 8, 1152, 4, 0, true},
    {"aws_p4de.24xlarge", 96, 8, 1152, 4, 0, true},
    {"aws_p5.48xlarge", 192, 8, 2048, 32, 0, true},
    {"aws_p5e.48xlarge", 192, 8, 2048, 32, 0, true},
    {"aws_p5en.48xlarge", 192, 8, 2048, 16, 0, true},
    {"aws_p6-b200.48xlarge", 192, 8, 2048, 8, 0, true},
    {"aws_p6-b300.48xlarge", 192, 8, 4096, 16, 0, true},
    {"aws_p6e-gb200.36xlarge", 144, 4, 960, 16, 0, true},
    {"aws_g4dn.xlarge", 4, 1, 16, 0, 0, true},
    {"aws_g4dn.2xlarge", 8, 1, 32, 0, 0, true},
    {"aws_g4dn.4xlarge", 16, 1, 64, 0, 0, true},
    {"aws_g4dn.8xlarge", 32, 1, 128, 1, 0, true},
    {"aws_g4dn.12xlarge", 48, 4, 192, 1, 0, true},
    {"aws_g4dn.16xlarge", 64, 1, 256, 1, 0, true},
    {"aws_g4dn.metal", 96, 8, 384, 1, 0, true},
    {"aws_g5.xlarge", 4, 1, 16, 0, 0, true},
    {"aws_g5.2xlarge", 8, 1, 32, 0, 0, true},
    {"aws_g5.4xlarge", 16, 1, 64, 0, 0, true},
    {"aws_g5.8xlarge", 32, 1, 128, 1, 0, true},
    {"aws_g5.12xlarge", 48, 4, 192, 1, 0, true},
    {"aws_g5.16xlarge", 64, 1, 256, 1, 0, true},
    {"aws_g5.24xlarge", 96, 4, 384, 1, 0, true},
    {"aws_g5.48xlarge", 192, 8, 768, 1, 0, true},
    {"aws_g6e.xlarge", 4, 1, 32, 0, 0, true},
    {"aws_g6e.2xlarge", 8, 1, 64, 0, 0, true},
    {"aws_g6e.4xlarge", 16, 1, 128, 0, 0, true},
    {"aws_g6e.8xlarge", 32, 1, 256, 0, 0, true},
    {"aws_g6e.12xlarge", 48, 4, 384, 0, 0, true},
    {"aws_g6e.16xlarge", 64, 1, 512, 0, 0, true},
    {"aws_g6e.24xlarge", 96, 4, 768, 2, 0, true},
    {"aws_g6e.48xlarge", 192, 8, 1536, 4, 0, true},
    {"aws_trn1.2xlarge", 8, 0, 32, 0, 1, true},
    {"aws_trn1.32xlarge", 128, 0, 512, 8, 16, true},
    {"aws_inf2.xlarge", 4, 0, 16, 0, 1, true},
    {"aws_inf2.8xlarge", 32, 0, 128, 0, 1, true},
    {"aws_inf2.24xlarge", 96, 0, 384, 0, 6, true},
    {"aws_inf2.48xlarge", 192, 0, 768, 0, 12, true},
};

Resource FromEntry(const Entry& e) {
  Resource r;
  r.cpu = e.cpu;
  r.gpu = e.gpu;
  r.memMB = e.aws ? AwsMemMB(e.mem) : e.mem;
  if (e.aws) {
    r.capabilities[std::string(kInstanceTypeKey)] = std::string(e.name.substr(4));  // drop "aws_"
    if (e.efa) r.devices[std::string(kEfa)] = e.efa;
    if (e.neuron) r.devices[std::string(kNeuron)] = e.neuron;
  }
  return r;
}

}  // namespace

int AwsMemMB(int gib) {
  // int(1024 * 0.96) == 983 MiB per "GiB", as TorchX.
  constexpr int kTaxedGiB = 983;
  return gib * kTaxedGiB;
}

std::vector<std::string> BuiltinNamedResourceNames() {
  std::vector<std::string> names;
  for (const Entry& e : kTable) names.emplace_back(e.name);
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> NamedResourceNames(const NamedResourceSource* extra) {
  std::vector<std::string> names = BuiltinNamedResourceNames();
  if (extra) {
    for (std::string& n : extra->Names()) names.push_back(std::move(n));
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
  }
  return names;
}

Result<Resource> GetNamedResource(std::string_view name, const NamedResourceSource* extra) {
  if (name == "NULL" || name == "MISSING") return NullResource();
  for (const Entry& e : kTable) {
    if (e.name == name) return FromEntry(e);
  }
  if (extra) {
    if (auto found = extra->Find(name)) return std::move(*found);
  }
  return NotFoundError(fmt::format("named resource: unknown name `{}`.{}", name,
                                   torchx::internal::SuggestionSuffix(name, NamedResourceNames(extra))));
}

Result<Resource> MakeResource(int cpu, int gpu, int memMB, std::string_view h, const NamedResourceSource* extra) {
  if (!h.empty()) return GetNamedResource(h, extra);
  Resource r;
  r.cpu = cpu > 0 ? cpu : 2;
  r.gpu = gpu > 0 ? gpu : 0;
  r.memMB = memMB > 0 ? memMB : 1024;
  return r;
}

}  // namespace torchx::specs
