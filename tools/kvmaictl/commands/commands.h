// The handlers of the command table (commands/table.cc), one file per
// object beside this one.
#pragma once

#include <string>
#include <vector>

#include "cli/command.h"

namespace kvmai::kvmaictl {

// OBJECT -> COMMAND -> handler, syntax and help text, sorted by object.
const std::vector<Object>& command_table();
// The entry of `command` of `object` (exact names).
const Command& table_command(std::string_view object, std::string_view command);

// The group name the group and dev commands take first, checked.
std::string group_operand(const Words& words);

void check_show(const Words& words, Context& ctx);
void check_record(const Words& words, Context& ctx);
void counters_show(const Words& words, Context& ctx);
void counters_add(const Words& words, Context& ctx);
void counters_del(const Words& words, Context& ctx);
void dev_add(const Words& words, Context& ctx);
void dev_del(const Words& words, Context& ctx);
void group_show(const Words& words, Context& ctx);
void group_add(const Words& words, Context& ctx);
void group_del(const Words& words, Context& ctx);
void group_set(const Words& words, Context& ctx);
void group_enable(const Words& words, Context& ctx);
void group_disable(const Words& words, Context& ctx);
void hook_qemu(const Words& words, Context& ctx);
void monitor_all(const Words& words, Context& ctx);
void partition_show(const Words& words, Context& ctx);
void partition_set(const Words& words, Context& ctx);
void partition_add(const Words& words, Context& ctx);
void partition_del(const Words& words, Context& ctx);
void partition_apply(const Words& words, Context& ctx);
void pmu_show(const Words& words, Context& ctx);
void pmu_assign(const Words& words, Context& ctx);
void pmu_release(const Words& words, Context& ctx);
void pmu_exec(const Words& words, Context& ctx);
void topo_show(const Words& words, Context& ctx);
void topo_matrix(const Words& words, Context& ctx);
void topo_tree(const Words& words, Context& ctx);
void version_show(const Words& words, Context& ctx);
void vm_plan(const Words& words, Context& ctx);
void vm_nccl_topo(const Words& words, Context& ctx);
void vm_nccl_map(const Words& words, Context& ctx);

}  // namespace kvmai::kvmaictl
