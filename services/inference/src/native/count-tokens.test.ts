import { catalogSchema } from '@gw/catalog';
import { createLogger, InputError, NotFoundError, type Identity } from '@gw/platform';
import type { NativeApiTranslator } from '@gw/provider-spec';
import { createChatProvider, createNativeTranslator } from '@gw/providers';
import { startAnthropicSimulator, type AnthropicSimulator } from '@gw/simulators';
import { ModelDirectory } from '../catalog/model-objects';
import { DeploymentRouter } from '../routing/deployment-router';
import { estimatePromptTokens } from '../validation/prompt-estimate';
import { NativeService } from './native-service';
import { NativeTranslators } from './native-translators';
import { CallArchiver } from '@gw/call-archive';

const IDENTITY: Identity = { accountId: 'acct_count', keyHash: 'cd'.repeat(32), isManagement: false, keyLimitMicros: null, keyLimitReset: null };
const logger = createLogger('count-tokens-test', 'silent');
const price = { prompt_per_million: '1', completion_per_million: '2' };
const prompt = { system: 'be brief', messages: [{ role: 'user', content: 'count the tokens of this prompt' }] };

function catalogFor(anthropic: AnthropicSimulator) {
  const model = (id: string, provider: string, providerModel: string, promptLimit: number | null = null) => ({
    id, name: id, owned_by: 'tests', updated_at: '2026-01-01T00:00:00Z',
    architecture: { input_modalities: ['text'], output_modalities: ['text'] },
    per_request_limits: { prompt_tokens: promptLimit, completion_tokens: 100 },
    deployments: [{ id: `${id}-0`, provider, provider_model: providerModel, price }],
  });
  return catalogSchema.parse({
    providers: {
      anthropic: { kind: 'anthropic', base_url: anthropic.baseUrl, api_key_env: 'SIM_KEY', timeout_ms: 5_000 },
      openai: { kind: 'openai-compatible', base_url: 'http://127.0.0.1:9/v1', api_key_env: 'SIM_KEY', timeout_ms: 5_000 },
    },
    models: [
      model('test/claude', 'anthropic', 'claude-echo'),
      model('test/tiny', 'anthropic', 'claude-echo', 3),
      model('test/echo', 'openai', 'gpt-4o-mini'),
    ],
  });
}

/** A messages translator of a format with no count endpoint: everything but `countTokens`. */
function withoutCountEndpoint(api: Parameters<typeof createNativeTranslator>[0], kind: string): NativeApiTranslator | null {
  const t = createNativeTranslator(api, kind);
  return t && { api: t.api, call: (...a) => t.call(...a), stream: (...a) => t.stream(...a), close: () => t.close?.() ?? Promise.resolve() };
}

describe('NativeService.countTokens', () => {
  let anthropic: AnthropicSimulator;
  const translatorSets: NativeTranslators[] = [];
  const spent: string[] = [];

  beforeAll(async () => { anthropic = await startAnthropicSimulator(); });
  afterAll(async () => {
    await Promise.all(translatorSets.map((t) => t.close()));
    await anthropic.close();
  });

  function service(translators: NativeTranslators): NativeService {
    translatorSets.push(translators);
    const catalog = catalogFor(anthropic);
    return new NativeService({
      models: new ModelDirectory(catalog), translators, logger, archive: CallArchiver.off(logger),
      router: new DeploymentRouter(catalog, createChatProvider, { SIM_KEY: 'k' }, logger),
      spend: {
        admit: async () => { spent.push('reserve'); return { holdId: 'h', micros: 1, grant: true }; },
        reserve: async () => { spent.push('reserve'); return { holdId: 'h', micros: 1, grant: false }; },
        release: () => { spent.push('release'); },
        giveBack: () => { spent.push('release'); },
      },
      usage: { record: () => spent.push('usage'), openStream: () => { throw new Error('no stream'); } } as never,
    });
  }
  const call = (body: object) => ({ body, headers: { 'anthropic-version': '2023-06-01' }, identity: IDENTITY, traceId: 't' });

  it("returns the provider's count (the input tokens a message with that prompt reports), neither held nor billed", async () => {
    const native = service(new NativeTranslators());
    const counted = await native.countTokens(call({ model: 'test/claude', ...prompt }));
    const answered = await native.call({ ...call({ model: 'test/claude', max_tokens: 20, ...prompt }), api: 'messages' });
    expect(counted).toEqual({ input_tokens: (answered.response.body as { usage: { input_tokens: number } }).usage.input_tokens });
    expect(spent).toEqual(['reserve', 'usage']); // the message call's, none of the count's
  });

  it('answers the documented estimate where no route has a count endpoint', async () => {
    const native = service(new NativeTranslators(withoutCountEndpoint));
    const estimate = estimatePromptTokens([prompt.system, prompt.messages], prompt.messages.length);
    expect(await native.countTokens(call({ model: 'test/claude', ...prompt }))).toEqual({ input_tokens: estimate });
  });

  it.each([
    ['no messages', { model: 'test/claude', messages: [] }, InputError, 'messages'],
    ['a bad role', { model: 'test/claude', messages: [{ role: 'system', content: 'x' }] }, InputError, 'messages[0].role'],
    ['a max_tokens that is not a positive integer', { model: 'test/claude', max_tokens: 0, ...prompt }, InputError, 'max_tokens'],
    ['a model not served through the messages API', { model: 'test/echo', ...prompt }, InputError, 'model'],
    ['an unknown model', { model: 'test/nope', ...prompt }, NotFoundError, 'model'],
    ['a prompt over the model prompt limit', { model: 'test/tiny', ...prompt }, InputError, 'messages'],
  ])('refuses %s naming the param, without calling the provider', async (_name, body, type, param) => {
    const native = service(new NativeTranslators());
    const before = anthropic.requests;
    const err = await native.countTokens(call(body)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(type);
    expect(err).toMatchObject({ param });
    expect(anthropic.requests).toBe(before);
  });
});
