/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The host the selftests run on: shell commands, child processes, files,
 * sysfs, CPUs and the kernel's symbols and log.
 */
#ifndef KT_SYS_H
#define KT_SYS_H

#include "kselftest.h"
#include "kt.h"

/* Runs @cmd; up to @len bytes of its stdout into @buf.  pclose()'s status. */
int kt_run(const char *cmd, char *buf, size_t len);
/*
 * Runs a shell command made from @fmt: its exit status (-1 if it did not
 * exit), its stdout and stderr into @out.
 */
__printf(3, 4) int kt_sh(char *out, size_t len, const char *fmt, ...);
/*
 * Runs @body(@arg) in a forked child, which exits with what it returns:
 * that exit code, or -errno if there is no child, -ECHILD if it did not
 * exit.
 */
int kt_child(int (*body)(void *arg), void *arg);

/* The whole of @path, NUL-terminated, in @buf: its length or -1. */
long kt_file_read(const char *path, char *buf, size_t len);
/* Whether file @path contains @line. */
bool kt_file_has(const char *path, const char *line);
/* Whether the kernel's last lines of log contain @needle. */
bool kt_kmsg_has(const char *needle);

/* Writes @val to sysfs file @path: 0 or -errno (the write's own error). */
int kt_sysfs_write(const char *path, const char *val);
/* The number in sysfs file @path, or -errno (-EINVAL: not a number). */
long kt_sysfs_read_long(const char *path);

/*
 * Calls @each(cpu, @arg) for every CPU of cpulist @list ("0-1,3") in turn,
 * until one returns non-zero: that, 0, or -EINVAL for a bad list.
 */
int kt_cpulist_each(const char *list, int (*each)(int cpu, void *arg), void *arg);
/* The CPUs of @cpu's package as a cpulist in @list: how many, or -errno. */
int kt_cpu_package(int cpu, char *list, size_t len);
/* Runs this process (and so its vCPUs) on the CPUs of cpulist @list only. */
int kt_cpu_pin(const char *list);

/*
 * Whether the running kernel has @symbol; the module that provides it
 * into @module ("" built in) when @module is not NULL.
 */
bool kt_kernel_symbol(const char *symbol, char *module, size_t len);

#endif /* KT_SYS_H */
