#include "tree_options.h"

#include "cli/cli.h"

namespace po = boost::program_options;

namespace kvmai::kvmaictl {

std::string parse_tree_args(const std::vector<std::string>& args, TreeRoots& roots,
                            bool with_procfs) {
  std::string operand;
  po::options_description opts;
  opts.add_options()("operand", po::value(&operand));
  opts.add_options()("sysfs-root", po::value(&roots.sysfs)->value_name("DIR"),
                     "read sysfs from DIR (default /sys)");
  if (with_procfs) {
    opts.add_options()("procfs-root", po::value(&roots.procfs)->value_name("DIR"),
                       "read procfs from DIR (default /proc)");
  }
  po::positional_options_description pos;
  pos.add("operand", 1);
  parse_args(args, opts, pos);
  return operand;
}

std::unique_ptr<TreeReader> open_sysfs(const TreeRoots& roots) {
  auto sys = std::make_unique<FsReader>(roots.sysfs);
  if (!sys->exists("bus/pci/devices")) {
    throw OpError("no bus/pci/devices under \"" + roots.sysfs + "\" (not a sysfs tree)");
  }
  return sys;
}

std::unique_ptr<TreeReader> open_procfs(const TreeRoots& roots) {
  auto proc = std::make_unique<FsReader>(roots.procfs);
  if (!proc->exists("cmdline")) {
    throw OpError("no cmdline under \"" + roots.procfs + "\" (not a procfs tree)");
  }
  return proc;
}

}  // namespace kvmai::kvmaictl
