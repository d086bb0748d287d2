// `kvmaictl vm nccl-map PLAN FILE`, run inside the guest: the NCCL
// topology file the host wrote for a plan (vm/nccl.h), with its bus ids
// made this guest's.
//
// `vm plan` and `vm nccl-topo` name guest functions by the bus numbers
// SeaBIOS gives (VmPlan's guest_bdf).  What is fixed whatever the firmware
// is each expander's root bus (its bus_nr) and the device and function
// numbers the plan gives every port and device; the buses below the root
// ports are the firmware's to number, and one that reserves bus numbers
// for hotplug (or a later change to the domain) numbers them otherwise.
// So each planned function is found here by its path: the root bus, then
// the device.function of every bridge down to it, as this guest's sysfs
// shows them; the file's bus ids are then replaced by the ones found, and
// each device the file names must be the vendor and device it says.
#pragma once

#include <string>
#include <string_view>

#include "model/pci_tree.h"

namespace kvmai::kvmaictl {

// @nccl_xml with every planned bus id (of `kvmaictl -j vm plan`'s JSON
// @plan_json) replaced by the one this guest (@guest) gives that function;
// synthetic bridges (ffff:ff:NN.0) stay.  Throws OpError (one line) for a
// plan that is not one, a planned function this guest lacks (naming it
// and its path), and a device of another vendor or device id than the
// file says.
std::string nccl_map(std::string_view plan_json, std::string_view nccl_xml, const PciTree& guest);

}  // namespace kvmai::kvmaictl
