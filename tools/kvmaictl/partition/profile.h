// Partition profiles: the wanted partitioning of some or all parents,
// named, in one TOML file, so that an operator switches a host between
// layouts ("training": whole GPUs; "inference": many small ones):
//
//   [profile.inference."0000:17:00.0"]
//   vfs = 4                         # SR-IOV VFs (0: none)
//   driver = "vfio-pci"             # what the VFs are bound to
//   vgpu-type = "NVIDIA H100-1-10C" # every VF's vGPU type, or a list
//   [profile.inference.mtty]
//   mdevs = { mtty-2 = 2 }          # mdev instances by type: a count...
//   # mdevs = [ { type = "mtty-2", uuid = "..." } ]   # ...or named ones
//
// The keys are vendor-neutral: a vGPU type is whatever the VF's driver
// lists in its creatable types, an mdev type whatever the parent offers.
// Parents a profile does not name are left as they are.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvmai::kvmaictl::partition {

struct WantedMdev {
  std::string type;
  std::string uuid;  // "": any instance of the type, or a new one
};

// What one parent should look like.
struct Wanted {
  std::string parent;  // a PCI address ("0000:17:00.0") or mdev_bus name
  std::optional<int> vfs;
  // Per VF index, what it is bound to: "vfio-pci" unless the profile names
  // a host driver; "" for none (unbound). Empty: bindings left alone, but
  // for VFs the plan creates, which go to vfio-pci.
  std::vector<std::string> drivers;
  // Per VF index (shorter: the rest keep theirs), a vGPU type by id or
  // name; "none" clears it; "" leaves it. Empty: types left alone.
  std::vector<std::string> vgpu_types;
  // Whether sriov_drivers_autoprobe is set; nullopt: 0 whenever the VF
  // count changes, so that no host driver grabs a VF before it is bound.
  std::optional<bool> autoprobe;
  // nullopt: mdevs left alone; else exactly these (an empty list removes
  // all).
  std::optional<std::vector<WantedMdev>> mdevs;
};

struct Profile {
  std::string name;
  std::vector<Wanted> parents;  // sorted by parent
};

// Every profile of a file's text; `source` names the file in errors.
// Throws std::runtime_error with one line naming the key and what was
// wrong ("profiles.toml: profile.inference.\"0000:17:00.0\".vfs: want a
// whole number from 0 to 4096, not -1").
std::vector<Profile> parse_profiles(std::string_view text, std::string_view source);

}  // namespace kvmai::kvmaictl::partition
