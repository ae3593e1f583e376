/**
 * The Portkey gateway (npm `@portkey-ai/gateway`, its Node server build) as a peer in the same run: its own
 * process on a free port, headless, pointed at the simulator per request with its documented headers
 * (`x-portkey-provider: openai` + `x-portkey-custom-host`). It has no accounts, keys or billing: it is a
 * pure proxy, which is what the ratio compares the gateway (with billing on) against.
 */
import * as path from 'node:path';
import { startChild, type Child } from './children';
import { HOST, freePorts } from './net';

export const PORTKEY_VERSION: string = (require('@portkey-ai/gateway/package.json') as { version: string }).version;

export interface Portkey {
  child: Child;
  chatUrl: string;
  /** Headers that route a request through Portkey to the OpenAI-format upstream at `upstreamBaseUrl`. */
  headers: Record<string, string>;
}

export async function startPortkey(upstreamBaseUrl: string, upstreamKey: string, env: NodeJS.ProcessEnv): Promise<Portkey> {
  const [port] = await freePorts(1);
  const entry = path.join(path.dirname(require.resolve('@portkey-ai/gateway/package.json')), 'build', 'start-server.js');
  // It listens on every interface (no host option); the benchmark only ever calls it on loopback.
  const child = startChild('portkey', [entry, `--port=${port}`, '--headless'], env);
  return {
    child,
    chatUrl: `http://${HOST}:${port}/v1/chat/completions`,
    headers: {
      'x-portkey-provider': 'openai',
      'x-portkey-custom-host': upstreamBaseUrl,
      authorization: `Bearer ${upstreamKey}`,
    },
  };
}
