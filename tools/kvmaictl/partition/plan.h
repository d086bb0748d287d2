// From a layout to a wanted one: the ordered sysfs writes that get there,
// or the one-line refusal that says which partition in use stands in the
// way. Pure: reads nothing, so the planner's goldens cover every case.
//
// The order is the one the kernel imposes and that destroys nothing in use:
// mdevs that go are removed first, then each PF's VF count changes (through
// 0, as sriov_numvfs demands, with host autoprobe off so that no driver
// takes a new VF), its VFs are bound to their driver, their vGPU types set
// (a type is cleared before another is set), and new mdevs are created
// last, when every type's capacity is free.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "partition/layout.h"
#include "partition/profile.h"
#include "partition/users.h"

namespace kvmai::kvmaictl::partition {

struct Step {
  enum class Kind {
    remove_mdev,    // device: UUID
    set_autoprobe,  // device: PF; value "0" or "1"
    set_num_vfs,    // device: PF; value: the count
    bind_vf,        // device: PF; vf: its index; value: driver ("" unbinds)
    set_vgpu_type,  // device: PF; vf: its index; value: type id ("0" clears)
    create_mdev,    // device: parent; value: type; uuid
  };
  Kind kind;
  std::string device;
  int vf = -1;
  std::string value;
  std::string uuid;
  // The state before, for the plan's text ("4 -> 0").
  std::string was;
  // A vGPU type's name, where the layout lists it.
  std::string name;
  // The one-line text of the step, as `partition apply dry-run` prints it.
  std::string text() const;
};

struct Plan {
  std::vector<Step> steps;
  bool empty() const { return steps.empty(); }
};

// A partition in use that a change would destroy, or a wanted layout the
// parent cannot take: one line naming the partition and its user.
class Refusal : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Makes the UUIDs of new mdevs (random in the tool, counted in tests).
using UuidSource = std::function<std::string()>;

// The steps from `now` to `wanted` (parents not named are left alone).
// Throws Refusal when a step would destroy a partition `users` lists, or
// when a parent cannot take what is wanted (no such parent, more VFs than
// TotalVFs, a type it does not offer).
Plan plan(const Layout& now, const std::vector<Wanted>& wanted, const Users& users,
          const UuidSource& new_uuid);

// What `parent` of `now` looks like as a Wanted, exactly: its VF count,
// drivers and types, autoprobe, its mdevs by UUID. Applying it puts the
// parent back as it was (the rollback of a failed apply).
Wanted as_wanted(const Parent& parent);

// Every partition (VF address, mdev UUID) of `parent`.
std::vector<std::string> partitions_of(const Parent& parent);

}  // namespace kvmai::kvmaictl::partition
