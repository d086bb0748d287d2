/* SPDX-License-Identifier: GPL-2.0-only */
/* kvmai - whether a device has ATS on (ats.c): translated groups need it. */
#ifndef _KVMAI_ATS_H
#define _KVMAI_ATS_H

#include <linux/types.h>

struct pci_dev;

bool kvmai_ats_on(struct pci_dev *pdev);

#endif /* _KVMAI_ATS_H */
