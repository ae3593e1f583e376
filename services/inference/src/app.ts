import * as grpc from '@grpc/grpc-js';
import { createBatchingPublisher, createOutbox, type Bus } from '@gw/bus';
import { loadCatalog } from '@gw/catalog';
import { closeServer, createHttpApp, finishHttpApp, grpcClientOptions, Health, listen, Metrics, type Logger, type RunningService } from '@gw/platform';
import { billingProto, TOPICS, type BalanceChanged } from '@gw/proto';
import { createChatProvider } from '@gw/providers';
import type { Store } from '@gw/store';
import { randomUUID } from 'node:crypto';
import { ModelDirectory } from './catalog/model-objects';
import { modelRoutes } from './catalog/model-routes';
import { startAsyncChat } from './async-chat/async-chat';
import { chatRoutes } from './chat/chat-routes';
import { ChatService } from './chat/chat-service';
import type { InferenceConfig } from './config';
import { nativeRoutes } from './native/native-routes';
import { NativeService } from './native/native-service';
import { NativeTranslators } from './native/native-translators';
import { DeploymentRouter } from './routing/deployment-router';
import { SpendGuard } from './spend/spend-guard';
import { UsageRecorder } from './usage/usage-recorder';

export interface InferenceDeps {
  config: InferenceConfig;
  store: Store;
  bus: Bus;
  logger: Logger;
  env?: NodeJS.ProcessEnv;
}

export async function startInferenceService({ config, store, bus, logger, env = process.env }: InferenceDeps): Promise<RunningService> {
  const catalog = loadCatalog(config.CATALOG_FILE, env);
  const models = new ModelDirectory(catalog);
  const providers = new Map<string, ReturnType<typeof createChatProvider>>();
  const providerFor = (kind: string) => {
    if (!providers.has(kind)) providers.set(kind, createChatProvider(kind));
    return providers.get(kind)!;
  };
  const router = new DeploymentRouter(catalog, providerFor, env, logger);

  const billing = new billingProto.gateway.billing.v1.BillingService(config.BILLING_GRPC_ADDR, grpc.credentials.createInsecure(), grpcClientOptions);
  const spend = new SpendGuard(billing, logger, config.BALANCE_REFRESH_MS);
  // Every instance must see every balance change, so each one is its own consumer group, from now on.
  const balanceSub = await bus.subscribe<BalanceChanged>({
    topics: [TOPICS.balance],
    group: `inference-balance-${randomUUID()}`,
    from: 'latest',
    handleBatch: async (messages) => { for (const m of messages) spend.applyEvent(m.value); },
  });

  const outbox = createOutbox({ bus, store, logger });
  const publisher = createBatchingPublisher({ outbox, logger, lingerMs: config.USAGE_LINGER_MS });
  const chat = new ChatService({ models, router, spend, usage: new UsageRecorder(publisher), logger });
  const asyncChat = await startAsyncChat({ store, chat, spend, flushUsage: () => publisher.flush(), config, logger });

  const health = new Health().addCheck('store', () => store.ping()).addCheck('bus', () => bus.ping());
  const metrics = new Metrics('inference');
  const app = createHttpApp({ logger, health, metrics, bodyLimitBytes: config.BODY_LIMIT_BYTES, accessLog: config.ACCESS_LOG });
  app.use(modelRoutes(models));
  app.use(chatRoutes(chat, config.ABANDONED_STREAM_DRAIN_MS));
  const translators = new NativeTranslators();
  const native = new NativeService({ models, router, spend, usage: new UsageRecorder(publisher), translators, logger });
  app.use(nativeRoutes(native, config.ABANDONED_STREAM_DRAIN_MS));
  app.use(asyncChat.router);
  finishHttpApp(app, logger);
  const server = await listen(app, config.INFERENCE_HTTP_PORT);
  const httpPort = (server.address() as { port: number }).port;

  return {
    name: 'inference',
    httpPort,
    grpcPort: 0,
    health,
    stop: async () => {
      health.startDraining();
      await closeServer(server);
      // Before the publisher closes: a job finishing in the grace period still records its usage.
      await asyncChat.stop();
      await balanceSub.stop();
      await publisher.close();
      await outbox.close();
      billing.close();
      await Promise.all([...providers.values()].map((p) => p.close?.()));
      await translators.close();
    },
  };
}
