// kvmaictl-bench-topo: times whole `kvmaictl topo` runs on the largest
// fixture (process wall time, and each child's peak RSS from wait4's
// rusage). Prints figures; asserts nothing.
//
//   kvmaictl-bench-topo [RUNS] [SYSFS_ROOT] [KVMAICTL]
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

namespace {

struct Sample {
  double ms = 0;
  long max_rss_kb = 0;
};

// One run with stdout to /dev/null; nullopt-like failure as ms < 0.
Sample run_once(std::vector<std::string> argv) {
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (auto& a : argv) {
    args.push_back(a.data());
  }
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  const auto start = std::chrono::steady_clock::now();
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    return {-1, 0};
  }
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  const auto end = std::chrono::steady_clock::now();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return {-1, 0};
  }
  return {std::chrono::duration<double, std::milli>(end - start).count(), usage.ru_maxrss};
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::stoi(argv[1]) : 20;
  const std::string root = argc > 2 ? argv[2] : KVMAICTL_TESTDATA "/hgx/sys";
  const std::string bin = argc > 3 ? argv[3] : KVMAICTL_BIN;

  for (const bool json : {false, true}) {
    std::vector<std::string> cmd{bin};
    if (json) {
      cmd.emplace_back("-j");
    }
    cmd.insert(cmd.end(), {"topo", "--sysfs-root", root});
    std::vector<Sample> samples;
    for (int i = 0; i < runs; ++i) {
      const Sample s = run_once(cmd);
      if (s.ms < 0) {
        std::cerr << "kvmaictl-bench-topo: " << bin << " failed\n";
        return 1;
      }
      samples.push_back(s);
    }
    std::sort(samples.begin(), samples.end(),
              [](const Sample& a, const Sample& b) { return a.ms < b.ms; });
    long rss = 0;
    for (const auto& s : samples) {
      rss = std::max(rss, s.max_rss_kb);
    }
    std::cout << std::fixed << std::setprecision(2) << "topo" << (json ? " -j" : "   ") << "  runs "
              << runs << "  wall ms: min " << samples.front().ms << "  median "
              << samples[samples.size() / 2].ms << "  max " << samples.back().ms << "  peak RSS "
              << rss << " KiB\n";
  }
  return 0;
}
