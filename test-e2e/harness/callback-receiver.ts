import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { selfSignedCert, startTlsReceiver, type TlsReceiver } from '@gw/net-guard/src/testing/tls-receiver';

export interface CallbackReceiver {
  /** The HTTPS receiver on loopback (started in `beforeAll`). */
  readonly receiver: TlsReceiver;
  /**
   * The stack environment that lets the gateway call it: callbacks and fetches may reach loopback, and the
   * webhooks service trusts the receiver's self-signed certificate (both test-only switches).
   */
  env: Record<string, string>;
}

/**
 * An HTTPS callback receiver for a describe block: its certificate file exists before the stack starts (the
 * stack's env names it), the receiver starts in `beforeAll`, and both go in `afterAll`.
 */
export function useCallbackReceiver(tag: string): CallbackReceiver {
  const caDir = mkdtempSync(path.join(tmpdir(), `gw-e2e-${tag}-ca-`));
  const caFile = path.join(caDir, 'receiver.pem');
  let receiver: TlsReceiver | undefined;
  beforeAll(async () => {
    const pems = await selfSignedCert();
    writeFileSync(caFile, pems.cert);
    receiver = await startTlsReceiver(pems);
  });
  afterAll(async () => {
    await receiver?.close();
    rmSync(caDir, { recursive: true, force: true });
  });
  return {
    get receiver() {
      if (!receiver) throw new Error('the callback receiver starts in beforeAll');
      return receiver;
    },
    env: { GATEWAY_ALLOW_LOOPBACK_CALLBACKS: 'true', WEBHOOKS_EXTRA_CA_FILE: caFile },
  };
}
