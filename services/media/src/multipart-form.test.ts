import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { toGatewayError } from '@gw/platform';
import { readForm } from './multipart-form';

const LIMITS = { maxFileBytes: 1024, maxFiles: 1 };
const BOUNDARY = 'b0undary';

/** A server that answers each request with what `readForm` made of it: the form, or the error's status and code. */
async function formServer(): Promise<{ url: string; port: number; outcomes: string[]; close: () => Promise<void> }> {
  const outcomes: string[] = [];
  const server: Server = createServer((req, res) => {
    readForm(req, LIMITS).then(
      (form) => {
        outcomes.push('read');
        res.end(JSON.stringify({ fields: form.fields, files: Object.fromEntries(Object.entries(form.files).map(([k, fs]) => [k, fs.map((f) => f.bytes.toString())])) }));
      },
      (err: unknown) => {
        const e = toGatewayError(err);
        outcomes.push(e.code);
        res.statusCode = e.status;
        res.end(JSON.stringify({ code: e.code, param: e.param }));
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`, port, outcomes,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const part = (name: string, value: string, filename?: string) =>
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"${filename ? `; filename="${filename}"\r\nContent-Type: audio/wav` : ''}\r\n\r\n${value}`;

describe('readForm', () => {
  let server: Awaited<ReturnType<typeof formServer>>;
  beforeAll(async () => { server = await formServer(); });
  afterAll(async () => server.close());

  const send = async (body: string) => {
    const res = await fetch(server.url, { method: 'POST', body, headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` } });
    return { status: res.status, body: await res.json() };
  };

  it('reads fields and files of a well-formed form', async () => {
    const res = await send(`${part('model', 'm')}\r\n${part('file', 'RIFF', 'a.wav')}\r\n--${BOUNDARY}--\r\n`);
    expect(res).toEqual({ status: 200, body: { fields: { model: 'm' }, files: { file: ['RIFF'] } } });
    expect((await send(`${part('file', 'RIFF', `${'n'.repeat(251)}.wav`)}\r\n--${BOUNDARY}--\r\n`)).status).toBe(200);
  });

  // Before, busboy's error on the unfinished file part had no listener: one such request ended the process.
  it.each([
    ['inside a file part', `${part('model', 'm')}\r\n${part('file', 'RIFF', 'a.wav')}`],
    ['inside a text field', part('model', 'm')],
    ['after a part\'s headers', `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\n`],
  ])('answers a form cut short %s with a 400 invalid_multipart, and serves on', async (_where, body) => {
    expect(await send(body)).toEqual({ status: 400, body: { code: 'invalid_multipart', param: null } });
    expect((await send(`${part('model', 'm')}\r\n--${BOUNDARY}--\r\n`)).status).toBe(200);
  });

  // Before, the form never ended: the read waited forever, holding what had arrived.
  it('settles when the client leaves in the middle of a file', async () => {
    const before = server.outcomes.length;
    const body = `${part('model', 'm')}\r\n${part('file', 'RIFF', 'a.wav')}`;
    await new Promise<void>((resolve, reject) => {
      const socket = connect(server.port, '127.0.0.1', () => {
        socket.write(`POST / HTTP/1.1\r\nhost: x\r\ncontent-type: multipart/form-data; boundary=${BOUNDARY}\r\ncontent-length: ${body.length + 100}\r\n\r\n${body}`);
        setTimeout(() => { socket.destroy(); resolve(); }, 50);
      });
      socket.on('error', reject);
    });
    const deadline = Date.now() + 5_000;
    while (server.outcomes.length === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(server.outcomes.slice(before)).toEqual(['invalid_multipart']);
  });

  // Before, busboy's cut value was read as the whole one, and fields past the count were dropped unseen.
  it.each([
    ['a field over 64 KiB', `${part('prompt', 'x'.repeat(64 * 1024 + 1))}\r\n--${BOUNDARY}--\r\n`, 'field_too_long', 'prompt'],
    ['more than 64 fields', `${Array.from({ length: 65 }, (_, i) => part(`f${i}`, 'v')).join('\r\n')}\r\n--${BOUNDARY}--\r\n`, 'too_many_fields', null],
    // The name goes on to the provider's own form: a file system's bound, not whatever the part header holds.
    ['a file name of 256 characters', `${part('file', 'RIFF', `${'n'.repeat(252)}.wav`)}\r\n--${BOUNDARY}--\r\n`, 'invalid_value', 'file'],
  ])('refuses %s with a 400 naming it', async (_what, body, code, param) => {
    expect(await send(body)).toEqual({ status: 400, body: { code, param } });
  });

  // Before, a file part named __proto__ pushed onto Object.prototype and threw in a stream handler, ending the
  // process; a field named so set the form's prototype, and one named constructor held Object's function.
  it('keeps parts named like Object.prototype\'s members as the parts they are, and serves on', async () => {
    const body = `${part('constructor', 'c')}\r\n${part('__proto__', 'p')}\r\n${part('__proto__', 'RIFF', 'a.wav')}\r\n--${BOUNDARY}--\r\n`;
    const res = await send(body);
    expect(res.status).toBe(200);
    const { fields, files } = res.body as { fields: object; files: object };
    expect(Object.entries(fields)).toEqual([['constructor', 'c'], ['__proto__', 'p']]);
    expect(Object.entries(files)).toEqual([['__proto__', ['RIFF']]]);
    expect((await send(`${part('model', 'm')}\r\n--${BOUNDARY}--\r\n`)).status).toBe(200);
  });

  it('refuses a file over its bound with a 413', async () => {
    const res = await send(`${part('file', 'x'.repeat(LIMITS.maxFileBytes + 1), 'a.wav')}\r\n--${BOUNDARY}--\r\n`);
    expect(res.status).toBe(413);
  });
});
