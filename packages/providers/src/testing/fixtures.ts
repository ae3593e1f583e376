// Test-only: the simulator is this package's upstream in tests; imported by path to keep it out of the runtime deps.
import type { SimulatorFixture } from '../../../simulators/src';

/**
 * Builders of recorded answers for a simulator: a JSON answer of any status, and a 200 event stream, each with
 * the headers the wire format sends (`extra` headers and fields win).
 */
export function fixtureBuilders(headers: { json: Record<string, string>; stream?: Record<string, string> }) {
  return {
    json: (status: number, body: unknown, extra: Record<string, string> = {}): SimulatorFixture => ({
      status,
      headers: { ...headers.json, ...extra },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    }),
    stream: (body: string, extra: Partial<SimulatorFixture> = {}): SimulatorFixture => ({
      status: 200,
      ...(headers.stream ? { headers: { ...headers.stream } } : {}),
      body,
      ...extra,
    }),
  };
}
