# The devices of the QEMU 'make qemu' builds for guests of the emulated
# host (KVM only, x86_64): a q35 machine, PCIe ports and switches, and
# vfio-pci.  Everything else stays out, so that the build takes about two
# minutes on two cores.
CONFIG_Q35=y
CONFIG_VFIO_PCI=y
CONFIG_PCIE_PORT=y
CONFIG_XIO3130=y
