// The command table: every object kvmaictl knows, its commands, the words
// each takes (cli/grammar.h) and its help text.  Nothing else lists them:
// help, the grammar and the tests that walk every command read this.
#include <fmt/format.h>

#include <stdexcept>

#include "commands/commands.h"

namespace kvmai::kvmaictl {
namespace {

using Count = Operand::Count;
using Form = Param::Form;

}  // namespace

const std::vector<Object>& command_table() {
  static const std::vector<Object> table{
      {.name = "check",
       .summary = "readiness for GPU/NIC passthrough, on a host or in its guest (reads sysfs, "
                  "procfs)",
       .default_command = "show",
       .commands = {{.name = "show",
                     .usage = "[ NAME ] [ as { host | guest } ]",
                     .summary = "run every check of this host or guest, or the one called NAME",
                     .syntax = {.operands = {{"NAME", Count::optional}},
                                .params = {{"as", "PLACE"}}},
                     .run = check_show},
                    {.name = "record",
                     .usage = "DIR",
                     .summary = "copy what topo, check and vm read of this machine into DIR, for "
                                "--root DIR",
                     .syntax = {.operands = {{"DIR"}}},
                     .run = check_record}}},
      {.name = "counters",
       .summary = "devices giving VMs the counter pages of units they own (kvmai module)",
       .default_command = "show",
       .commands = {{.name = "show",
                     .usage = "[ UNIT ]",
                     .summary = "counter pages and their devices",
                     .syntax = {.operands = {{"UNIT", Count::optional}}},
                     .run = counters_show},
                    {.name = "add",
                     .usage = "UNIT [ package N ] [ uuid UUID ]",
                     .summary = "create the device of a unit's page, for the VM that owns the unit",
                     .syntax = {.operands = {{"UNIT"}},
                                .params = {{"package", "N"}, {"uuid", "UUID"}}},
                     .run = counters_add},
                    {.name = "del",
                     .usage = "UUID",
                     .summary = "remove a counters device (the VM's reads turn to all ones)",
                     .syntax = {.operands = {{"UUID"}}},
                     .run = counters_del}}},
      {.name = "dev",
       .summary = "devices of P2P groups (kvmai module)",
       .default_command = "",
       .commands = {{.name = "add",
                     .usage = "NAME DEV",
                     .summary = "add a device bound to vfio-pci, or an mdev, to a disabled group",
                     .syntax = {.operands = {{"NAME"}, {"DEV"}}},
                     .run = dev_add},
                    {.name = "del",
                     .usage = "NAME DEV",
                     .summary = "remove a device from a disabled group",
                     .syntax = {.operands = {{"NAME"}, {"DEV"}}},
                     .run = dev_del}}},
      {.name = "group",
       .summary = "P2P groups of passthrough devices (kvmai module)",
       .default_command = "show",
       .commands =
           {{.name = "show",
             .usage = "[ NAME ]",
             .summary = "one group, or all: members, ports and pairs",
             .syntax = {.operands = {{"NAME", Count::optional}}},
             .run = group_show},
            {.name = "add",
             .usage = "NAME vm VMID [ mode { translated | direct } ] [ bind-socket ]",
             .summary = "create a disabled, empty group",
             .syntax = {.operands = {{"NAME"}},
                        .params = {{"vm", "VMID"}, {"mode", "MODE"}, {"bind-socket", ""}}},
             .run = group_add},
            {.name = "del",
             .usage = "NAME",
             .summary = "disable (restoring every port) and delete a group",
             .syntax = {.operands = {{"NAME"}}},
             .run = group_del},
            {.name = "set",
             .usage = "NAME [ mode { translated | direct } ] [ state { enabled | disabled } ]",
             .summary = "change mode (while disabled) or state",
             .syntax = {.operands = {{"NAME"}}, .params = {{"mode", "MODE"}, {"state", "STATE"}}},
             .run = group_set},
            {.name = "enable",
             .usage = "NAME",
             .summary = "program ACS on the ports between members",
             .syntax = {.operands = {{"NAME"}}},
             .run = group_enable},
            {.name = "disable",
             .usage = "NAME",
             .summary = "restore the ports' ACS",
             .syntax = {.operands = {{"NAME"}}},
             .run = group_disable}}},
      {.name = "hook",
       .summary = "libvirt's hook: a domain's groups and PMUs from its metadata",
       .default_command = "",
       .commands =
           {{.name = "qemu",
             .usage = "[ --run-dir DIR ] [ --config FILE ] [ -- ] DOMAIN OPERATION "
                      "SUB-OPERATION [ EXTRA ]\n"
                      "                           (run by libvirt, domain XML on stdin)",
             .summary = "the QEMU driver's hook (/etc/libvirt/hooks/qemu.d/kvmai)",
             .syntax =
                 {.operands = {{"DOMAIN"}, {"OPERATION"}, {"SUB-OPERATION"}, {"EXTRA", Count::any}},
                  .params = {{"run-dir", "DIR", Form::option}, {"config", "FILE", Form::option}},
                  .data = true},
             .run = hook_qemu}}},
      {.name = "monitor",
       .summary = "print the module's notifications until interrupted",
       .default_command = "all",
       .commands = {{.name = "all",
                     .usage = "[ --count N ]",
                     .summary = "group and PMU ownership events, one line each",
                     .syntax = {.params = {{"count", "N", Form::option}}},
                     .run = monitor_all}}},
      {.name = "partition",
       .summary = "GPU and device partitions: SR-IOV VFs, vGPU types, mdevs (reads and writes "
                  "sysfs)",
       .default_command = "show",
       .commands =
           {{.name = "show",
             .usage = "[ DEV ]",
             .summary = "every partitionable device, or DEV: its VFs, vGPU types, mdevs and "
                        "their users",
             .syntax = {.operands = {{"DEV", Count::optional}}},
             .run = partition_show},
            {.name = "set",
             .usage = "DEV [ vfs N [ driver DRIVER ] ] [ vgpu-type TYPE [ vf N ] ] "
                      "[ autoprobe { on | off } ] [ dry-run ]",
             .summary = "set a PF's VF count (VFs bound to vfio-pci or DRIVER), a VF's vGPU "
                        "type (none clears)",
             .syntax = {.operands = {{"DEV"}},
                        .params = {{"vfs", "N"},
                                   {"driver", "DRIVER"},
                                   {"vgpu-type", "TYPE"},
                                   {"vf", "N"},
                                   {"autoprobe", "STATE"},
                                   {"dry-run", ""}}},
             .run = partition_set},
            {.name = "add",
             .usage = "DEV type TYPE [ uuid UUID ] [ dry-run ]",
             .summary = "create an mdev of TYPE on parent DEV",
             .syntax = {.operands = {{"DEV"}},
                        .params = {{"type", "TYPE"}, {"uuid", "UUID"}, {"dry-run", ""}}},
             .run = partition_add},
            {.name = "del",
             .usage = "UUID [ dry-run ]",
             .summary = "remove an mdev",
             .syntax = {.operands = {{"UUID"}}, .params = {{"dry-run", ""}}},
             .run = partition_del},
            {.name = "apply",
             .usage = "FILE [ profile NAME ] [ dry-run ]",
             .summary = "make the partitioning of a profile of FILE so (idempotent; dry-run "
                        "prints the plan)",
             .syntax = {.operands = {{"FILE"}}, .params = {{"profile", "NAME"}, {"dry-run", ""}}},
             .run = partition_apply}}},
      {.name = "pmu",
       .summary = "core and uncore PMUs owned by VMs (kvmai module)",
       .default_command = "show",
       .commands =
           {{.name = "show",
             .usage = "[ VM ]",
             .summary = "the host's PMUs and every VM's, or one VM's",
             .syntax = {.operands = {{"VM", Count::optional}}},
             .run = pmu_show},
            {.name = "assign",
             .usage = "VM { core | UNIT }... [ cpus LIST ] [ shared ] [ pid PID ] [ bind-socket ]",
             .summary = "give a VM the core PMU and/or uncore units",
             .syntax = {.operands = {{"VM"}, {"UNIT", Count::any}},
                        .params = {{"core", ""},
                                   {"cpus", "LIST"},
                                   {"shared", ""},
                                   {"pid", "PID"},
                                   {"bind-socket", ""}}},
             .run = pmu_assign},
            {.name = "release",
             .usage = "VM [ core | UNIT ]...",
             .summary = "take back what is named, or everything the VM owns",
             .syntax = {.operands = {{"VM"}, {"UNIT", Count::any}}, .params = {{"core", ""}}},
             .run = pmu_release},
            {.name = "exec",
             .usage =
                 "--user USER [ --group GROUP ] VM [ UNIT | unit NAME ]... -- COMMAND [ ARG ]...\n"
                 "                           (COMMAND inherits descriptors of the units, "
                 "all the VM's by\n"
                 "                           default, at 3, 4, ... and "
                 "KVMAI_UNCORE_FDS=3:4..., and runs as\n"
                 "                           USER without capabilities; "
                 "--user root keeps root; needs root)",
             .summary = "run a VMM as USER holding descriptors of the VM's uncore units",
             .syntax = {.operands = {{"VM"}, {"UNIT", Count::any}},
                        .params = {{"user", "USER", Form::option},
                                   {"group", "GROUP", Form::option},
                                   {"unit", "NAME", Form::keyword, true}},
                        .after_dash = "COMMAND"},
             .run = pmu_exec}}},
      {.name = "topo",
       .summary = "GPU/NIC PCIe topology and P2P paths (reads sysfs)",
       .default_command = "show",
       .commands = {{.name = "show",
                     .usage = "[ DEV ]",
                     .summary = "devices, links, BARs, switches, NVSwitches and GPU/NIC pairs; "
                                "DEV is gpuN, nicN or a BDF",
                     .syntax = {.operands = {{"DEV", Count::optional}}},
                     .run = topo_show},
                    {.name = "matrix",
                     .usage = "",
                     .summary = "path class between every two GPUs and RDMA NICs, with CPU and "
                                "NUMA affinity (nvidia-smi topo -m)",
                     .syntax = {},
                     .run = topo_matrix},
                    {.name = "tree",
                     .usage = "",
                     .summary = "the PCI tree below each host bridge, with ACS and ATS",
                     .syntax = {},
                     .run = topo_tree}}},
      {.name = "version",
       .summary = "tool and kvmai module versions",
       .default_command = "show",
       .commands = {{.name = "show",
                     .usage = "",
                     .summary = "print both versions",
                     .syntax = {},
                     .run = version_show}}},
      {.name = "vm",
       .summary = "the guest's layout for host devices (reads sysfs)",
       .default_command = "plan",
       .commands =
           {{.name = "plan",
             .usage = "DEV... [ vcpus N ] [ memory MIB ] [ hugepages DIR ] "
                      "[ firmware { uefi | bios } ] [ mmio64 SIZE ] [ pin { node | vcpu | none } ] "
                      "[ format { qemu | json | libvirt } ] [ group NAME ] [ merge FILE ]",
             .summary = "mirror the devices' PCIe tree and NUMA nodes into a guest layout",
             .syntax = {.operands = {{"DEV", Count::some}},
                        .params = {{"vcpus", "N"},
                                   {"memory", "MIB"},
                                   {"hugepages", "DIR"},
                                   {"firmware", "FIRMWARE"},
                                   {"mmio64", "SIZE"},
                                   {"pin", "PIN"},
                                   {"format", "FORMAT"},
                                   {"group", "NAME"},
                                   {"merge", "FILE"}}},
             .run = vm_plan},
            {.name = "nccl-topo",
             .usage = "DEV... [ vcpus N ] [ memory MIB ] [ hugepages DIR ] "
                      "[ firmware { uefi | bios } ] [ mmio64 SIZE ] [ pin { node | vcpu | none } ]",
             .summary = "NCCL's topology file (XML) for the guest vm plan lays out",
             .syntax = {.operands = {{"DEV", Count::some}},
                        .params = {{"vcpus", "N"},
                                   {"memory", "MIB"},
                                   {"hugepages", "DIR"},
                                   {"firmware", "FIRMWARE"},
                                   {"mmio64", "SIZE"},
                                   {"pin", "PIN"}}},
             .run = vm_nccl_topo,
             .no_json = "it prints NCCL's XML topology file"},
            {.name = "nccl-map",
             .usage = "PLAN FILE",
             .summary = "in the guest: FILE (vm nccl-topo's) with this guest's bus ids, found "
                        "by the paths of PLAN (-j vm plan's)",
             .syntax = {.operands = {{"PLAN", Count::one}, {"FILE", Count::one}}},
             .run = vm_nccl_map,
             .no_json = "it prints NCCL's XML topology file"}}},
  };
  return table;
}

const Command& table_command(std::string_view object, std::string_view command) {
  for (const auto& o : command_table()) {
    for (const auto& c : o.commands) {
      if (o.name == object && c.name == command) {
        return c;
      }
    }
  }
  throw std::logic_error(fmt::format("no command {} {} in the table", object, command));
}

}  // namespace kvmai::kvmaictl
