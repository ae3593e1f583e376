import { Health, type HttpHandler, type InProcessHandler, type ReadinessReport, type RunningService } from '@gw/platform';
import { parentPort, Worker } from 'node:worker_threads';
import { pathToFileURL } from 'node:url';

/** What the worker thread says to the thread that started it. */
type FromWorker =
  | { type: 'ready'; name: string; httpPort: number; grpcPort: number }
  | { type: 'failed'; message: string; stack: string }
  | { type: 'report'; id: number; report: ReadinessReport }
  | { type: 'heap'; id: number; heap: HeapUse };

/** What the starting thread asks of the worker. */
type ToWorker = { type: 'report'; id: number } | { type: 'heap'; id: number } | { type: 'stop' };

/** One thread's V8 heap, in bytes. */
export interface HeapUse {
  used: number;
  total: number;
}

/** A thread's heap after a full collection when the process runs with `--expose-gc` (the flag reaches every thread). */
export function heapUse(): HeapUse {
  (globalThis as { gc?: () => void }).gc?.();
  const { heapUsed, heapTotal } = process.memoryUsage();
  return { used: heapUsed, total: heapTotal };
}

/** A service in a worker thread: a running service whose heap can be asked for. */
export interface WorkerService extends RunningService {
  heap(): Promise<HeapUse>;
}

const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;

/**
 * A service that runs in a worker thread of this process: its own event loop on the machine's other core, its
 * own connections to the engines' files, reached over its own HTTP and gRPC ports like a service in another
 * process. The handle answers readiness from the worker's own checks and stops it gracefully.
 *
 * `entry` is a module that calls `serveFromWorker`. Written in TypeScript, it needs tsx in the worker too: a
 * process started with tsx passes its loader on (`execArgv`); any other (a test runner with its own transform)
 * gets it added. `name` names the thread (as `ps -T` and /proc show it), so its CPU is told apart from the process's.
 */
export async function startWorkerService(entry: string, name: string, workerData: unknown, onExit: (code: number, err: Error | null) => void): Promise<WorkerService> {
  const inherited = workerExecArgv(process.execArgv);
  const loaded = inherited.some((arg) => arg.includes('tsx'));
  const execArgv = loaded || !entry.endsWith('.ts') ? inherited : [...inherited, '--import', pathToFileURL(require.resolve('tsx')).href];
  const worker = new Worker(entry, { workerData, execArgv, name });
  const pending = new Map<number, (report: ReadinessReport) => void>();
  const heaps = new Map<number, (heap: HeapUse) => void>();
  let nextId = 0;
  let stopping: Promise<void> | null = null;
  let exited = false;
  let failure: Error | null = null;
  worker.on('error', (err) => { failure = err; });
  const exit = new Promise<number>((resolve) => worker.once('exit', (code) => { exited = true; resolve(code); }));

  const ready = await new Promise<Extract<FromWorker, { type: 'ready' }>>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker ${entry} did not start in ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
    worker.on('message', (msg: FromWorker) => {
      if (msg.type === 'ready') { clearTimeout(timer); resolve(msg); }
      else if (msg.type === 'failed') { clearTimeout(timer); reject(Object.assign(new Error(msg.message), { stack: msg.stack })); }
      else if (msg.type === 'report') { pending.get(msg.id)?.(msg.report); pending.delete(msg.id); }
      else if (msg.type === 'heap') { heaps.get(msg.id)?.(msg.heap); heaps.delete(msg.id); }
    });
    void exit.then((code) => { clearTimeout(timer); reject(failure ?? new Error(`worker ${entry} exited with ${code} while starting`)); });
  }).catch(async (err: unknown) => {
    await worker.terminate();
    throw err;
  });
  // A worker that ends on its own (a crash) is the process's failure, as it would be on the main thread.
  void exit.then((code) => { if (!stopping) onExit(code, failure); });

  const unready: ReadinessReport = { ready: false, checks: { worker: false }, degraded: [] };
  const health = new (class extends Health {
    override report(): Promise<ReadinessReport> {
      if (exited || stopping) return Promise.resolve(unready);
      const id = nextId++;
      return new Promise((resolve) => {
        const timer = setTimeout(() => { pending.delete(id); resolve(unready); }, 2_000);
        pending.set(id, (report) => { clearTimeout(timer); resolve(report); });
        worker.postMessage({ type: 'report', id } satisfies ToWorker);
      });
    }
  })();
  const notInProcess = (): never => {
    throw new Error(`${ready.name} runs in a worker thread: call it on its HTTP port ${ready.httpPort}`);
  };
  return {
    name: ready.name,
    httpPort: ready.httpPort,
    grpcPort: ready.grpcPort,
    health,
    httpHandler: notInProcess satisfies HttpHandler,
    handIn: notInProcess satisfies InProcessHandler,
    heap() {
      if (exited) return Promise.reject(new Error(`${ready.name}'s worker has ended`));
      const id = nextId++;
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => { heaps.delete(id); reject(new Error(`${ready.name}'s worker did not report its heap`)); }, 10_000);
        heaps.set(id, (heap) => { clearTimeout(timer); resolve(heap); });
        worker.postMessage({ type: 'heap', id } satisfies ToWorker);
      });
    },
    stop() {
      stopping ??= (async () => {
        if (exited) return;
        worker.postMessage({ type: 'stop' } satisfies ToWorker);
        const timer = setTimeout(() => void worker.terminate(), STOP_TIMEOUT_MS);
        await exit;
        clearTimeout(timer);
      })();
      return stopping;
    },
  };
}

