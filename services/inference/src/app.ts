import { OpenCallJournal } from '@gw/billed-call';
import * as grpc from '@grpc/grpc-js';
import { createBatchingPublisher, createOutbox, type Bus } from '@gw/bus';
import { chatCatalog, loadCatalog, PriceBook } from '@gw/catalog';
import {
  grpcClientOptions, IdentitySigner, KeysApiKeyAccounts, serviceIdentityInterceptor, startService, type Logger, type RunningService,
} from '@gw/platform';
import { billingProto, inferenceProto } from '@gw/proto';
import { createChatProvider } from '@gw/providers';
import type { Store } from '@gw/store';
import { ModelDirectory } from './catalog/model-objects';
import { modelRoutes } from './catalog/model-routes';
import { startAsyncChat } from './async-chat/async-chat';
import { chatJobStore } from './async-chat/chat-job';
import { chatRoutes } from './chat/chat-routes';
import { ChatService } from './chat/chat-service';
import type { InferenceConfig } from './config';
import { nativeRoutes } from './native/native-routes';
import { NativeService } from './native/native-service';
import { NativeTranslators } from './native/native-translators';
import { CallPricing } from './grpc/call-pricing';
import { GrpcChat } from './grpc/grpc-chat';
import { inferenceGrpcHandlers } from './grpc/grpc-handlers';
import { RecordedCalls } from './grpc/recorded-calls';
import { DeploymentRouter } from './routing/deployment-router';
import { SpendGuard } from './spend/spend-guard';
import { SpendGrants } from './spend/spend-grants';
import { openCallArchiver } from '@gw/call-archive';
import { UsageRecorder } from './usage/usage-recorder';

export interface InferenceDeps {
  config: InferenceConfig;
  store: Store;
  bus: Bus;
  logger: Logger;
  env?: NodeJS.ProcessEnv;
}

export async function startInferenceService({ config, store, bus, logger, env = process.env }: InferenceDeps): Promise<RunningService> {
  return startService({
    name: 'inference', logger, host: config.BIND_HOST, httpPort: config.INFERENCE_HTTP_PORT, grpcPort: config.INFERENCE_GRPC_PORT,
    identitySecret: config.GATEWAY_IDENTITY_SECRET, bodyLimitBytes: config.BODY_LIMIT_BYTES, accessLog: config.ACCESS_LOG,
  }, async ({ health, metrics, background, publisher: publishes, client, grpcAuthenticator }) => {
    const catalog = loadCatalog(config.CATALOG_FILE, env);
    const models = new ModelDirectory(catalog);
    const providers = new Map<string, ReturnType<typeof createChatProvider>>();
    const providerFor = (kind: string) => {
      if (!providers.has(kind)) providers.set(kind, createChatProvider(kind));
      return providers.get(kind)!;
    };
    client('providers', { close: async () => { await Promise.all([...providers.values()].map((p) => p.close?.())); } });
    const priceBook = PriceBook.fromCatalog(catalog);
    const router = new DeploymentRouter(chatCatalog(catalog), providerFor, env, logger, undefined, undefined, metrics);

    // Billing's RPCs spend and read account data: every call carries inference's signed service identity.
    const billing = client('billing', new billingProto.gateway.billing.v1.BillingService(config.BILLING_GRPC_ADDR, grpc.credentials.createInsecure(),
      { ...grpcClientOptions, interceptors: [serviceIdentityInterceptor(new IdentitySigner(config.GATEWAY_IDENTITY_SECRET, 'inference'))] }));
    const spend = client('spend-grants', new SpendGrants(new SpendGuard(billing, logger, config.SPEND_DEFAULT_MAX_OUTPUT_TOKENS), priceBook, {
      maxGrantMicros: config.SPEND_GRANT_MAX_USD, callsPerGrant: config.SPEND_GRANT_CALLS, lifetimeMs: config.SPEND_GRANT_LIFETIME_MS,
    }, logger));

    // Closed after the background work (a job finishing in the grace period still records its usage): publisher first, then its outbox.
    const outbox = publishes('outbox', createOutbox({ bus, store, logger }));
    const publisher = publishes('usage-publisher', createBatchingPublisher({ outbox, logger, lingerMs: config.USAGE_LINGER_MS }));
    const journal = new OpenCallJournal({
      store, publisher, logger, serviceName: 'inference', leaseMs: config.OPEN_CALL_LEASE_MS, checkpointMs: config.OPEN_CALL_CHECKPOINT_MS, sweepMs: config.OPEN_CALL_SWEEP_MS,
    });
    await journal.ensureIndexes();
    journal.start();
    background('open-call-journal', journal);
    const usage = new UsageRecorder(publisher, journal, metrics);
    const archive = openCallArchiver(config, outbox, logger, publishes, config.USAGE_LINGER_MS);
    const chat = new ChatService({ models, router, spend, usage, archive, logger });
    const asyncChat = background('async-chat', await startAsyncChat({ store, chat, flushUsage: () => publisher.flush(), config, logger }));
    const chatJobs = chatJobStore(store);
    metrics.watchJobQueue(chatJobs.kind, () => chatJobs.queueStats());

    // The store holds the outbox and the async jobs; the bus has the outbox as its fallback.
    health
      .addCheck('store', () => store.ping())
      .addCheck('bus', () => bus.ping(), 'degraded');
    const translators = client('translators', new NativeTranslators());
    const native = new NativeService({ models, router, spend, usage, translators, archive, logger });
    const streams = { drainMs: config.ABANDONED_STREAM_DRAIN_MS, heartbeatMs: config.SSE_HEARTBEAT_MS };

    // The gRPC API: internal teams with their API key (checked by keys), services with their signed identity.
    const recorded = new RecordedCalls({
      store, logger, leaseMs: config.IDEMPOTENT_CALL_LEASE_MS, retentionMs: config.IDEMPOTENT_CALL_RETENTION_MS, sweepMs: config.IDEMPOTENT_CALL_SWEEP_MS,
    });
    await recorded.ensureIndexes();
    recorded.start();
    background('recorded-calls', recorded);
    const grpcChat = new GrpcChat({
      chat, recorded, pricing: new CallPricing(priceBook, billing),
      bodyLimitBytes: config.BODY_LIMIT_BYTES, drainMs: config.ABANDONED_STREAM_DRAIN_MS, logger,
    });
    const auth = grpcAuthenticator(client('keys', new KeysApiKeyAccounts(config.KEYS_GRPC_ADDR)));
    return {
      routes: [
        modelRoutes(models),
        chatRoutes(chat, streams),
        nativeRoutes(native, streams),
        asyncChat.router,
      ],
      grpc: [{ definition: inferenceProto.gateway.inference.v1.Inference.service, handlers: inferenceGrpcHandlers(grpcChat, auth, logger) }],
    };
  });
}
