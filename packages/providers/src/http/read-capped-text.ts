/** Reads at most `maxBytes` of a body as UTF-8; an error body is only ever needed for its message. */
export async function readCappedText(body: AsyncIterable<Uint8Array> & { destroy(): unknown }, maxBytes: number): Promise<string> {
  const parts: Uint8Array[] = [];
  let size = 0;
  for await (const part of body) {
    parts.push(part);
    size += part.length;
    if (size >= maxBytes) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(parts).subarray(0, maxBytes).toString('utf8');
}
