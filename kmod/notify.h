/* SPDX-License-Identifier: GPL-2.0-only */
/* kvmai - the notifiers through which groups and PMU owners hear of events. */
#ifndef _KVMAI_NOTIFY_H
#define _KVMAI_NOTIFY_H

int kvmai_notifiers_register(void);
void kvmai_notifiers_unregister(void);
/* The mdev bus's, apart: the bus is known once kvmai's mdev driver is registered. */
int kvmai_mdev_notifier_register(void);
void kvmai_mdev_notifier_unregister(void);

#endif /* _KVMAI_NOTIFY_H */
