// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvmai - the ATS watch.
 *
 * A translated-mode group sets DT on ports, which then forward requests
 * marked as translated straight to their peers, without the IOMMU.  That
 * is safe only while every member below them has ATS enabled, so that its
 * translations came from the IOMMU.  ATS can go off while a group is
 * enabled (an IOMMU domain change, a function reset that clears the
 * enable bit, firmware) and the kernel says nothing when it does, so
 * while a translated group is enabled a work item looks at every member
 * each KVMAI_ATS_WATCH_MS, both at the kernel's state and at the register,
 * and disables the group as soon as one member has ATS off.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/pci.h>
#include <linux/workqueue.h>

#include "kvmai.h"

#define KVMAI_ATS_WATCH_MS 100

static void kvmai_ats_watch(struct work_struct *work);
static DECLARE_DELAYED_WORK(kvmai_ats_work, kvmai_ats_watch);

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

static void kvmai_ats_watch(struct work_struct *work)
{
	if (kvmai_groups_check_ats())
		schedule_delayed_work(&kvmai_ats_work, msecs_to_jiffies(KVMAI_ATS_WATCH_MS));
}

/* A translated group was enabled: watch until none is. */
void kvmai_ats_watch_start(void)
{
	schedule_delayed_work(&kvmai_ats_work, msecs_to_jiffies(KVMAI_ATS_WATCH_MS));
}

/* Module unload, after the family is gone: no group can start it again. */
void kvmai_ats_watch_stop(void)
{
	cancel_delayed_work_sync(&kvmai_ats_work);
}
