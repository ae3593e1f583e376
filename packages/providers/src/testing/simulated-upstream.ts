// Test-only: imported by the provider tests, never by the providers themselves.
import type { ChatTarget } from '@gw/provider-spec';
import { OriginPools } from '../http/origin-pools';

export interface SimulatorHandle {
  baseUrl: string;
  close(): Promise<void>;
}

/** A simulator and the provider (or native translator) under test, calling it on its own connection pools. */
export interface SimulatedUpstream<S extends SimulatorHandle, P> {
  sim: S;
  pools: OriginPools;
  /** The chat provider or native translator under test. */
  provider: P;
  /** The simulator's base URL with the given credential and model, and a 2 s timeout. */
  target: ChatTarget;
  /** `target` with another provider model, and any other overrides. */
  withModel(providerModel: string, overrides?: Partial<ChatTarget>): ChatTarget;
  /** Another provider of the same kind, on pools of the test's own. */
  create(pools: OriginPools): P;
}

/**
 * Starts the simulator and creates the provider before the tests of the enclosing describe block, and closes
 * both after them. The fields are set once beforeAll has run: read them inside tests, not at describe time.
 */
export function useSimulatedUpstream<S extends SimulatorHandle, P extends { close?(): Promise<void> }>(setup: {
  start: () => Promise<S>;
  create: (pools: OriginPools) => P;
  target: { apiKey: string; providerModel: string };
}): SimulatedUpstream<S, P> {
  const up = {
    withModel: (providerModel: string, overrides: Partial<ChatTarget> = {}): ChatTarget => ({ ...up.target, providerModel, ...overrides }),
    create: setup.create,
  } as SimulatedUpstream<S, P>;
  beforeAll(async () => {
    up.sim = await setup.start();
    up.pools = new OriginPools();
    up.provider = setup.create(up.pools);
    up.target = { baseUrl: up.sim.baseUrl, apiKey: setup.target.apiKey, providerModel: setup.target.providerModel, timeoutMs: 2_000 };
  });
  afterAll(async () => {
    await up.provider.close?.();
    await up.sim.close();
  });
  return up;
}
