/* exec_helper.c - osmeter-exec-helper, the program task.posix_spawn and
 * task.fork_exec start: it does nothing and exits 0. Linked statically
 * where the libc allows, so the figure is exec and process set-up, not the
 * dynamic loader; installed next to osmeter-probe, which finds it there. */
int main(void)
{
	return 0;
}
