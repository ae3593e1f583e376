import { z } from 'zod';
import { bool, engineConfig, engineEnv, loadConfig, port } from './config';

const schema = z.object({
  HTTP_PORT: port(8080),
  UPSTREAM_URL: z.string().url().default('http://127.0.0.1:1'),
  VERBOSE: bool(false),
  LIMIT: z.coerce.number().int().positive().default(10),
  ...engineEnv,
});

describe('loadConfig', () => {
  it('applies defaults and coerces the environment strings', () => {
    expect(loadConfig(schema, {})).toEqual({
      HTTP_PORT: 8080, UPSTREAM_URL: 'http://127.0.0.1:1', VERBOSE: false, LIMIT: 10,
      STORE: 'embedded', DATA_DIR: './data', STORE_OP_TIMEOUT_MS: 2000, BUS: 'embedded', BUS_NAMESPACE: '',
    });
    expect(loadConfig(schema, { HTTP_PORT: '0', VERBOSE: '1', LIMIT: '25', STORE: 'mongo', MONGO_URL: 'mongodb://db/x' }))
      .toMatchObject({ HTTP_PORT: 0, VERBOSE: true, LIMIT: 25, STORE: 'mongo', MONGO_URL: 'mongodb://db/x' });
  });

  it('names every offending variable at once', () => {
    const bad = { HTTP_PORT: '70000', UPSTREAM_URL: 'not a url', VERBOSE: 'maybe', LIMIT: '-3', STORE: 'postgres', BUS: 'rabbit' };
    let message = '';
    try {
      loadConfig(schema, bad);
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/^Invalid configuration: /);
    for (const name of Object.keys(bad)) expect(message).toContain(`${name}:`);
  });

  it('does not name variables that are fine', () => {
    expect(() => loadConfig(schema, { HTTP_PORT: 'eighty', LIMIT: '5' })).toThrow(/HTTP_PORT:/);
    expect(() => loadConfig(schema, { HTTP_PORT: 'eighty', LIMIT: '5' })).not.toThrow(/LIMIT:/);
  });
});

describe('engineConfig', () => {
  const base = { STORE: 'embedded' as const, DATA_DIR: '/var/gw', BUS: 'embedded' as const };

  it('embedded engines keep each service in its own directory', () => {
    expect(engineConfig(base, 'billing')).toEqual({ store: { engine: 'embedded', dataDir: '/var/gw/billing' }, bus: { engine: 'embedded' } });
  });

  it('distributed engines take their connection strings', () => {
    expect(engineConfig({ ...base, STORE: 'mongo', MONGO_URL: 'mongodb://m:27017/gw', BUS: 'kafka', KAFKA_BROKERS: ' k1:9092, k2:9092 ,', BUS_NAMESPACE: 'staging' }, 'keys'))
      .toEqual({ store: { engine: 'mongo', url: 'mongodb://m:27017/gw' }, bus: { engine: 'kafka', brokers: ['k1:9092', 'k2:9092'], namespace: 'staging' } });
  });

  it.each([
    ['STORE=mongo without MONGO_URL', { ...base, STORE: 'mongo' as const }, /MONGO_URL is required when STORE=mongo/],
    ['STORE=mongo with an empty MONGO_URL', { ...base, STORE: 'mongo' as const, MONGO_URL: '' }, /MONGO_URL is required when STORE=mongo/],
    ['BUS=kafka without KAFKA_BROKERS', { ...base, BUS: 'kafka' as const }, /KAFKA_BROKERS is required when BUS=kafka/],
  ])('refuses %s', (_what, env, message) => {
    expect(() => engineConfig(env, 'inference')).toThrow(message);
  });
});
