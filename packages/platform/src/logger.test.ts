import { Writable } from 'node:stream';
import { createLogger, lazyChild } from './logger';

function sink(): { stream: Writable; lines: () => string[] } {
  const raw: string[] = [];
  return {
    stream: new Writable({ write(chunk: Buffer, _enc, done) { raw.push(chunk.toString()); done(); } }),
    lines: () => raw.join('').split('\n').filter(Boolean),
  };
}

const occurrences = (text: string, part: string) => text.split(part).length - 1;

describe('createLogger', () => {
  it('names the service once on every line, also on request children', () => {
    const out = sink();
    const logger = createLogger('billing', 'info', out.stream);
    logger.info('started');
    logger.child({ traceId: 't1' }).child({ requestId: 'br-1' }).warn('slow');
    for (const line of out.lines()) {
      expect(occurrences(line, '"service"')).toBe(1);
      expect(line).not.toContain('"name"');
      expect(JSON.parse(line).service).toBe('billing');
    }
    expect(JSON.parse(out.lines()[1])).toMatchObject({ traceId: 't1', requestId: 'br-1' });
  });

  it('a process hosting several services binds each name once', () => {
    const out = sink();
    const root = createLogger(null, 'info', out.stream);
    root.child({ service: 'keys' }).info('keys line');
    root.child({ service: 'edge' }).child({ component: 'store' }).info('edge line');
    expect(out.lines().map((l) => [occurrences(l, '"service"'), JSON.parse(l).service])).toEqual([[1, 'keys'], [1, 'edge']]);
  });

  it('redacts secrets', () => {
    const out = sink();
    createLogger('keys', 'info', out.stream).info({ headers: { authorization: 'Bearer sk-gw-v1-abc' }, secret: 'sk-gw-v1-def' }, 'x');
    expect(out.lines()[0]).not.toMatch(/sk-gw-v1-(abc|def)/);
  });
});

describe('lazyChild', () => {
  it('makes the child only when something is logged, with its bindings and the redaction', () => {
    const out = sink();
    const root = createLogger('inference', 'info', out.stream);
    const child = jest.spyOn(root, 'child');
    const unused = lazyChild(root, { traceId: 't0' });
    const used = lazyChild(root, { traceId: 't1' });
    expect(child).not.toHaveBeenCalled();
    // A child of a lazy child: made when it logs, bound to both.
    lazyChild(used, { requestId: 'br-1' }).warn({ secret: 'sk-gw-v1-abc' }, 'slow');
    used.info('done');
    // pino's children inherit from their parent, so the spy sees both: the one for t1 and the one under it.
    expect(child.mock.calls.map(([bindings]) => bindings)).toEqual([{ traceId: 't1' }, { requestId: 'br-1' }]);
    expect(unused).toBeDefined();
    const [first, second] = out.lines().map((l) => JSON.parse(l));
    expect(first).toMatchObject({ service: 'inference', traceId: 't1', requestId: 'br-1', msg: 'slow' });
    expect(JSON.stringify(first)).not.toContain('sk-gw-v1-abc');
    expect(second).toMatchObject({ traceId: 't1', msg: 'done' });
    expect(second.requestId).toBeUndefined();
  });

  it('answers the level and level checks of the child it stands for', () => {
    const lazy = lazyChild(createLogger('x', 'warn', sink().stream), { traceId: 't' });
    expect(lazy.level).toBe('warn');
    expect(lazy.isLevelEnabled('info')).toBe(false);
    lazy.level = 'debug';
    expect(lazy.isLevelEnabled('debug')).toBe(true);
  });
});
