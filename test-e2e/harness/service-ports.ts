import { freePort } from './ports';

/** A free loopback port for every port a stack of all the services listens on. */
export async function freeServicePorts() {
  const [edge, edgeAdmin, keysHttp, keysGrpc, billingHttp, billingGrpc, inferenceHttp, inferenceGrpc, batchHttp, webhooksHttp, consoleHttp, mediaHttp] = await Promise.all(Array.from({ length: 12 }, () => freePort()));
  return { edge, edgeAdmin, keysHttp, keysGrpc, billingHttp, billingGrpc, inferenceHttp, inferenceGrpc, batchHttp, webhooksHttp, consoleHttp, mediaHttp };
}

export type ServicePorts = Awaited<ReturnType<typeof freeServicePorts>>;

/** Where each service listens and where the others call it, as the services' configuration reads them. */
export function serviceAddressEnv(p: ServicePorts): NodeJS.ProcessEnv {
  return {
    EDGE_PORT: String(p.edge),
    EDGE_ADMIN_PORT: String(p.edgeAdmin),
    KEYS_HTTP_PORT: String(p.keysHttp),
    KEYS_GRPC_PORT: String(p.keysGrpc),
    BILLING_HTTP_PORT: String(p.billingHttp),
    BILLING_GRPC_PORT: String(p.billingGrpc),
    INFERENCE_HTTP_PORT: String(p.inferenceHttp),
    INFERENCE_GRPC_PORT: String(p.inferenceGrpc),
    BATCH_HTTP_PORT: String(p.batchHttp),
    INFERENCE_GRPC_ADDR: `127.0.0.1:${p.inferenceGrpc}`,
    BATCH_HTTP_URL: `http://127.0.0.1:${p.batchHttp}`,
    WEBHOOKS_HTTP_PORT: String(p.webhooksHttp),
    KEYS_GRPC_ADDR: `127.0.0.1:${p.keysGrpc}`,
    BILLING_GRPC_ADDR: `127.0.0.1:${p.billingGrpc}`,
    KEYS_HTTP_URL: `http://127.0.0.1:${p.keysHttp}`,
    BILLING_HTTP_URL: `http://127.0.0.1:${p.billingHttp}`,
    INFERENCE_HTTP_URL: `http://127.0.0.1:${p.inferenceHttp}`,
    WEBHOOKS_HTTP_URL: `http://127.0.0.1:${p.webhooksHttp}`,
    CONSOLE_HTTP_PORT: String(p.consoleHttp),
    CONSOLE_HTTP_URL: `http://127.0.0.1:${p.consoleHttp}`,
    MEDIA_HTTP_PORT: String(p.mediaHttp),
    MEDIA_HTTP_URL: `http://127.0.0.1:${p.mediaHttp}`,
    // Signed media links lead to this stack's edge (providers fetch asset inputs there).
    MEDIA_PUBLIC_BASE_URL: `http://127.0.0.1:${p.edge}`,
  };
}
