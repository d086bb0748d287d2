// The `nvidia-smi topo -m` view of a host: every GPU and RDMA NIC against
// every other, each cell the class of the PCIe path between the two.
// Management NICs are left out, as nvidia-smi and NCCL leave them out.
#pragma once

#include <optional>
#include <vector>

#include "model/p2p_path.h"
#include "model/topology.h"

namespace kvmai::kvmaictl {

struct TopoMatrix {
  std::vector<const Named*> devices;  // GPUs in order, then RDMA NICs
  // cells[i][j]: the path class between devices i and j; nullopt where
  // i == j (the device itself).
  std::vector<std::vector<std::optional<PathClass>>> cells;
};

TopoMatrix build_matrix(const Topology& topo);

}  // namespace kvmai::kvmaictl
