/** Video models of the e2e catalogue: one per video wire format, on the stack's simulator. */
export const E2E_VIDEO_MODEL = 'e2e/seedance-video';
export const E2E_SORA_VIDEO_MODEL = 'e2e/sora-video';
/** Its provider task ids have slashes in them (the simulator's `sim-slash-ids`). */
export const E2E_VIDEO_SLASH_MODEL = 'e2e/seedance-video-slashed';
/** USD per second of video: integer micros per second make expected charges exact. */
export const E2E_VIDEO_SECOND_PRICE = '0.02';

/** The Seedance-format provider on the simulator's port (its task API lives under `/api/v3`). */
export const videoProvider = (simulatorPort: number) => ({
  kind: 'ark', base_url: `http://127.0.0.1:${simulatorPort}/api/v3`, api_key_env: 'SIMULATOR_API_KEY', timeout_ms: 10_000,
});

const param = (type: string, options: unknown[] | null, def: unknown, min: number | null = null, max: number | null = null) => ({ type, options, default: def, min, max });

export function videoModels() {
  const model = (id: string, provider: string, providerModel: string, schema: object) => ({
    id, name: id, owned_by: 'Gateway simulator', updated_at: '2026-11-01T00:00:00Z', media: 'video',
    architecture: { input_modalities: ['text'], output_modalities: ['video'], tokenizer: null },
    parameter_schema: schema,
    deployments: [{
      id: id.replace('/', '-'), provider, provider_model: providerModel,
      price: { prompt_per_million: '0', completion_per_million: '0', per_video_second: E2E_VIDEO_SECOND_PRICE },
    }],
  });
  const seedance = {
    resolution: param('string', ['480p', '720p', '1080p'], '720p'),
    duration: param('integer', null, 5, 2, 12),
    aspect_ratio: param('string', ['16:9', '9:16', '1:1', '21:9'], '16:9'),
    generate_audio: param('boolean', null, false),
    return_last_frame: param('boolean', null, false),
    seed: param('integer', null, -1, -1, 4294967295),
    watermark: param('boolean', null, false),
  };
  return [
    model(E2E_VIDEO_MODEL, 'ark-simulator', 'seedance-1-0-pro-250528', seedance),
    model(E2E_VIDEO_SLASH_MODEL, 'ark-simulator', 'sim-slash-ids', seedance),
    model(E2E_SORA_VIDEO_MODEL, 'simulator', 'sora-2', {
      resolution: param('string', ['720p', '1080p'], '720p'),
      duration: param('integer', [4, 8, 12], 4),
      aspect_ratio: param('string', ['16:9', '9:16'], '16:9'),
    }),
  ];
}
