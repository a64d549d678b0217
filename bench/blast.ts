// autocannon in a process of its own, for a bench that measures latency meanwhile: a load
// generator sharing the measuring process's event loop delays the measurer's own requests, and
// the figure would be the client's queue, not the server's. Given {url, connections, seconds,
// requests} over IPC it answers 'loaded'; told 'go', it runs and answers autocannon's result. The
// two steps keep the copy of a large request list (tens of MB) out of the time measured.
import autocannon from 'autocannon';

let opts: Parameters<typeof autocannon>[0] | undefined;
process.on('message', async (message: 'go' | Parameters<typeof autocannon>[0]) => {
  if (message !== 'go') {
    opts = message;
    process.send?.('loaded');
    return;
  }
  const result = await autocannon(opts as Parameters<typeof autocannon>[0]);
  process.send?.(result, () => process.exit(0));
});
