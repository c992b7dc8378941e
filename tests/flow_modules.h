/*
 * flow_modules.h - modules for the flow tests, until the built-in ones
 * land: declarations only (their functions return at once). Named t_*
 * so that they never clash with built-ins. tests/flow_modules.c says
 * what each declares.
 */
#ifndef RIVER_TEST_FLOW_MODULES_H
#define RIVER_TEST_FLOW_MODULES_H

/* Register every test module: RIVER_SUCCESS or the first failure. */
int flowtest_register(void);

#endif /* RIVER_TEST_FLOW_MODULES_H */
