/**
 * Preloaded (`node --import`) into a process the benchmark spawns with an IPC channel: when the benchmark
 * dies without stopping it (SIGKILL, crash), the channel closes and the process gets SIGTERM from itself, so
 * it shuts down by its own handler instead of lingering on its port.
 */
if (process.send) {
  process.channel?.unref();
  process.once('disconnect', () => process.kill(process.pid, 'SIGTERM'));
}
