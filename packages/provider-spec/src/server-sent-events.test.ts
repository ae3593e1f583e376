import { readServerSentEvents, ServerSentEventTooLargeError, type ServerSentEvent } from './server-sent-events';

async function* chunksOf(parts: Array<string | Uint8Array>): AsyncGenerator<Uint8Array> {
  const encoder = new TextEncoder();
  for (const part of parts) yield typeof part === 'string' ? encoder.encode(part) : part;
}

async function collect(parts: Array<string | Uint8Array>, maxEventBytes?: number): Promise<ServerSentEvent[]> {
  const events: ServerSentEvent[] = [];
  for await (const event of readServerSentEvents(chunksOf(parts), maxEventBytes)) events.push(event);
  return events;
}

/** Every way of cutting `text` into two chunks must give the same events as the whole text. */
async function expectSameForEverySplit(text: string, expected: ServerSentEvent[]): Promise<void> {
  const bytes = new TextEncoder().encode(text);
  for (let cut = 0; cut <= bytes.length; cut++) {
    expect(await collect([bytes.slice(0, cut), bytes.slice(cut)])).toEqual(expected);
  }
}

describe('readServerSentEvents', () => {
  const cases: Array<{ name: string; body: string; events: ServerSentEvent[] }> = [
    { name: 'data lines with LF', body: 'data: a\n\ndata: b\n\n', events: [{ data: 'a' }, { data: 'b' }] },
    { name: 'CRLF line endings', body: 'data: a\r\n\r\ndata: b\r\n\r\n', events: [{ data: 'a' }, { data: 'b' }] },
    { name: 'bare CR line endings', body: 'data: a\r\rdata: b\r\r', events: [{ data: 'a' }, { data: 'b' }] },
    { name: 'multi-line data joined with LF', body: 'data: line1\ndata: line2\ndata:\n\n', events: [{ data: 'line1\nline2\n' }] },
    { name: 'comments are ignored', body: ': keep-alive\n\n: ping\ndata: x\n\n', events: [{ data: 'x' }] },
    { name: 'event type and id', body: 'event: error\nid: 7\ndata: {"a":1}\n\n', events: [{ event: 'error', id: '7', data: '{"a":1}' }] },
    { name: 'only one leading space is dropped', body: 'data:  two\ndata:none\n\n', events: [{ data: ' two\nnone' }] },
    { name: 'field without colon has empty value', body: 'data\n\n', events: [{ data: '' }] },
    { name: 'event without data is not dispatched', body: 'event: ping\n\ndata: y\n\n', events: [{ data: 'y' }] },
    { name: 'event type does not leak into the next event', body: 'event: a\ndata: 1\n\ndata: 2\n\n', events: [{ event: 'a', data: '1' }, { data: '2' }] },
    { name: 'retry fields are dropped', body: 'retry: 1500\ndata: r\n\nretry: 1x\ndata: s\n\n', events: [{ data: 'r' }, { data: 's' }] },
    { name: 'a final bare CR ends the last event', body: 'data: a\r\rdata: b\n\r', events: [{ data: 'a' }, { data: 'b' }] },
    { name: 'unknown fields are ignored', body: 'foo: bar\ndata: z\n\n', events: [{ data: 'z' }] },
    { name: 'unterminated final event is discarded', body: 'data: done\n\ndata: partial\n', events: [{ data: 'done' }] },
    { name: 'leading BOM is stripped', body: '\uFEFFdata: bom\n\n', events: [{ data: 'bom' }] },
    { name: 'multi-byte UTF-8', body: 'data: héllo → 世界 🙂\n\n', events: [{ data: 'héllo → 世界 🙂' }] },
    { name: 'OpenAI terminator', body: 'data: {"x":1}\n\ndata: [DONE]\n\n', events: [{ data: '{"x":1}' }, { data: '[DONE]' }] },
  ];

  it.each(cases)('$name', async ({ body, events }) => {
    expect(await collect([body])).toEqual(events);
    await expectSameForEverySplit(body, events);
  });

  it('handles one byte per chunk', async () => {
    const body = 'event: e\r\ndata: a\r\ndata: ü\r\n\r\n: c\r\ndata: b\r\r';
    const bytes = new TextEncoder().encode(body);
    const parts = Array.from(bytes, (b) => Uint8Array.of(b));
    expect(await collect(parts)).toEqual([{ event: 'e', data: 'a\nü' }, { data: 'b' }]);
  });

  it('treats CR then LF split across chunks as one line ending', async () => {
    expect(await collect(['data: a\r', '\n\r', '\ndata: b\r\n', '\r\n'])).toEqual([{ data: 'a' }, { data: 'b' }]);
  });

  it('yields an event as soon as its chunk is in, before the body goes on', async () => {
    let endBody = () => {};
    const bodyEnded = new Promise<void>((resolve) => { endBody = resolve; });
    async function* slowBody(): AsyncGenerator<Uint8Array> {
      yield new TextEncoder().encode('data: first\n\n');
      await bodyEnded;
      yield new TextEncoder().encode('data: second\n\n');
    }
    const events = readServerSentEvents(slowBody());
    expect((await events.next()).value).toEqual({ data: 'first' });
    endBody();
    expect((await events.next()).value).toEqual({ data: 'second' });
    expect((await events.next()).done).toBe(true);
  });

  it('stops a body whose event does not end within the bound', async () => {
    const endless = ['data: ', ...Array.from({ length: 10 }, () => 'x'.repeat(1000))];
    const read = collect(endless, 5000);
    await expect(read).rejects.toBeInstanceOf(ServerSentEventTooLargeError);
    await expect(read).rejects.toThrow('An event of the stream went past 5000 bytes');
  });

  it('bounds each event, not the body: many events over the bound in all pass', async () => {
    const events = Array.from({ length: 50 }, (_, i) => `data: ${'y'.repeat(900)}${i}\n\n`);
    expect(await collect(events, 5000)).toHaveLength(50);
  });

  it('yields nothing for an empty body', async () => {
    expect(await collect([])).toEqual([]);
  });
});
