# The devices of the QEMU 'make qemu' builds (x86_64, KVM and TCG).  It
# runs two ways: under KVM for guests of the emulated host (a q35 machine,
# PCIe ports and switches, vfio-pci), and under TCG as the emulated host
# itself for the host profiles that ask for it (aihost.toml, emulator =
# "kvmai"): those add the emulated host's IOMMU, expanders and endpoints.
# Everything else stays out, so that the build takes about three minutes
# on two cores.
CONFIG_Q35=y
CONFIG_VFIO_PCI=y
CONFIG_PCIE_PORT=y
CONFIG_XIO3130=y
# The emulated host's own devices (aihost.toml).
CONFIG_VTD=y
CONFIG_PXB=y
CONFIG_VIRTIO_PCI=y
CONFIG_VIRTIO_GPU=y
CONFIG_VIRTIO_NET=y
CONFIG_NVME_PCI=y
CONFIG_EDU=y
CONFIG_IGB_PCI_EXPRESS=y
# What those link against: pxb-pcie's CXL variant, NVMe's SPDM socket,
# igb's shared e1000 code.
CONFIG_CXL=y
CONFIG_CXL_MEM_DEVICE=y
CONFIG_SPDM_SOCKET=y
CONFIG_E1000E_PCI_EXPRESS=y
