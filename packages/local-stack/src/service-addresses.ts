/**
 * The ports a stack of all the services listens on, and the environment that tells each service where it
 * listens and where it calls the others: one list for every place that starts a whole stack (the end-to-end
 * harness, the build check, the benchmarks), so a new service or port is added once.
 */
export const SERVICE_PORT_NAMES = [
  'edge', 'edgeAdmin', 'keysHttp', 'keysGrpc', 'billingHttp', 'billingGrpc', 'inferenceHttp', 'inferenceGrpc',
  'batchHttp', 'webhooksHttp', 'consoleHttp', 'mediaHttp',
] as const;

export type ServicePorts = Record<(typeof SERVICE_PORT_NAMES)[number], number>;

/** The ports in `SERVICE_PORT_NAMES` order (callers pick free ports their own way: a test's block, a random range). */
export function servicePortsFrom(ports: readonly number[]): ServicePorts {
  if (ports.length !== SERVICE_PORT_NAMES.length) throw new Error(`a stack needs ${SERVICE_PORT_NAMES.length} ports, got ${ports.length}`);
  return Object.fromEntries(SERVICE_PORT_NAMES.map((name, i) => [name, ports[i]])) as ServicePorts;
}

/** Where each service listens and where the others call it (loopback), as the services' configuration reads them. */
export function serviceAddressEnv(p: ServicePorts): NodeJS.ProcessEnv {
  const url = (port: number) => `http://127.0.0.1:${port}`;
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
    WEBHOOKS_HTTP_PORT: String(p.webhooksHttp),
    CONSOLE_HTTP_PORT: String(p.consoleHttp),
    MEDIA_HTTP_PORT: String(p.mediaHttp),
    KEYS_GRPC_ADDR: `127.0.0.1:${p.keysGrpc}`,
    BILLING_GRPC_ADDR: `127.0.0.1:${p.billingGrpc}`,
    INFERENCE_GRPC_ADDR: `127.0.0.1:${p.inferenceGrpc}`,
    KEYS_HTTP_URL: url(p.keysHttp),
    BILLING_HTTP_URL: url(p.billingHttp),
    INFERENCE_HTTP_URL: url(p.inferenceHttp),
    BATCH_HTTP_URL: url(p.batchHttp),
    WEBHOOKS_HTTP_URL: url(p.webhooksHttp),
    CONSOLE_HTTP_URL: url(p.consoleHttp),
    MEDIA_HTTP_URL: url(p.mediaHttp),
    // Signed media links lead to this stack's edge (providers fetch asset inputs there).
    MEDIA_PUBLIC_BASE_URL: url(p.edge),
  };
}
