// Carrying a plan out on the live sysfs, and putting a parent back as it
// was when a step fails part way: a failed apply leaves the previous
// layout, never half of one.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>

#include "partition/plan.h"

namespace kvmai::kvmaictl::partition {

// A step the kernel refused: which one and what it said.
class StepFailed : public std::runtime_error {
 public:
  StepFailed(std::size_t index, const std::string& what)
      : std::runtime_error(what), index_(index) {}
  std::size_t index() const { return index_; }

 private:
  std::size_t index_;
};

// Runs `plan` against the sysfs mounted at `sysfs` (its writes are the
// kernel's interfaces: sriov_numvfs, driver_override, drivers_probe,
// nvidia/current_vgpu_type, mdev create and remove). `done` is told of each
// step once it took effect. Throws StepFailed at the first that fails.
// `seen`, when given, gets the vGPU types each PF's VFs listed as creatable
// when a step read them (VFs list none once the GPU is full: see
// commands/partition.cc).
using SeenTypes = std::map<std::string, std::vector<VgpuType>>;
void apply(const Plan& plan, const std::filesystem::path& sysfs,
           const std::function<void(const Step&)>& done, SeenTypes* seen = nullptr);

// What the outcome of `apply_with_rollback` was.
struct Outcome {
  std::size_t steps_done = 0;
  // Empty when every step took effect; else the failed step and why.
  std::string failure;
  // After a failure: whether the parents are back as they were (checked
  // by reading them again), and, if not, what the rollback hit.
  bool restored = false;
  std::string rollback_failure;
  SeenTypes seen;
};

// Applies `plan` made from `before`; on a failure, plans the way back to
// `before` for every parent the plan touched and applies it.
Outcome apply_with_rollback(const Plan& plan, const Layout& before,
                            const std::filesystem::path& sysfs,
                            const std::function<void(const Step&)>& done);

// Whether two layouts agree on what a partition change sets (VF count,
// VF drivers and vGPU types, mdevs), for the parents named in `parents`.
bool same_partitions(const Layout& a, const Layout& b, const std::vector<std::string>& parents);

}  // namespace kvmai::kvmaictl::partition
