#include "hook/host_config.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "client/names.h"
#include "hook/metadata.h"

namespace kvmai::kvmaictl::hook {

namespace po = boost::program_options;

bool HostConfig::shares_packages(std::string_view vm) const {
  return std::find(pmu_shared.begin(), pmu_shared.end(), vm) != pmu_shared.end();
}

bool HostConfig::partitions(std::string_view parent) const {
  return std::find(partition_parents.begin(), partition_parents.end(), parent) !=
         partition_parents.end();
}

HostConfig read_host_config(const std::string& path) {
  const std::string where = printable(path);
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) {
      return {.path = path, .pmu_shared = {}, .partition_parents = {}};
    }
    throw HookError(where + ": " + std::strerror(errno));
  }
  // It widens what a domain may do: only whoever may change the hook
  // itself may change it.
  if (!S_ISREG(st.st_mode)) {
    throw HookError(where + ": not a regular file");
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    throw HookError(where + ": writable by others than its owner (chmod go-w)");
  }
  if (st.st_uid != 0 && st.st_uid != geteuid()) {
    throw HookError(where + ": owned by uid " + std::to_string(st.st_uid) + ", not root");
  }
  std::ifstream in(path);
  if (!in) {
    throw HookError(where + ": cannot read it");
  }
  HostConfig c{.path = path, .pmu_shared = {}, .partition_parents = {}};
  po::options_description desc;
  desc.add_options()("pmu.shared", po::value(&c.pmu_shared)->composing())(
      "partition.parent", po::value(&c.partition_parents)->composing());
  try {
    po::variables_map vm;
    po::store(po::parse_config_file(in, desc), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw HookError(where + ": " + printable(e.what()));
  }
  return c;
}

}  // namespace kvmai::kvmaictl::hook
