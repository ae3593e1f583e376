import { simulatedErrorStatus } from '../http-kit';

/**
 * The simulated video tasks both video wire formats share. A task moves one step per poll, so tests decide
 * when it ends: `queued`, then `running` at 30 and 70 percent, then `succeeded`. Knobs, by the prompt's first
 * word: `sim-fail` ends the task failed (a per-task failure); `sim-slow` takes five more running polls;
 * `sim-stuck` never leaves running; `sim-poll-error-<status>` answers the task's first poll with that status.
 * The model `sim-slash-ids` gets task ids with slashes in them (`tasks/<date>/<id>`), as some providers' operation names have.
 */
export type SimTaskStatus = 'queued' | 'running' | 'succeeded' | 'failed';

export interface SimVideoTask {
  id: string;
  model: string;
  prompt: string;
  status: SimTaskStatus;
  /** Polls answered so far. */
  polls: number;
  progress: number;
  createdAt: number;
  updatedAt: number;
  /** Seconds of video to make. */
  duration: number;
  params: Record<string, unknown>;
  error: { code: string; message: string } | null;
  /** Polls left to answer with an error status before answering normally. */
  pollErrors: number;
  pollErrorStatus: number;
}

const SLOW_EXTRA_POLLS = 5;
/** The progress shown by each running poll. */
const RUNNING_PROGRESS = [30, 70];

export function knobOf(prompt: string): string {
  return prompt.trim().split(/\s/, 1)[0] ?? '';
}

export class SimVideoTasks {
  private readonly tasks = new Map<string, SimVideoTask>();
  private counter = 0;

  constructor(private readonly prefix: string) {}

  create(model: string, prompt: string, duration: number, params: Record<string, unknown>): SimVideoTask {
    const now = Math.floor(Date.now() / 1000);
    const knob = knobOf(prompt);
    const pollErrorStatus = knob.startsWith('sim-poll-error-') ? simulatedErrorStatus(`sim-error-${knob.slice('sim-poll-error-'.length)}`) : undefined;
    const own = `${this.prefix}${(++this.counter).toString(36).padStart(10, '0')}${Date.now().toString(36)}`;
    const task: SimVideoTask = {
      id: model === 'sim-slash-ids' ? `tasks/${new Date().toISOString().slice(0, 10)}/${own}` : own,
      model, prompt, status: 'queued', polls: 0, progress: 0, createdAt: now, updatedAt: now, duration, params, error: null,
      pollErrors: pollErrorStatus ? 1 : 0, pollErrorStatus: pollErrorStatus ?? 0,
    };
    this.tasks.set(task.id, task);
    return task;
  }

  get(id: string): SimVideoTask | undefined {
    return this.tasks.get(id);
  }

  /** One poll: the status to answer with instead of the task (a poll error knob), or the task moved one step. */
  poll(id: string): { task: SimVideoTask } | { errorStatus: number } | undefined {
    const task = this.tasks.get(id);
    if (!task) return undefined;
    if (task.pollErrors > 0) {
      task.pollErrors--;
      return { errorStatus: task.pollErrorStatus };
    }
    this.step(task);
    return { task };
  }

  list(): SimVideoTask[] {
    return [...this.tasks.values()];
  }

  private step(task: SimVideoTask): void {
    if (task.status === 'succeeded' || task.status === 'failed') return;
    task.polls++;
    task.updatedAt = Math.floor(Date.now() / 1000);
    const knob = knobOf(task.prompt);
    const running = RUNNING_PROGRESS.length + (knob === 'sim-slow' ? SLOW_EXTRA_POLLS : 0);
    if (knob === 'sim-stuck' || task.polls <= running) {
      task.status = 'running';
      task.progress = RUNNING_PROGRESS[Math.min(task.polls - 1, RUNNING_PROGRESS.length - 1)];
      return;
    }
    if (knob === 'sim-fail') {
      task.status = 'failed';
      task.error = { code: 'OutputVideoSensitiveContentDetected', message: 'The generated video may contain sensitive content (simulated failure).' };
      return;
    }
    task.status = 'succeeded';
    task.progress = 100;
  }
}

/**
 * An mp4-ish payload: a real ISO BMFF `ftyp` box, then an `mdat` box of bytes derived from the task id (about
 * 1 KiB per second of video), so a copy can be checked byte for byte.
 */
export function simulatedMp4(taskId: string, durationSeconds: number): Buffer {
  const ftyp = Buffer.alloc(24);
  ftyp.writeUInt32BE(24, 0);
  ftyp.write('ftypisom', 4, 'latin1');
  ftyp.writeUInt32BE(0x200, 12);
  ftyp.write('isommp42', 16, 'latin1');
  const payload = Buffer.alloc(Math.max(1, Math.round(durationSeconds)) * 1024);
  const seed = Buffer.from(taskId, 'utf8');
  for (let i = 0; i < payload.length; i++) payload[i] = seed[i % seed.length] ^ (i & 0xff);
  const mdatHeader = Buffer.alloc(8);
  mdatHeader.writeUInt32BE(8 + payload.length, 0);
  mdatHeader.write('mdat', 4, 'latin1');
  return Buffer.concat([ftyp, mdatHeader, payload]);
}

/** A 1x1 PNG: the simulated last frame. */
export const SIMULATED_FRAME_PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64');

/** A task id from a request path (ids with slashes arrive percent-encoded); a malformed encoding is taken as it is. */
export function decodeTaskId(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}
