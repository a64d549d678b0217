// autocannon in a process of its own, for a bench that measures latency meanwhile: a load
// generator sharing the measuring process's event loop delays the measurer's own requests, and
// the figure would be the client's queue, not the server's. Given {url, connections, seconds,
// requests} over IPC, answers autocannon's result.
import autocannon from 'autocannon';

process.once('message', async (opts: Parameters<typeof autocannon>[0]) => {
  const result = await autocannon(opts);
  process.send?.(result, () => process.exit(0));
});
