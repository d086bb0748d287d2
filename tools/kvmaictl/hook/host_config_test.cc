// /etc/kvmai/hook.conf: what it holds, and the files the hook refuses to
// take it from.
#include "hook/host_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "hook/metadata.h"
#include "testing/hook.h"

namespace kvmai::kvmaictl::hook {
namespace {

using kvmai::kvmaictl::testing::TempDir;
using ::testing::ElementsAre;

std::string error_of(const std::string& path) {
  try {
    read_host_config(path);
  } catch (const HookError& e) {
    return e.what();
  }
  return "";
}

TEST(HostConfig, NoFileIsTheDefaults) {
  const TempDir dir("conf");
  const std::string path = dir.path() / "hook.conf";
  const HostConfig c = read_host_config(path);
  EXPECT_EQ(c.path, path);
  EXPECT_TRUE(c.pmu_shared.empty());
  EXPECT_FALSE(c.shares_packages("vm1"));
}

TEST(HostConfig, SharedDomains) {
  const TempDir dir("conf");
  const auto path = dir.write("hook.conf",
                              "# Domains that share their packages.\n"
                              "[pmu]\n"
                              "shared = vm1\n"
                              "shared=vm7\n");
  chmod(path.c_str(), 0644);
  const HostConfig c = read_host_config(path);
  EXPECT_THAT(c.pmu_shared, ElementsAre("vm1", "vm7"));
  EXPECT_TRUE(c.shares_packages("vm7"));
  EXPECT_FALSE(c.shares_packages("vm"));
}

TEST(HostConfig, Refusals) {
  const TempDir dir("conf");
  const auto path = dir.write("hook.conf", "[pmu]\nshared = vm1\n");
  const std::string p = path.string();
  chmod(path.c_str(), 0664);
  EXPECT_EQ(error_of(p), p + ": writable by others than its owner (chmod go-w)");
  chmod(path.c_str(), 0602);
  EXPECT_EQ(error_of(p), p + ": writable by others than its owner (chmod go-w)");
  chmod(path.c_str(), 0600);
  EXPECT_EQ(error_of(p), "");

  dir.write("hook.conf", "shared = vm1\n");
  EXPECT_EQ(error_of(p), p + ": unrecognised option 'shared'");
  dir.write("hook.conf", "[pmu]\nshared\n");
  EXPECT_THAT(error_of(p), ::testing::StartsWith(p + ": "));
  EXPECT_EQ(error_of(dir.path().string()), dir.path().string() + ": not a regular file");
}

}  // namespace
}  // namespace kvmai::kvmaictl::hook