/** Flags that take a value in the next argument when not written `--flag=value`. */
const WITH_VALUE = new Set(['--import', '--require', '-r', '--loader', '--experimental-loader', '--cpu-prof-dir', '--cpu-prof-name', '--cpu-prof-interval']);
/** Per-thread flags a worker inherits: module loaders, source maps, CPU profiling. */
const PER_THREAD = /^(--import|--require|-r|--loader|--experimental-loader|--enable-source-maps|--cpu-prof[a-z-]*)(=|$)/;

/**
 * The parent's flags a worker may take: Node refuses process-wide ones (`--expose-gc`, heap limits) in a worker's
 * `execArgv`, so only the per-thread ones are passed on.
 */
export function workerExecArgv(parent: string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < parent.length; i++) {
    const arg = parent[i];
    const takesNext = WITH_VALUE.has(arg) && i + 1 < parent.length;
    if (PER_THREAD.test(arg)) kept.push(...(takesNext ? [arg, parent[i + 1]] : [arg]));
    if (takesNext) i++;
  }
  return kept;
}

/**
 * The worker side: starts the service, reports its ports, answers readiness from its checks and stops it (and
 * whatever else `start` opened) when asked. A start that fails is reported, and the worker ends.
 */
export function serveFromWorker(start: () => Promise<{ service: RunningService; close(): Promise<void> }>): void {
  const port = parentPort;
  if (!port) throw new Error('serveFromWorker runs in a worker thread');
  const say = (msg: FromWorker) => port.postMessage(msg);
  start().then(
    ({ service, close }) => {
      port.on('message', (msg: ToWorker) => {
        if (msg.type === 'report') void service.health.report().then((report) => say({ type: 'report', id: msg.id, report }));
        else if (msg.type === 'heap') say({ type: 'heap', id: msg.id, heap: heapUse() });
        else if (msg.type === 'stop') {
          // Closing the port lets the thread end once the service and its engines have.
          void service.stop().then(close).finally(() => port.close());
        }
      });
      say({ type: 'ready', name: service.name, httpPort: service.httpPort, grpcPort: service.grpcPort });
    },
    (err: unknown) => {
      // Its own message (and the worker's stack): new Error(stack) would read "Error: Error: …".
      say({ type: 'failed', message: (err as Error)?.message ?? String(err), stack: (err as Error)?.stack ?? String(err) });
      port.close();
    },
  );
}
