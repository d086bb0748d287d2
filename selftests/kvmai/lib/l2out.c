// SPDX-License-Identifier: GPL-2.0-only
/* What a guest of the emulated host reports, read back (l2out.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "l2out.h"

int kt_l2_parse_probe(char *out, struct kt_l2_dev *devs, int max)
{
	char *line, *save;
	int n = 0;

	for (line = strtok_r(out, "\n", &save); line && n < max;
	     line = strtok_r(NULL, "\n", &save)) {
		devs[n].link[0] = 0;
		devs[n].bars[0] = 0;
		if (!strncmp(line, "0000:", 5) &&
		    sscanf(line, "%15s %15s %d %255s %39s %95s", devs[n].bdf, devs[n].id,
			   &devs[n].numa, devs[n].path, devs[n].link, devs[n].bars) >= 4)
			n++;
	}
	return n;
}

void kt_sysfs_link(const char *bdf, char *buf, size_t len)
{
	char path[128], speed[64] = "", width[16] = "", *o = speed;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/max_link_speed", bdf);
	f = fopen(path, "r");
	if (f) {
		/* The speed less its spaces and newline, as probe.sh's tr -d. */
		for (int c; (c = fgetc(f)) != EOF && o < speed + sizeof(speed) - 1;)
			if (c != ' ' && c != '\n')
				*o++ = (char)c;
		*o = 0;
		fclose(f);
	}
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/max_link_width", bdf);
	f = fopen(path, "r");
	if (f) {
		if (!fgets(width, sizeof(width), f))
			width[0] = 0;
		width[strcspn(width, "\n")] = 0;
		fclose(f);
	}
	if (speed[0] && width[0])
		snprintf(buf, len, "%s,x%s", speed, width);
	else
		snprintf(buf, len, "-");
}

void kt_sysfs_bars(const char *bdf, char *buf, size_t len)
{
	unsigned long long start, end, flags;
	char path[128];
	size_t o = 0;
	FILE *f;

	buf[0] = 0;
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource", bdf);
	f = fopen(path, "r");
	/* BARs 0-5; 0x200 is IORESOURCE_MEM. */
	for (int i = 0; f && i < 6 && o < len; i++) {
		if (fscanf(f, "%llx %llx %llx", &start, &end, &flags) != 3)
			break;
		if (start && (flags & 0x200))
			o += snprintf(buf + o, len - o, "%s%d:%llx", o ? "," : "", i,
				      end - start + 1);
	}
	if (f)
		fclose(f);
	if (!buf[0])
		snprintf(buf, len, "-");
}

static int cmp_bars(const void *a, const void *b)
{
	return strcmp(a, b);
}

int kt_same_bars(const char *const hbdf[], const struct kt_nccl_leaf *leaves, int n,
		 const struct kt_l2_dev *devs, int nd, char *why, size_t len)
{
	char host[16][96], l2[16][96];

	if (n > 16)
		n = 16;
	for (int i = 0; i < n; i++) {
		kt_sysfs_bars(hbdf[i], host[i], sizeof(host[i]));
		snprintf(l2[i], sizeof(l2[i]), "%s not probed", leaves[i].busid);
		for (int j = 0; j < nd; j++)
			if (!strcmp(devs[j].bdf, leaves[i].busid))
				snprintf(l2[i], sizeof(l2[i]), "%s",
					 devs[j].bars[0] ? devs[j].bars : "?");
	}
	qsort(host, n, sizeof(host[0]), cmp_bars);
	qsort(l2, n, sizeof(l2[0]), cmp_bars);
	for (int i = 0; i < n; i++) {
		if (strcmp(host[i], l2[i])) {
			snprintf(why, len, "memory BARs on the host: %s; in L2: %s",
				 host[i], l2[i]);
			return -1;
		}
	}
	return 0;
}

int kt_same_port_links(const char hport[][16], const char gport[][16], int n,
		       const struct kt_l2_dev *devs, int nd, char *why, size_t len)
{
	for (int i = 0; i < n; i++) {
		const char *got = NULL;
		char want[64];

		for (int j = 0; j < nd; j++)
			if (!strcmp(devs[j].bdf, gport[i]))
				got = devs[j].link;
		kt_sysfs_link(hport[i], want, sizeof(want));
		if (!hport[i][0] || !got || strcmp(want, got)) {
			snprintf(why, len, "port %s on the host: %s; port %s in L2: %s", hport[i],
				 want, gport[i][0] ? gport[i] : "?", got ? got : "not probed");
			return -1;
		}
	}
	return 0;
}

