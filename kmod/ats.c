// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvmai - whether a member has ATS on.
 *
 * A translated-mode group sets DT on ports, which then forward requests
 * marked as translated straight to their peers, without the IOMMU.  That
 * is safe only while every member below them has ATS enabled, so that its
 * translations came from the IOMMU.  ATS can go off while a group is
 * enabled (an IOMMU domain change, a function reset that clears the
 * enable bit, firmware) and the kernel says nothing when it does, so
 * kvmai looks both at the kernel's state and at the register, and while a
 * translated group is enabled it keeps looking (group.c's ATS watch).
 */
#include <linux/pci.h>

#include "ats.h"

/* ATS on as the kernel enabled it, and still on in the device. */
bool kvmai_ats_on(struct pci_dev *pdev)
{
#ifdef CONFIG_PCI_ATS
	u16 ctrl;

	if (!pdev->ats_enabled || !pdev->ats_cap)
		return false;
	if (pci_read_config_word(pdev, pdev->ats_cap + PCI_ATS_CTRL, &ctrl) ||
	    PCI_POSSIBLE_ERROR(ctrl))
		return false;
	return ctrl & PCI_ATS_CTRL_ENABLE;
#else
	return false;
#endif
}
