/** The floor path: `bench/passthrough-proxy.ts` (a bare Node pass-through, no gateway work) as its own process. */
import * as path from 'node:path';
import { ROOT, startChild, type Child } from './children';
import { HOST, freePorts } from './net';

export interface Passthrough {
  child: Child;
  origin: string;
  chatUrl: string;
}

export async function startPassthrough(upstreamOrigin: string, providerModel: string, upstreamKey: string, env: NodeJS.ProcessEnv): Promise<Passthrough> {
  const [port] = await freePorts(1);
  const child = startChild('passthrough', ['--import', 'tsx', '--import', path.join(ROOT, 'bench/exit-with-parent.ts'),
    path.join(ROOT, 'bench/passthrough-proxy.ts'), '--port', String(port), '--host', HOST,
    '--upstream', upstreamOrigin, '--model', providerModel, '--key', upstreamKey], env, true);
  const origin = `http://${HOST}:${port}`;
  return { child, origin, chatUrl: `${origin}/v1/chat/completions` };
}