void kt_topo_port(const char *json, const char *name, char *bdf)
{
	char pat[64];
	const char *p, *end, *b;

	bdf[0] = 0;
	snprintf(pat, sizeof(pat), "\"name\":\"%s\"", name);
	p = strstr(json, pat);
	p = p ? strstr(p, "\"upstream\":[") : NULL;
	end = p ? strchr(p, ']') : NULL;
	/* Root port first, the bridge right above the device last. */
	for (b = p; b && (b = strstr(b, "\"bdf\":\"")) && b < end; b++)
		if (sscanf(b + strlen("\"bdf\":\""), "%15[0-9a-f:.]", bdf) != 1)
			bdf[0] = 0;
}

int kt_topo_numa(const char *json, const char *name)
{
	char pat[64];
	const char *p;
	int numa = -2;

	snprintf(pat, sizeof(pat), "\"name\":\"%s\"", name);
	p = strstr(json, pat);
	p = p ? strstr(p, "\"numa_node\":") : NULL;
	if (p)
		numa = atoi(p + strlen("\"numa_node\":"));
	return numa;
}

void kt_topo_path(const char *json, const char *gpu, const char *nic, char *path)
{
	char pat[96];
	const char *p;

	path[0] = 0;
	snprintf(pat, sizeof(pat), "\"gpu\":\"%s\",\"nic\":\"%s\",\"path\":\"", gpu, nic);
	p = strstr(json, pat);
	if (p)
		sscanf(p + strlen(pat), "%7[A-Z]", path);
}

int kt_topo_same_layout(const char *l1, const char *l2, const char *const host[],
			const char *const guest[], int n, char *why, size_t len)
{
	char hp[8], gp[8];

	for (int i = 0; i < n; i++) {
		int h = kt_topo_numa(l1, host[i]), g = kt_topo_numa(l2, guest[i]);

		if (h < 0 || h != g) {
			snprintf(why, len, "%s: node %d on the host, %s: node %d in L2", host[i], h,
				 guest[i], g);
			return -1;
		}
	}
	for (int i = 0; i < 2; i++) {
		for (int j = 2; j < n; j++) {
			kt_topo_path(l1, host[i], host[j], hp);
			kt_topo_path(l2, guest[i], guest[j], gp);
			if (!hp[0] || strcmp(hp, gp)) {
				snprintf(why, len, "%s-%s: \"%s\" on the host, \"%s\" in L2",
					 host[i], host[j], hp, gp);
				return -1;
			}
		}
	}
	return 0;
}

static int xml_attr(const char *line, const char *name, char *buf, size_t len)
{
	char pat[32];
	const char *p, *end;

	snprintf(pat, sizeof(pat), " %s=\"", name);
	p = strstr(line, pat);
	if (!p)
		return -1;
	p += strlen(pat);
	end = strchr(p, '"');
	if (!end || (size_t)(end - p) >= len)
		return -1;
	snprintf(buf, len, "%.*s", (int)(end - p), p);
	return 0;
}

int kt_parse_nccl(char *xml, struct kt_nccl_leaf *leaves, int max)
{
	char stack[8][16], busid[16], num[8];
	int depth = 0, numaid = -1, n = 0;
	char *line, *save;

	for (line = strtok_r(xml, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strstr(line, "<cpu ")) {
			if (xml_attr(line, "numaid", num, sizeof(num)))
				return -1;
			numaid = atoi(num);
		} else if (strstr(line, "</pci>")) {
			if (--depth < 0)
				return -1;
		} else if (strstr(line, "<pci ")) {
			if (xml_attr(line, "busid", busid, sizeof(busid)))
				return -1;
			if (!strstr(line, "/>")) {
				if (depth == 8)
					return -1;
				memcpy(stack[depth++], busid, sizeof(busid));
				continue;
			}
			if (n == max)
				return -1;
			memcpy(leaves[n].busid, busid, sizeof(busid));
			memcpy(leaves[n].bridges, stack, sizeof(stack));
			leaves[n].depth = depth;
			leaves[n].numaid = numaid;
			n++;
		}
	}
	return depth ? -1 : n;
}
