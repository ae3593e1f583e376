import { Writable } from 'node:stream';
import { createLogger } from './logger';

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
