import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import type { StreamOutcome } from '@gw/billed-call';
import { createLogger, EventStreamWriter } from '@gw/platform';
import { relayStream } from './relay-stream';

const EVENTS = 400;
const EVENT_BYTES = 256 * 1024;

describe('relayStream', () => {
  let server: Server;
  let pulled: number;
  let outcomes: StreamOutcome[];

  beforeEach(async () => {
    pulled = 0;
    outcomes = [];
    server = createServer((_req, res) => {
      // A provider far faster than its client: 100 MB of events, each ready at once.
      const items = (async function* () {
        for (let i = 0; i < EVENTS; i++) {
          pulled++;
          yield 'x'.repeat(EVENT_BYTES);
        }
      })();
      const writer = new EventStreamWriter(res, { format: 'chat', heartbeatMs: 0 });
      void relayStream(items, writer, {
        write: (item) => writer.event({ data: item }),
        trailer: { data: '[DONE]' },
        finish: (outcome) => outcomes.push(outcome),
        drainMs: 1_000, traceId: 't', log: createLogger(null, 'silent'),
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterEach(() => new Promise<void>((resolve) => server.close(() => resolve())));

  function openPaused(): Promise<Socket> {
    return new Promise((resolve) => {
      const socket = connect((server.address() as AddressInfo).port, '127.0.0.1', () => {
        socket.pause();
        socket.write('POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\n\r\n');
        resolve(socket);
      });
    });
  }

  // Before, every event was written at once: a client that read slowly held the whole stream in this process.
  it('reads the provider no further ahead of a slow client than a bounded backlog, and relays all once it reads', async () => {
    const socket = await openPaused();
    await new Promise((r) => setTimeout(r, 500));
    // The kernel's socket buffers take some megabytes; the rest waits at the provider, not in memory here.
    expect(pulled).toBeLessThan(EVENTS / 4);

    let received = 0;
    let tail = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.length;
      tail = (tail + chunk.toString('latin1')).slice(-64);
    });
    socket.resume();
    const deadline = Date.now() + 20_000;
    while (!tail.includes('[DONE]') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    socket.destroy();
    expect(pulled).toBe(EVENTS);
    expect(received).toBeGreaterThan(EVENTS * EVENT_BYTES);
    expect(tail).toContain('data: [DONE]');
    expect(outcomes).toEqual([{ cancelled: false, failed: false }]);
  });

  it('a client that leaves while its stream waits ends the wait, and the call is finished as cancelled', async () => {
    const socket = await openPaused();
    await new Promise((r) => setTimeout(r, 300));
    socket.destroy();
    const deadline = Date.now() + 5_000;
    while (outcomes.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(outcomes).toEqual([{ cancelled: true, failed: false }]);
  });
});
