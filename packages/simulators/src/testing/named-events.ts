// Test-only: never imported by the simulators themselves.

/**
 * Test-side reader of a simulator stream whose events are all named after their data's `type` (Anthropic
 * messages, OpenAI responses): checks every `event: ...\ndata: ...\n\n` block is well formed on the way.
 */
export function namedEvents(text: string): Array<{ event: string; data: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  return text
    .split('\n\n')
    .filter((block) => block.length > 0)
    .map((block) => {
      const [eventLine, dataLine] = block.split('\n');
      expect(eventLine.startsWith('event: ')).toBe(true);
      expect(dataLine.startsWith('data: ')).toBe(true);
      const data = JSON.parse(dataLine.slice('data: '.length));
      expect(data.type).toBe(eventLine.slice('event: '.length));
      return { event: data.type, data };
    });
}
