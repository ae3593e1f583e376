import { Pool } from 'undici';

const DEFAULT_POOL_OPTIONS: Pool.Options = {
  connections: 256,
  keepAliveTimeout: 30_000,
  keepAliveMaxTimeout: 600_000,
  connect: { timeout: 10_000 },
};

export interface UpstreamRoute {
  pool: Pool;
  /** Path (with the base URL's query, if any) to request on that pool. */
  path: string;
}

/** One keep-alive connection pool per upstream origin, created on first use and reused after. */
export class OriginPools {
  private readonly pools = new Map<string, Pool>();
  private readonly routes = new Map<string, UpstreamRoute>();

  constructor(private readonly options: Pool.Options = DEFAULT_POOL_OPTIONS) {}

  /** Resolves `baseUrl` + `endpoint` (e.g. `/chat/completions`) to a pooled origin and a request path. */
  route(baseUrl: string, endpoint: string): UpstreamRoute {
    const key = `${baseUrl}\n${endpoint}`;
    let route = this.routes.get(key);
    if (!route) {
      const url = new URL(baseUrl);
      const basePath = url.pathname.endsWith('/') ? url.pathname.slice(0, -1) : url.pathname;
      route = { pool: this.forOrigin(url.origin), path: basePath + endpoint + url.search };
      this.routes.set(key, route);
    }
    return route;
  }

  forOrigin(origin: string): Pool {
    let pool = this.pools.get(origin);
    if (!pool) {
      pool = new Pool(origin, this.options);
      this.pools.set(origin, pool);
    }
    return pool;
  }

  get size(): number {
    return this.pools.size;
  }

  async close(): Promise<void> {
    const pools = [...this.pools.values()];
    this.pools.clear();
    this.routes.clear();
    await Promise.all(pools.map((pool) => pool.close()));
  }
}
