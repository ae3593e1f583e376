import { UnavailableError } from '@gw/platform';
import { AnswerBound } from './answer-bound';

const SILENCE_MS = 40;
const after = <T>(ms: number, value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), ms));
const never = () => new Promise<never>(() => undefined);

/** A slow server is waited for; a silent one is given up on. */
describe('AnswerBound', () => {
  test('an operation slower than the bound completes while the server answers pings', async () => {
    const bound = new AnswerBound(SILENCE_MS, () => after(5, 'pong'));
    await expect(bound.run('items', () => after(SILENCE_MS * 5, 'done'))).resolves.toBe('done');
  });

  test('an operation slower than the bound completes while the server answers other operations', async () => {
    const bound = new AnswerBound(SILENCE_MS, never);
    const others = setInterval(() => void bound.run('others', () => after(1, 'ok')), SILENCE_MS / 4);
    try {
      await expect(bound.run('items', () => after(SILENCE_MS * 5, 'done'))).resolves.toBe('done');
    } finally {
      clearInterval(others);
    }
  });

  test('a server that answers nothing, not even a ping, fails the operation as unavailable in about twice the bound', async () => {
    const bound = new AnswerBound(SILENCE_MS, never);
    const startedAt = Date.now();
    const failure = await bound.run('items', never).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(UnavailableError);
    expect(failure).toMatchObject({ status: 503, code: 'store_unavailable' });
    expect(Date.now() - startedAt).toBeLessThan(SILENCE_MS * 2 + 1_000);
  });

  test('an operation that never ends is given up on at 30 times the bound, even on a server that answers pings', async () => {
    const bound = new AnswerBound(SILENCE_MS, () => after(1, 'pong'));
    const startedAt = Date.now();
    await expect(bound.run('items', never)).rejects.toBeInstanceOf(UnavailableError);
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(SILENCE_MS * 30);
  });

  test('the operation\'s own failure is passed on as it is', async () => {
    const bound = new AnswerBound(SILENCE_MS, never);
    await expect(bound.run('items', () => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
  });
});
