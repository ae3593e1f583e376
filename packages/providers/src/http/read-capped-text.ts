/**
 * Reads at most `maxBytes` of a body as UTF-8; an error body is only ever needed for its message. Leaving the loop
 * early drops the rest (an undici body is destroyed, a fetch body cancelled).
 */
export async function readCappedText(body: AsyncIterable<Uint8Array>, maxBytes: number): Promise<string> {
  const parts: Uint8Array[] = [];
  let size = 0;
  for await (const part of body) {
    parts.push(part);
    size += part.length;
    if (size >= maxBytes) break;
  }
  return Buffer.concat(parts).subarray(0, maxBytes).toString('utf8');
}
