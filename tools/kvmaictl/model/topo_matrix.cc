#include "model/topo_matrix.h"

namespace kvmai::kvmaictl {

TopoMatrix build_matrix(const Topology& topo) {
  TopoMatrix m;
  for (const auto& g : topo.gpus()) {
    m.devices.push_back(&g);
  }
  for (const auto& n : topo.nics()) {
    if (n.dev->is_rdma_nic()) {
      m.devices.push_back(&n);
    }
  }
  const std::size_t n = m.devices.size();
  m.cells.assign(n, std::vector<std::optional<PathClass>>(n));
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = i + 1; j < n; ++j) {
      // A path's class does not depend on its direction.
      const PathClass c = classify(topo.tree(), *m.devices[i]->dev, *m.devices[j]->dev).path_class;
      m.cells[i][j] = c;
      m.cells[j][i] = c;
    }
  }
  return m;
}

}  // namespace kvmai::kvmaictl
