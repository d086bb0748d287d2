// SPDX-License-Identifier: GPL-2.0-only
/*
 * The kvmai generic netlink family: registered while the module is loaded,
 * gone after rmmod, and status-get tells the truth about module and kernel.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include <linux/kvmai.h>

#include "kselftest_harness.h"
#include "lib/module.h"
#include "lib/netlink.h"
#include "lib/sys.h"

FIXTURE(genl) {
	struct kt_nl nl;
};

FIXTURE_SETUP(genl)
{
	test_cmd_mod_load(KT_MOD_KVMAI, NULL) TH_LOG("cannot insmod %s", KT_KVMAI_PATH);
	ASSERT_EQ(0, kt_nl_open(&self->nl))
		TH_LOG("generic netlink family \"%s\" not found with the module loaded",
		       KVMAI_FAMILY_NAME);
}

FIXTURE_TEARDOWN(genl)
{
	if (self->nl.sk)
		kt_nl_close(&self->nl);
}

TEST_F(genl, family_registered)
{
	EXPECT_GT(self->nl.family, 0);
}

TEST_F(genl, status_reports_module_and_kernel)
{
	struct kt_status st;
	struct utsname uts;
	char modver[64] = "";
	FILE *f;

	test_cmd_status_get(&st);
	f = fopen("/sys/module/kvmai/version", "r");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(1, fscanf(f, "%63s", modver));
	fclose(f);
	ASSERT_EQ(0, uname(&uts));

	EXPECT_STREQ(modver, st.version);
	EXPECT_EQ((__u32)KVMAI_API_VERSION, st.api_version);
	EXPECT_STREQ(uts.release, st.kernel);
}

/* The module reports the kernel interfaces it uses, and only those it has. */
TEST_F(genl, features_match_the_kernel)
{
	struct kt_status st;
	char mod[64];

	test_cmd_status_get(&st);
	EXPECT_EQ(kt_kernel_symbol("pci_acs_override", NULL, 0),
		  !!(st.features & KVMAI_FEATURE_ACS_OVERRIDE));
	EXPECT_EQ(kt_kernel_symbol("vfio_device_user", NULL, 0),
		  !!(st.features & KVMAI_FEATURE_VFIO_NOTIFY));
	/* KVM's fence and perf's conflict walk: both or neither. */
	EXPECT_EQ(kt_kernel_symbol("kvm_mediated_pmu_fence", NULL, 0) &&
		  kt_kernel_symbol("perf_guest_core_for_each_conflict", NULL, 0),
		  !!(st.features & KVMAI_FEATURE_CORE_FENCE));
	/* kvmai's own copy of the registry (uncore_guest.ko) does not count. */
	EXPECT_EQ(kt_kernel_symbol("uncore_guest_reserve", mod, sizeof(mod)) && !*mod,
		  !!(st.features & KVMAI_FEATURE_UNCORE_RESERVE));
	TH_LOG("kernel %s, features %#x", st.kernel, st.features);
}

TEST_F(genl, unknown_command_rejected)
{
	test_err_nl_bare(EOPNOTSUPP, KVMAI_CMD_MAX + 1);
}

TEST(family_follows_module_lifetime)
{
	struct kt_nl nl;

	test_cmd_mod_load(KT_MOD_KVMAI, NULL);
	test_cmd_mod_unload(KT_MOD_KVMAI);
	EXPECT_EQ(-ENOENT, kt_nl_open(&nl));
	kt_nl_close(&nl);

	test_cmd_mod_load(KT_MOD_KVMAI, NULL);
	ASSERT_EQ(0, kt_nl_open(&nl)) TH_LOG("family not back after reloading the module");
	kt_nl_close(&nl);
}

TEST_HARNESS_MAIN
