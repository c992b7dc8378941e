/* noentry.c - a shared library without river_plugin_init: river run
 * --plugin refuses it, naming the entry point (tests/cli/test_plugins.sh). */
int not_a_plugin(void);

int not_a_plugin(void)
{
  return 0;
}
