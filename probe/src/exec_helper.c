/* exec_helper.c - the trivial program that task.fork_exec and
 * task.posix_spawn start: it does nothing and exits 0. Static, so the cost
 * measured is exec and process set-up, not the dynamic loader. */
int main(void)
{
	return 0;
}
